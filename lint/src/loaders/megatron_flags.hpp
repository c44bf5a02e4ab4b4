// The Megatron-LM (and torchrun) flags the linter understands, and the Bridge keys they set.
#pragma once

#include <span>
#include <string_view>

namespace hcp::lint {

struct FlagSpec {
  enum class Arity { one, many, store_true };
  std::string_view flag;  // "--context-parallel-size"
  std::string_view key;   // "model.context_parallel_size"
  Arity arity;
  bool always_list;       // nargs='+' flags whose Bridge value is a list even with one entry
  bool comma_list = false;  // a type that splits one word at commas (--window-size 127,0)
};

std::span<const FlagSpec> megatron_flags();
const FlagSpec* find_flag(std::string_view flag);

}  // namespace hcp::lint

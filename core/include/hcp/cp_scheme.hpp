// The CP schemes by name (Transformer Engine's cp_comm_type) and the rule that splits heads over an a2a: what the
// tools (lint, plan, cost terms) and the attention runtime both speak, kept here so the tools need no runtime.
#pragma once

#include <cstdint>
#include <string_view>

namespace hcp {

enum class CpComm : int { p2p = 0, a2a = 1, a2a_p2p = 2, all_gather = 3 };

std::string_view cp_comm_name(CpComm comm);  // "p2p", "a2a", "a2a+p2p", "all_gather"
// Throws Error{invalid_argument} naming the accepted values.
CpComm parse_cp_comm(std::string_view name);

// KV heads over an a2a of `a` ranks: 1 when a divides kv_heads; a / kv_heads when kv_heads divides a (each KV head
// copied that many times, as DeepSpeed and yunchang do for GQA/MQA under Ulysses); 0 when neither (no split).
inline int64_t kv_replication(int64_t kv_heads, int64_t a) {
  if (kv_heads % a == 0) return 1;
  return a % kv_heads == 0 ? a / kv_heads : 0;
}

}  // namespace hcp

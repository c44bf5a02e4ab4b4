// A training configuration flattened to dotted Megatron-Bridge keys ("model.context_parallel_size"), whatever the
// input format. Later settings replace earlier ones (an override on top of a file).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hcp/lint/value.hpp"

namespace hcp::lint {

struct Setting {
  std::string key;      // canonical dotted key
  std::string spelled;  // as written: "model.context_parallel_size", "--context-parallel-size", "CP override"
  Location key_loc;     // where the key (or flag) is
  Value value;          // with the value's own location; null when unknown
  Provenance provenance = Provenance::literal;
  std::string why;      // for defaulted and unknown values: where the value would come from
  bool implied = false; // a framework's own default the input does not write (verl's trainer.nnodes 1); `why` says
};

class ConfigTree {
 public:
  void set(Setting setting);
  void remove(const std::string& key);
  const Setting* find(const std::string& key) const;
  const std::vector<std::string>& keys_in_order() const { return order_; }
  bool empty() const { return settings_.empty(); }

 private:
  std::map<std::string, Setting> settings_;
  std::vector<std::string> order_;
};

}  // namespace hcp::lint

// Small facts shared by several rules.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hcp/lint/config_tree.hpp"
#include "hcp/lint/facts.hpp"

namespace hcp::lint {

inline constexpr const char* kA2aP2p = "a2a+p2p";

// "[2, 8]"
std::string list_text(const std::vector<int64_t>& v);

// The size of the all-to-all group: cp for pure a2a, level 0 for a2a+p2p (when the sizes are set).
struct A2aLevel {
  int64_t size;
  std::string what;  // "context_parallel_size" or "hierarchical level 0"
};
std::optional<A2aLevel> a2a_level(const Facts& f);

// Transformer Engine versions: "2.4.0", "1.12", "2.5.0.dev0+abc". Null when unparseable.
std::optional<std::vector<int>> parse_version(const std::string& text);
int compare_versions(const std::vector<int>& a, const std::vector<int>& b);  // <0, 0, >0

// A setting the input writes with a value this file knows (not unknown, not null); null otherwise. Rules that read
// a field an unset key leaves to a recipe check only what is written.
const Setting* written(const ConfigTree& tree, const char* key);
// A written boolean that is true (YAML true, a flag, "true"/"True").
bool is_true(const Setting* s);
// A written boolean that is false, or no setting at all (Megatron-LM's default for its store_true flags).
bool false_or_unset(const Setting* s);
// The text of a written string; "" otherwise.
std::string string_value(const Setting* s);

// Whether a GPU name is Blackwell or newer (B100, B200, GB200, B300, RTX PRO 6000 Blackwell, ...).
bool is_blackwell_or_newer(const std::string& gpu);

}  // namespace hcp::lint

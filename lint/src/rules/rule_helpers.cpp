#include "rule_helpers.hpp"

#include <algorithm>
#include <cctype>

namespace hcp::lint {

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::optional<A2aLevel> a2a_level(const Facts& f) {
  if (f.uses_comm(kA2aP2p) && f.hcp_sizes.known() && !f.hcp_sizes.value->empty()) {
    return A2aLevel{f.hcp_sizes.value->front(), "hierarchical level 0 (a2a)"};
  }
  if (f.uses_comm("a2a")) return A2aLevel{f.cp_size(), "context_parallel_size (a2a)"};
  return std::nullopt;
}

std::optional<std::vector<int>> parse_version(const std::string& text) {
  std::vector<int> parts;
  size_t i = 0;
  if (i < text.size() && (text[i] == 'v' || text[i] == 'V')) ++i;
  while (i < text.size() && parts.size() < 3) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) break;
    int v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      v = v * 10 + (text[i] - '0');
      if (v > 1000000) return std::nullopt;
      ++i;
    }
    parts.push_back(v);
    if (i < text.size() && text[i] == '.') ++i;
    else break;
  }
  if (parts.empty()) return std::nullopt;
  while (parts.size() < 3) parts.push_back(0);
  return parts;
}

int compare_versions(const std::vector<int>& a, const std::vector<int>& b) {
  for (size_t i = 0; i < 3; ++i) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
}  // namespace

bool is_blackwell_or_newer(const std::string& gpu) {
  const std::string g = lower(gpu);
  for (const char* marker : {"b100", "b200", "b300", "gb200", "gb300", "blackwell", "rubin", "rtx 50", "rtx pro 6000"}) {
    if (g.find(marker) != std::string::npos) return true;
  }
  return false;
}

const Setting* written(const ConfigTree& tree, const char* key) {
  const Setting* s = tree.find(key);
  return s && s->provenance != Provenance::unknown && s->value.kind != Value::Kind::null ? s : nullptr;
}

bool is_true(const Setting* s) {
  if (!s || s->provenance == Provenance::unknown) return false;
  return (s->value.kind == Value::Kind::boolean && s->value.boolean) || s->value.text == "true" || s->value.text == "True";
}

bool false_or_unset(const Setting* s) {
  if (!s) return true;
  if (s->provenance == Provenance::unknown) return false;
  return (s->value.kind == Value::Kind::boolean && !s->value.boolean) || s->value.text == "false" ||
         s->value.text == "False";
}

std::string string_value(const Setting* s) {
  return s && s->provenance != Provenance::unknown && s->value.kind == Value::Kind::string ? s->value.text : "";
}

}  // namespace hcp::lint

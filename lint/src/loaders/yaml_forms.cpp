#include "yaml_forms.hpp"

#include <algorithm>
#include <vector>

namespace hcp::lint {
namespace {

// ConfigContainer's sections (Megatron-Bridge src/megatron/bridge/training/config.py), plus hcp's own [cluster]
// and [env].
constexpr std::string_view kBridgeSections[] = {
    "model",     "train",      "optimizer",     "scheduler",  "checkpoint",       "dist",
    "logger",    "dataset",    "rng",           "ddp",        "peft",             "tokenizer",
    "profiling", "mixed_precision", "rerun_state_machine", "comm_overlap", "ft",  "straggler",
    "nvrx_straggler", "inprocess_restart", "validation", "tensor_inspect", "cluster", "env",
};

// Top-level keys: lines that start a mapping entry in column 0. A `- ` in column 0 first means a list document.
std::vector<std::string> top_level_keys(std::string_view text, bool* list_first) {
  std::vector<std::string> keys;
  *list_first = false;
  size_t pos = 0;
  while (pos < text.size() && keys.size() < 256) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line.rfind("---", 0) == 0 ||
        line.rfind("...", 0) == 0 || line[0] == '%') {
      continue;
    }
    if (line[0] == '-' && (line.size() == 1 || line[1] == ' ')) {
      if (keys.empty()) *list_first = true;
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front()) {
      key = key.substr(1, key.size() - 2);
    }
    keys.emplace_back(key);
  }
  return keys;
}

bool has(const std::vector<std::string>& keys, std::string_view k) {
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

}  // namespace

bool is_bridge_section(std::string_view k) {
  return std::find(std::begin(kBridgeSections), std::end(kBridgeSections), k) != std::end(kBridgeSections);
}

YamlClass classify_yaml(std::string_view text) {
  bool list_first = false;
  const std::vector<std::string> keys = top_level_keys(text, &list_first);
  if (list_first) return {YamlForm::other, "a YAML list, not a training configuration"};
  if (keys.empty()) return {YamlForm::bridge, ""};  // empty or flow style: the Bridge reader decides
  const bool model_args = std::any_of(keys.begin(), keys.end(), [](const std::string& k) {
    return k == "MODEL_ARGS" || k.rfind("MODEL_ARGS_", 0) == 0;
  });
  if (model_args || (has(keys, "ENV_VARS") && has(keys, "TEST_TYPE"))) return {YamlForm::megatron_functional_test, ""};
  if (has(keys, "trainer") && has(keys, "model")) return {YamlForm::nemo_launcher, ""};
  if (has(keys, "language_model") && has(keys, "model_parallel")) return {YamlForm::megatron_yaml_cfg, ""};
  if (std::all_of(keys.begin(), keys.end(), [](const std::string& k) { return is_bridge_section(k); })) {
    return {YamlForm::bridge, ""};
  }
  std::string listed;
  for (size_t i = 0; i < keys.size() && i < 4; ++i) listed += (i ? ", " : "") + keys[i];
  if (keys.size() > 4) listed += ", ...";
  std::string what = "a YAML file of none of the training-config forms hcp-lint reads (top-level keys: " + listed + ")";
  return {YamlForm::other, what};
}

}  // namespace hcp::lint

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

// Where the first content is (past blank lines, comments, directives and the "---" document start), or npos.
size_t first_content(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool line_start = i == 0 || text[i - 1] == '\n';
    if (c == '#' || (line_start && (c == '%' || text.substr(i, 4) == "---\n" || text.substr(i, 4) == "--- "))) {
      i = text.find('\n', i);
      if (i == std::string_view::npos) return i;
    } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      return i;
    }
    ++i;
  }
  return std::string_view::npos;
}

// The keys of the flow mapping that opens at `open` (JSON, or YAML written as JSON), as written; what nests under
// them is skipped.
std::vector<std::string> flow_mapping_keys(std::string_view text, size_t open) {
  std::vector<std::string> keys;
  int depth = 0;
  bool expect_key = false;
  for (size_t i = open; i < text.size() && keys.size() < 256; ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      std::string quoted;
      size_t j = i + 1;
      for (; j < text.size() && text[j] != c; ++j) {
        if (c == '"' && text[j] == '\\' && j + 1 < text.size()) ++j;
        quoted += text[j];
      }
      if (depth == 1 && expect_key) keys.push_back(std::move(quoted));
      expect_key = false;
      i = j;
    } else if (c == '{' || c == '[') {
      expect_key = ++depth == 1;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;
    } else if (depth == 1 && c == ',') {
      expect_key = true;
    } else if (depth == 1 && expect_key && c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      const size_t end = text.find_first_of(":,}", i);
      std::string_view plain = text.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
      while (!plain.empty() && (plain.back() == ' ' || plain.back() == '\t')) plain.remove_suffix(1);
      keys.emplace_back(plain);
      expect_key = false;
      i = (end == std::string_view::npos ? text.size() : end) - 1;
    }
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
  // JSON, or YAML written as JSON (DeepSpeed's configs), is claimed as Bridge only with Bridge's sections, like
  // the block style: such files passed unchecked and were linted as Bridge trees.
  const size_t at = first_content(text);
  if (at == std::string_view::npos) return {YamlForm::bridge, ""};  // empty: nothing to lint
  if (text[at] == '[') return {YamlForm::other, "a YAML list, not a training configuration"};
  if (text[at] == '{') {
    const std::vector<std::string> flow = flow_mapping_keys(text, at);
    if (std::all_of(flow.begin(), flow.end(), [](const std::string& k) { return is_bridge_section(k); }))
      return {YamlForm::bridge, ""};
    return {YamlForm::other, unknown_form_reason("JSON or JSON-style YAML", flow)};
  }
  bool list_first = false;
  const std::vector<std::string> keys = top_level_keys(text, &list_first);
  if (list_first) return {YamlForm::other, "a YAML list, not a training configuration"};
  if (keys.empty()) return {YamlForm::bridge, ""};  // a scalar or an odd document: the Bridge reader decides
  const bool model_args = std::any_of(keys.begin(), keys.end(), [](const std::string& k) {
    return k == "MODEL_ARGS" || k.rfind("MODEL_ARGS_", 0) == 0;
  });
  if (model_args || (has(keys, "ENV_VARS") && has(keys, "TEST_TYPE"))) return {YamlForm::megatron_functional_test, ""};
  // verl: its own section name, or a Hydra defaults list built on one of verl's trainer configs.
  if (has(keys, "actor_rollout_ref") ||
      (has(keys, "defaults") && (text.find("- ppo_megatron_trainer") != std::string_view::npos ||
                                 text.find("- ppo_trainer") != std::string_view::npos))) {
    return {YamlForm::verl, ""};
  }
  // FlagScale: an experiment naming its task (backend, entrypoint) and runner.
  if (has(keys, "experiment") && (has(keys, "defaults") || has(keys, "train")) &&
      text.find("task:") != std::string_view::npos && text.find("runner:") != std::string_view::npos) {
    return {YamlForm::flagscale, ""};
  }
  // Primus: an experiment's modules, each naming its framework.
  if (has(keys, "modules") && text.find("framework:") != std::string_view::npos &&
      text.find("trainer:") != std::string_view::npos) {
    return {YamlForm::primus, ""};
  }
  // AReaL: an actor (beside a rollout, or AReaL's experiment_name / trial_name) with an allocation string
  // (backend: "megatron:d4p1t1", or the older top-level allocation_mode).
  if (has(keys, "actor") && (has(keys, "rollout") || (has(keys, "experiment_name") && has(keys, "trial_name"))) &&
      (text.find("backend:") != std::string_view::npos || has(keys, "allocation_mode"))) {
    return {YamlForm::areal, ""};
  }
  // ROLL: its workers with a strategy_args block.
  if ((has(keys, "actor_train") || has(keys, "sft_train") || has(keys, "student") || has(keys, "student_train")) &&
      text.find("strategy_args:") != std::string_view::npos) {
    return {YamlForm::roll, ""};
  }
  // NeMo-RL: its policy section with a backend block, or a policy beside its cluster or a defaults file.
  if (has(keys, "policy") && (has(keys, "cluster") || has(keys, "defaults") ||
                              text.find("megatron_cfg:") != std::string_view::npos ||
                              text.find("dtensor_cfg:") != std::string_view::npos)) {
    return {YamlForm::nemo_rl, ""};
  }
  if (has(keys, "trainer") && has(keys, "model")) return {YamlForm::nemo_launcher, ""};
  if (has(keys, "language_model") && has(keys, "model_parallel")) return {YamlForm::megatron_yaml_cfg, ""};
  if (std::all_of(keys.begin(), keys.end(), [](const std::string& k) { return is_bridge_section(k); })) {
    return {YamlForm::bridge, ""};
  }
  return {YamlForm::other, unknown_form_reason("YAML", keys)};
}

std::string unknown_form_reason(std::string_view kind, const std::vector<std::string>& keys) {
  std::string listed;
  for (size_t i = 0; i < keys.size() && i < 4; ++i) listed += (i ? ", " : "") + keys[i];
  if (keys.size() > 4) listed += ", ...";
  return "a " + std::string(kind) + " file of none of the training-config forms hcp-lint reads (top-level keys: " +
         listed + ")";
}

}  // namespace hcp::lint

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "hcp/edit_distance.hpp"
#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

// The CP-related names a typo would hide: a misspelt one is silently ignored by Bridge's override merging.
constexpr std::string_view kKnownKeys[] = {
    "model.context_parallel_size",      "model.cp_comm_type",
    "model.hierarchical_context_parallel_sizes", "model.tensor_model_parallel_size",
    "model.pipeline_model_parallel_size", "model.num_attention_heads",
    "model.num_query_groups",           "model.seq_length",
    "model.num_layers",                 "model.window_size",
    "model.qkv_format",                 "model.core_attention_bias_type",
    "dataset.seq_length",               "dist.use_decentralized_pg",
    "dist.use_tp_pp_dp_mapping",        "cluster.nodes",
    "cluster.gpus_per_node",            "cluster.world_size",
    "cluster.gpu",                      "env.transformer_engine",
    "env.CUDA_DEVICE_MAX_CONNECTIONS",  "model.softmax_type",
    "model.mamba_num_heads",            "model.mamba_num_groups",
    "model.expert_model_parallel_size", "model.expert_tensor_parallel_size",
};
constexpr std::string_view kKnownFlags[] = {
    "--context-parallel-size", "--cp-comm-type", "--hierarchical-context-parallel-sizes",
    "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--use-tp-pp-dp-mapping",
};

std::string normalized(std::string_view s) {
  std::string out;
  for (char c : s) out += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view last_segment(std::string_view key) {
  const size_t dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

template <size_t N>
std::string closest(std::string_view key, const std::string_view (&known)[N]) {
  const std::string k = normalized(key);
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view candidate : known) {
    const std::string c = normalized(candidate);
    if (c == k) return std::string(candidate);  // same name in another spelling: -, case
    size_t d = edit_distance(k, c, 3);  // nothing past 3 edits is suggested
    // Right key, wrong section (dist.context_parallel_size). A key nested deeper in a section is a sub-config's
    // own field (model.teacher.context_parallel_size of distillation), not a misplaced one.
    const bool flat = std::count(key.begin(), key.end(), '.') == 1;
    if (flat && normalized(last_segment(key)) == normalized(last_segment(candidate))) d = 1;
    const size_t allowed = c.size() > 20 ? 3 : 2;
    if (d <= allowed && d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  if (best.empty() && k.find("hierarch") != std::string::npos && key.rfind("--", 0) != 0) {
    return "model.hierarchical_context_parallel_sizes";
  }
  return best;
}

// The ConfigContainer sections with one fixed dataclass type, and their fields (generated from upstream).
struct Section {
  std::string_view name;
  std::vector<std::string_view> fields;
};
const std::vector<Section>& bridge_sections() {
#define HCP_BRIDGE_SECTION(name, ...) Section{name, {__VA_ARGS__}},
  static const std::vector<Section> sections = {
#include "bridge_schema.inc"
  };
#undef HCP_BRIDGE_SECTION
  return sections;
}

const Section* section_of(std::string_view key) {
  const size_t dot = key.find('.');
  if (dot == std::string_view::npos) return nullptr;
  for (const Section& s : bridge_sections()) {
    if (s.name == key.substr(0, dot)) return &s;
  }
  return nullptr;
}

// For a key in a section whose fields are all known: empty when the field exists (or is a Hydra meta key such as
// _target_), else the closest field of that section (possibly empty) behind a marker.
std::optional<std::string> unknown_field(std::string_view key, const Section& s) {
  std::string_view field = key.substr(s.name.size() + 1);
  field = field.substr(0, field.find('.'));
  if (field.empty() || field[0] == '_') return std::nullopt;
  if (std::find(s.fields.begin(), s.fields.end(), field) != s.fields.end()) return std::nullopt;
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view candidate : s.fields) {
    const size_t d = edit_distance(normalized(field), normalized(candidate), 3);
    if (d <= 3 && d < best_distance) {
      best_distance = d;
      best = std::string(s.name) + "." + std::string(candidate);
    }
  }
  return best;
}

bool is_known(std::string_view key) {
  return std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) != std::end(kKnownKeys) ||
         std::find(std::begin(kKnownFlags), std::end(kKnownFlags), key) != std::end(kKnownFlags);
}

void check(const LintContext& ctx, Reporter& r) {
  for (const std::string& key : ctx.tree.keys_in_order()) {
    // env.* are environment variables (a script's `export WORLD_SIZE=...` is not a config key); cluster.* are
    // hcp's own facts.
    // ignored.* are a framework's keys that never reach Megatron (HCP027 says so).
    if (is_known(key) || key.rfind("env.", 0) == 0 || key.rfind("cluster.", 0) == 0 || key.rfind("ignored.", 0) == 0 ||
        key.rfind("framework.", 0) == 0)
      continue;
    const Setting* s = ctx.tree.find(key);
    if (const Section* section = section_of(key)) {
      // A section whose fields are all known: any other field is reported, with the closest one if any.
      const auto closest_field = unknown_field(key, *section);
      if (!closest_field) continue;
      r.report(s->key_loc,
               "unknown key '" + s->spelled + "': " + std::string(section->name) + " has no such field in "
                   "Megatron-Bridge" + (closest_field->empty() ? "" : "; did you mean '" + *closest_field + "'?"),
               "Bridge skips a YAML key its config does not have with only a log warning and refuses such a "
               "command-line override; in Python the assignment adds an attribute that nothing reads. Fix the "
               "name or drop the key");
      continue;
    }
    const bool flag = key.rfind("--", 0) == 0;
    const std::string guess = flag ? closest(key, kKnownFlags) : closest(key, kKnownKeys);
    if (guess.empty()) continue;
    r.report(s->key_loc, "unknown " + std::string(flag ? "flag" : "key") + " '" + s->spelled + "': did you mean '" +
                             guess + "'?",
             "a misspelt key is ignored and the default applies");
  }
}

}  // namespace

const Rule& rule_hcp022() {
  static const Rule rule{
      {"HCP022", "unknown-key", Severity::warning, "an unknown key close to a known CP-related key",
       {"In a ConfigContainer section whose type is one dataclass (train, dist, optimizer, scheduler, checkpoint, "
        "logger, ddp, rng, tokenizer, profiling, comm_overlap, ...), a field that dataclass does not have (the field "
        "lists are generated from Megatron-Bridge and Megatron-LM sources, scripts/gen_bridge_schema.py). In the "
        "sections whose fields depend on the recipe (model: the provider class, dataset), a key within a small "
        "edit distance of a CP-related key, differing from one only by '-' versus '_' or case, or naming a CP key "
        "in the wrong section. Environment variables and hcp's own [cluster] are never reported.",
        "Bridge's override handling skips a YAML key its dataclass lacks with only a log line (\"Key ... not found "
        "in config object ... Skipping.\") and refuses such a command-line override after the job has started; "
        "either way the value meant is not applied (a context_paralel_size typo trains with CP 1).",
        "[model]\ncontext_paralel_size = 4",
        "Spell the key as suggested.",
        "Megatron-Bridge src/megatron/bridge/training/utils/omegaconf_utils.py (_apply_overrides, "
        "parse_hydra_overrides); scripts/gen_bridge_schema.py"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint

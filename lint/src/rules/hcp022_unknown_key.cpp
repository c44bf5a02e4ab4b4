#include <algorithm>
#include <cctype>

#include "edit_distance.hpp"
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
    size_t d = edit_distance(k, c);
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

bool is_known(std::string_view key) {
  return std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) != std::end(kKnownKeys) ||
         std::find(std::begin(kKnownFlags), std::end(kKnownFlags), key) != std::end(kKnownFlags);
}

void check(const LintContext& ctx, Reporter& r) {
  for (const std::string& key : ctx.tree.keys_in_order()) {
    // env.* are environment variables (a script's `export WORLD_SIZE=...` is not a config key); cluster.* are
    // hcp's own facts.
    if (is_known(key) || key.rfind("env.", 0) == 0 || key.rfind("cluster.", 0) == 0) continue;
    const Setting* s = ctx.tree.find(key);
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
       {"A key (or Megatron-LM flag) that hcp-lint does not know is within a small edit distance of a CP-related "
        "key, differs from one only by '-' versus '_' or case, or names a CP key in the wrong section.",
        "Override merging and argparse prefix rules can drop or misread a misspelt key; the default then applies "
        "silently (a context_paralel_size typo trains with CP 1).",
        "[model]\ncontext_paralel_size = 4",
        "Spell the key as suggested.",
        "Megatron-Bridge override handling (OmegaConf); argparse allow_abbrev"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint

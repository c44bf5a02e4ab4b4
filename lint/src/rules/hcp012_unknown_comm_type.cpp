#include "hcp/edit_distance.hpp"
#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

constexpr const char* kKnown[] = {"p2p", "all_gather", "a2a", "a2a+p2p"};

std::string suggestion(const std::string& value) {
  std::string compact;
  for (char c : value) {
    if (c != '_' && c != '-' && c != ' ') compact += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char* k : kKnown) {
    std::string kc;
    for (const char* p = k; *p; ++p) if (*p != '_') kc += *p;
    if (compact == kc) return k;
  }
  std::string best;
  size_t best_distance = 3;
  for (const char* k : kKnown) {
    const size_t d = edit_distance(value, k, 3);
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  return best;
}

// Megatron-Core's DeepSeek sparse attention (experimental_attention_variant "dsa") runs its own context
// parallelism and requires cp_comm_type "allgather" in any spelling (transformer_config.py compares it with
// "_" removed and lower-cased); a config with DSA settings (model.dsa_*) uses that variant.
bool dsa_attention(const ConfigTree& tree) {
  if (const Setting* s = tree.find("model.experimental_attention_variant")) {
    return s->value.kind == Value::Kind::string && s->value.text == "dsa";
  }
  for (const std::string& k : tree.keys_in_order()) {
    if (k.rfind("model.dsa_", 0) == 0) return true;
  }
  return false;
}

bool allgather_spelling(const std::string& v) {
  std::string compact;
  for (char c : v) {
    if (c != '_') compact += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return compact == "allgather";
}

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.cp_comm_type.known()) return;
  const auto& types = *f.cp_comm_type.value;
  const bool dsa = dsa_attention(ctx.tree);
  for (size_t i = 0; i < types.size(); ++i) {
    bool known = false;
    for (const char* k : kKnown) known |= types[i] == k;
    if (known || (dsa && allgather_spelling(types[i]))) continue;
    const Value& v = f.cp_comm_type.setting->value;
    const Location loc = f.cp_comm_type_is_list && i < v.items.size() ? v.items[i].loc : f.cp_comm_type.loc();
    const std::string guess = suggestion(types[i]);
    std::string message = "unknown cp_comm_type '" + types[i] + "'";
    if (f.cp_comm_type_is_list) message += " (layer " + std::to_string(i) + ")";
    message += guess.empty() ? "" : ": did you mean '" + guess + "'?";
    r.report(loc, message, "use one of p2p, all_gather, a2a, a2a+p2p");
  }
}

}  // namespace

const Rule& rule_hcp012() {
  static const Rule rule{
      {"HCP012", "unknown-comm-type", Severity::error, "unknown cp_comm_type value",
       {"cp_comm_type (or an entry of the per-layer list) is not one of p2p, all_gather, a2a, a2a+p2p.",
        "Megatron's --help says \"allgather\" but Transformer Engine only accepts \"all_gather\" (ValueError "
        "\"Unsupported communication type: allgather!\" at the first forward, after the job started). "
        "TransformerConfig accepts any string. The exception is Megatron-Core's DeepSeek sparse attention "
        "(experimental_attention_variant dsa, or a config with model.dsa_* settings), which runs its own context "
        "parallelism and requires \"allgather\" in any spelling.",
        "[model]\ncontext_parallel_size = 2\ncp_comm_type = \"allgather\"",
        "Use p2p, all_gather, a2a or a2a+p2p.",
        "Megatron-LM megatron/training/arguments.py (--cp-comm-type help), megatron/core/transformer/"
        "transformer_config.py (DSAttention: cp_comm_type=allgather only); Transformer Engine context_parallel.py"}},
      &check, "cp_comm_type"};
  return rule;
}

}  // namespace hcp::lint

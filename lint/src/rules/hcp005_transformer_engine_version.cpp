#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

struct Need {
  std::vector<int> version;
  std::string why;
};

std::optional<Need> needed(const Facts& f) {
  if (f.cp_size() <= 1 && !f.uses_comm(kA2aP2p)) return std::nullopt;
  if (f.uses_comm(kA2aP2p)) return Need{{1, 12, 0}, "a2a+p2p (hierarchical CP) needs Transformer Engine >= 1.12.0"};
  if (f.uses_comm("a2a") || f.uses_comm("all_gather")) {
    return Need{{1, 10, 0},
                "cp_comm_type other than p2p needs Transformer Engine >= 1.10 (older versions never receive "
                "cp_comm_type and silently run p2p)"};
  }
  return Need{{1, 0, 0}, "context parallelism needs Transformer Engine >= 1.0"};
}

std::string version_text(const std::vector<int>& v) {
  return std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]);
}

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.own_attention.empty()) return;  // Transformer Engine's behaviour; MindSpeed, torchtitan run their own kernels
  const auto need = needed(f);
  if (!need) return;
  if (!f.te_version.known()) {
    r.unknown(ctx.anchor({f.cp_comm_type.loc(), f.cp.loc()}),
              "Transformer Engine version unknown: " + need->why,
              "pass --te-version or set [env] transformer_engine = \"X.Y.Z\" to check it");
    return;
  }
  const auto have = parse_version(*f.te_version.value);
  if (!have) {
    r.report(f.te_version.loc(), "cannot read Transformer Engine version '" + *f.te_version.value + "'",
             "write it as MAJOR.MINOR.PATCH, e.g. 2.4.0");
    return;
  }
  if (compare_versions(*have, need->version) >= 0) return;
  r.report(f.te_version.loc(),
           "Transformer Engine " + *f.te_version.value + " is too old: " + need->why,
           "upgrade Transformer Engine to " + version_text(need->version) + " or newer",
           {{ctx.anchor({f.cp_comm_type.loc(), f.cp.loc()}), "context parallelism is configured here"}});
}

}  // namespace

const Rule& rule_hcp005() {
  static const Rule rule{
      {"HCP005", "transformer-engine-too-old", Severity::error,
       "Transformer Engine is too old for the configured context parallelism",
       {"a2a+p2p needs Transformer Engine >= 1.12.0; a cp_comm_type other than p2p needs >= 1.10; any "
        "context_parallel_size > 1 needs >= 1.0. When the version is unknown the rule says so at info level.",
        "Megatron refuses a2a+p2p on TE < 1.12 (\"Transformer-Engine v... must be >= 1.12.0 to support "
        "hierarchical cp commucation.\"). TE < 1.10 never receives cp_comm_type, so a2a or all_gather silently run "
        "as p2p.",
        "[model]\ncontext_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\nhierarchical_context_parallel_sizes = [2, 2]"
        "\n[env]\ntransformer_engine = \"1.11.0\"",
        "Upgrade Transformer Engine, or choose a cp_comm_type the installed version supports.",
        "Megatron-LM megatron/core/extensions/transformer_engine.py (TEDotProductAttention version checks)"}},
      &check, "cp,cp_comm_type,te_version"};
  return rule;
}

}  // namespace hcp::lint

#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.own_attention.empty()) return;  // Transformer Engine's behaviour; MindSpeed, torchtitan run their own kernels
  if (!f.packed_sequences.value.value_or(false) || !f.uses_comm(kA2aP2p) || f.cp_size() <= 1) return;
  const std::string message = "packed sequences (qkv_format thd) are not supported with hierarchical CP (a2a+p2p)";
  const std::string hint = "use cp_comm_type = \"p2p\" or \"a2a\" with packed sequences";
  if (!f.te_version.known()) {
    r.report_as(Severity::warning, f.packed_sequences.loc(),
                message + " in Transformer Engine up to 2.18; version unknown", hint);
    return;
  }
  const auto have = parse_version(*f.te_version.value);
  if (have && compare_versions(*have, {2, 18, 0}) > 0) return;
  r.report(f.packed_sequences.loc(), message + " in Transformer Engine " + *f.te_version.value + " (<= 2.18)", hint,
           {{f.te_version.loc(), "Transformer Engine version"}});
}

}  // namespace

const Rule& rule_hcp018() {
  static const Rule rule{
      {"HCP018", "packed-sequences-with-hcp", Severity::error,
       "packed sequences (thd) with a2a+p2p on Transformer Engine <= 2.18",
       {"Packed sequences (model.qkv_format = \"thd\" or dataset.packed_sequence_specs.packed_sequence_size > 0) "
        "with a2a+p2p and context_parallel_size > 1, on Transformer Engine <= 2.18; a warning when the version is "
        "unknown.",
        "\"thd format is not supported with hierarchical CP implementation yet!\" in every released Transformer "
        "Engine up to 2.18 (TE issue 2208; lifted by TE PR 3290).",
        "[model]\ncontext_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\nhierarchical_context_parallel_sizes = [2, 2]"
        "\nqkv_format = \"thd\"",
        "Use p2p or a2a with packed sequences, or a Transformer Engine release that includes PR 3290. The rule "
        "states Transformer Engine's limit: hcp's own runtime (CpContext, hcp attn --seqlens) runs packed sequences "
        "under every scheme, a2a+p2p and all_gather included.",
        "Transformer Engine issue 2208, PR 3290; context_parallel.py"}},
      &check, "cp,cp_comm_type,packed_sequences,te_version"};
  return rule;
}

}  // namespace hcp::lint

#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.own_attention.empty()) return;  // Transformer Engine's behaviour; MindSpeed, torchtitan run their own kernels
  if (!f.sliding_window.value.value_or(false) || f.cp_size() <= 1) return;
  for (const char* type : {"p2p", kA2aP2p}) {
    if (!f.uses_comm(type)) continue;
    r.report(f.sliding_window.loc(),
             std::string("sliding-window attention (window_size ") + f.sliding_window.setting->value.display() +
                 ") is not supported with context parallelism cp_comm_type='" + type + "'",
             "use cp_comm_type = \"a2a\" or \"all_gather\" with sliding-window attention",
             {{ctx.anchor({f.cp_comm_type.loc(), f.cp.loc()}), "the CP communication type is set here"}});
    return;
  }
}

}  // namespace

const Rule& rule_hcp016() {
  static const Rule rule{
      {"HCP016", "sliding-window-with-p2p", Severity::error, "sliding-window attention with p2p or a2a+p2p",
       {"model.window_size sets a finite window while context_parallel_size > 1 and a layer uses p2p (the default) "
        "or a2a+p2p.",
        "Transformer Engine supports sliding windows under CP only with a2a or all_gather (\"Context parallelism "
        "does not support sliding window attention with cp_comm_type=...\").",
        "[model]\ncontext_parallel_size = 2\nwindow_size = [4096, 0]",
        "Use cp_comm_type = \"a2a\" or \"all_gather\". The rule states Transformer Engine's limit: hcp's own "
        "runtime (CpContext, hcp attn --window) runs sliding windows under every scheme, the ring skipping the steps "
        "outside the window.",
        "Transformer Engine dot_product_attention/utils.py get_attention_backend"}},
      &check, "cp,cp_comm_type,sliding_window"};
  return rule;
}

}  // namespace hcp::lint

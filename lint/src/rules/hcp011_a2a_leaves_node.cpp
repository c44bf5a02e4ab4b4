#include <numeric>

#include "hcp/lint/rule.hpp"
#include "hcp/topology.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.own_attention.empty()) return;  // Transformer Engine's behaviour; MindSpeed, torchtitan run their own kernels
  const auto a2a = a2a_level(f);
  if (!a2a || a2a->size <= 1 || f.cp_size() <= 1) return;
  const Location where = ctx.anchor({f.hcp_sizes.loc(), f.cp_comm_type.loc(), f.cp.loc()});
  if (!f.gpus_per_node.known()) {
    r.unknown(where, "GPUs per node unknown: cannot check that the a2a group stays on NVLink",
              "pass --gpus-per-node, set [cluster] gpus_per_node, or launch with torchrun --nproc_per_node");
    return;
  }
  // Node boundaries repeat every lcm(tp * cp, gpus_per_node) ranks, so that window of the layout (pp 1, as many
  // data-parallel replicas as it takes) shows every alignment an a2a group can have, whatever the world size.
  // Bounded, unlike the real world size, which a config may give in the millions.
  ParallelConfig config;
  config.tp = f.tp_size();
  config.cp = f.cp_size();
  config.gpus_per_node = *f.gpus_per_node.value;
  const bool hierarchical = f.uses_comm(kA2aP2p);
  if (hierarchical) config.hcp_sizes = f.hcp_sizes.value;
  int64_t span_ranks = 0;
  if (__builtin_mul_overflow(config.tp, a2a->size, &span_ranks)) span_ranks = INT64_MAX;
  std::string crossing;
  int64_t block = 0, window = 0;
  const bool small = config.tp > 0 && config.cp > 0 && config.gpus_per_node > 0 &&
                     !__builtin_mul_overflow(config.tp, config.cp, &block) &&
                     !__builtin_mul_overflow(block / std::gcd(block, config.gpus_per_node), config.gpus_per_node, &window) &&
                     window <= (int64_t{1} << 24);
  config.world_size = window;
  if (!small || config.check()) {
    // Too large to lay out, or invalid for another reason (reported by its own rule): the span alone still tells.
    if (span_ranks <= config.gpus_per_node) return;
    crossing = "every a2a group spans more ranks than a node has";
  } else {
    const Topology topology(config);
    const Locality loc = hierarchical ? topology.locality(GroupKind::hcp, 0) : topology.locality(GroupKind::cp);
    if (loc.intra_node()) return;
    crossing = std::to_string(loc.groups_crossing_nodes) + " of every " + std::to_string(loc.groups) +
               " a2a groups cross node boundaries";
  }
  r.report(where,
           "the a2a group (" + a2a->what + " = " + std::to_string(a2a->size) + ") leaves its NVLink domain: " +
               crossing + " (tp * a2a = " + std::to_string(config.tp) + " * " + std::to_string(a2a->size) + " = " +
               std::to_string(span_ranks) + " ranks, " + std::to_string(config.gpus_per_node) + " GPUs per node)",
           "keep tp * a2a_size <= GPUs per node: a smaller a2a level (more p2p) or a smaller tp",
           {{f.gpus_per_node.loc(), "GPUs per node: " + std::to_string(config.gpus_per_node)}});
}

}  // namespace

const Rule& rule_hcp011() {
  static const Rule rule{
      {"HCP011", "a2a-leaves-node", Severity::warning, "an a2a group leaves its NVLink domain",
       {"With a2a (the whole CP group) or a2a+p2p (hierarchical level 0), some all-to-all group spans ranks on "
        "more than one node: tp * a2a_size > GPUs per node, or a group straddles a node boundary. Computed from "
        "the exact Megatron rank layout. When GPUs per node are unknown the rule says so at info level.",
        "Megatron places CP peers tp ranks apart, so an a2a group spans tp * a2a_size consecutive ranks. "
        "All-to-all traffic meant for NVLink then crosses the slower inter-node network, which defeats the purpose "
        "of hierarchical CP. No upstream tool checks this.",
        "[cluster]\ngpus_per_node = 8\n[model]\ntensor_model_parallel_size = 8\ncontext_parallel_size = 16\n"
        "cp_comm_type = \"a2a+p2p\"\nhierarchical_context_parallel_sizes = [2, 8]",
        "Choose tp * a2a_size <= GPUs per node, e.g. tp 4 with [2, 8], or tp 8 with p2p only.",
        "Megatron-LM megatron/core/parallel_state.py RankGenerator; hcp groups --rank R shows the groups"}},
      &check, "tp,cp,cp_comm_type,hcp_sizes,gpus_per_node"};
  return rule;
}

}  // namespace hcp::lint

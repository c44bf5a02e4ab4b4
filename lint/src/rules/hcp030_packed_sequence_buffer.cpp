// The THD buffer of packed sequences under CP (Megatron-LM dev): each DP x CP rank (or each CP rank with the
// dp_balanced scheduler) holds at most max_seqlen_per_dp_cp_rank tokens, padded to pad_packed_seq_alignment. Only
// what the input writes is checked: an unset field may come from a recipe this file does not show.
#include <optional>
#include <string>

#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const ConfigTree& t = ctx.tree;
  const Facts& f = ctx.facts;
  const Setting* max = written(t, "model.max_seqlen_per_dp_cp_rank");
  if (!max) max = written(t, "model.max_seqlen_per_cp_rank");  // its former name, still read
  if (max && max->value.kind != Value::Kind::integer) max = nullptr;
  const Setting* align = written(t, "model.pad_packed_seq_alignment");
  const bool align_int = align && align->value.kind == Value::Kind::integer;

  if (align_int && align->value.integer <= 0) {
    r.report(align->key_loc, "pad_packed_seq_alignment must be 'max' or a positive integer, got " + align->value.display() +
                                 " (ModelParallelConfig.__post_init__)",
             "use max, or the alignment in tokens");
  } else if (align_int && max && align->value.integer > max->value.integer) {
    r.report(align->key_loc, "pad_packed_seq_alignment (" + std::to_string(align->value.integer) +
                                 ") exceeds max_seqlen_per_dp_cp_rank (" + std::to_string(max->value.integer) +
                                 "): Megatron-LM refuses it",
             "use an alignment at most the per-rank buffer, or max");
  }

  // The scheduler in force: dynamic CP sets default_dynamic_cp when none is given.
  const Setting* scheduler = written(t, "model.sequence_packing_scheduler");
  const bool dynamic = is_true(written(t, "model.dynamic_context_parallel")) || is_true(written(t, "model.hybrid_context_parallel"));
  if (!scheduler && !dynamic) return;
  const std::string name = scheduler && scheduler->value.kind == Value::Kind::string ? scheduler->value.text
                                                                                     : "default_dynamic_cp";

  // Packed sequence buffer: total ranks x per-rank tokens must hold one sequence of seq_length.
  if (max && f.model_seq_length.known() && f.cp.known()) {
    std::optional<int64_t> ranks;
    std::string what;
    if (name == "dp_balanced") {
      ranks = f.cp_size();
      what = "context_parallel_size";
    } else if (f.world_size.known() && f.tp_size() * f.pp_size() * f.cp_size() > 0 &&
               *f.world_size.value % (f.tp_size() * f.pp_size() * f.cp_size()) == 0) {
      ranks = *f.world_size.value / (f.tp_size() * f.pp_size());
      what = "dp * cp";
    }
    if (ranks && *ranks * max->value.integer < *f.model_seq_length.value) {
      r.report(max->key_loc, "the packed sequence buffer (" + what + " " + std::to_string(*ranks) + " x " +
                                 max->spelled + " " + std::to_string(max->value.integer) + " = " +
                                 std::to_string(*ranks * max->value.integer) + " tokens) is smaller than seq_length (" +
                                 std::to_string(*f.model_seq_length.value) + "): Megatron-LM asserts it holds one "
                                 "sequence",
               "raise max_seqlen_per_dp_cp_rank to at least " +
                   std::to_string((*f.model_seq_length.value + *ranks - 1) / *ranks) + ", or leave it unset");
    }
  }

  // CUDA graphs over THD batches need a fixed shape: the alignment is the whole buffer.
  const Setting* graph = written(t, "model.cuda_graph_impl");
  if (graph && graph->value.kind == Value::Kind::string && graph->value.text != "none" && align_int && max &&
      align->value.integer != max->value.integer) {
    r.report(align->key_loc, "THD CUDA graphs (cuda_graph_impl " + graph->value.display() + " with " + name +
                                 ") need pad_packed_seq_alignment max or equal to max_seqlen_per_dp_cp_rank (" +
                                 std::to_string(max->value.integer) + "), got " + align->value.display(),
             "set pad_packed_seq_alignment to max");
  }
}

}  // namespace

const Rule& rule_hcp030() {
  static const Rule rule{
      {"HCP030", "packed-sequence-buffer", Severity::error,
       "the packed-sequence buffer per CP rank cannot hold a sequence, or its padding is refused",
       {"With a sequence packing scheduler (dp_balanced, or default_dynamic_cp that dynamic CP uses), each DP x CP "
        "rank (each CP rank for dp_balanced) holds max_seqlen_per_dp_cp_rank tokens of a THD batch: the ranks "
        "together must hold seq_length. pad_packed_seq_alignment must be max or a positive integer no larger than "
        "max_seqlen_per_dp_cp_rank, and THD CUDA graphs need it to be max or equal to it.",
        "Megatron-LM asserts the buffer size and raises on the alignment in validate_args and "
        "ModelParallelConfig.__post_init__: the job stops at start-up after the allocation.",
        "[model]\ncontext_parallel_size = 4\nseq_length = 65536\nsequence_packing_scheduler = \"dp_balanced\"\n"
        "max_seqlen_per_dp_cp_rank = 8192",
        "Raise max_seqlen_per_dp_cp_rank to ceil(seq_length / ranks) or leave it unset (Megatron-LM computes it); "
        "keep the alignment within it.",
        "Megatron-LM megatron/training/arguments.py validate_args (dev: pad_packed_seq_alignment, the THD CUDA graph "
        "block, the packed-sequence buffer-size check), megatron/core/model_parallel_config.py __post_init__"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint

#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

// `tp`: torchtitan shards the sequence over tp too (sequence parallel) and asserts seq_len % (tp * 2 * cp)
// (torchtitan/distributed/parallel_dims.py seq_len_divisor); 1 for Megatron.
void check_one(const Fact<int64_t>& seq, const char* name, int64_t cp, int64_t tp, Reporter& r) {
  int64_t multiple = 0, up = 0;
  if (!seq.known() || __builtin_mul_overflow(cp, 2, &multiple) || __builtin_mul_overflow(multiple, tp, &multiple)) {
    return;  // an absurd cp: HCP010 says so
  }
  if (*seq.value % multiple == 0) return;
  const int64_t down = *seq.value / multiple * multiple;
  if (__builtin_add_overflow(down, multiple, &up)) up = down;
  r.report(seq.loc(),
           std::string(name) + " (" + std::to_string(*seq.value) + ") is not divisible by " +
               (tp > 1 ? "tensor_parallel_degree * 2 * context_parallel_degree (torchtitan: " : "2 * context_parallel_size (") +
               std::to_string(multiple) + ")",
           "use a multiple of " + std::to_string(multiple) + " (e.g. " + std::to_string(down > 0 ? down : multiple) +
               " or " + std::to_string(up) + "); with packed sequences every padded sequence must divide too");
}

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (f.cp_size() <= 1) return;
  const int64_t tp = f.own_attention == "torchtitan" ? f.tp_size() : 1;
  const std::string model = f.model_seq_length.setting ? f.model_seq_length.setting->spelled : "model.seq_length";
  check_one(f.model_seq_length, f.own_attention.empty() ? "model.seq_length" : model.c_str(), f.cp_size(), tp, r);
  check_one(f.dataset_seq_length, "dataset.seq_length", f.cp_size(), 1, r);
}

}  // namespace

const Rule& rule_hcp003() {
  static const Rule rule{
      {"HCP003", "seq-length-not-divisible", Severity::error,
       "seq_length is not divisible by 2 * context_parallel_size",
       {"context_parallel_size > 1 and model.seq_length or dataset.seq_length is not a multiple of "
        "2 * context_parallel_size.",
        "Context parallelism splits the sequence into 2 * cp chunks (each rank holds two, for causal load balance). "
        "Megatron-LM rejects it at start-up (\"seq-length should be a multiple of 2 * context-parallel-size\"); "
        "with packed sequences every sequence's padded length must divide.",
        "[model]\ncontext_parallel_size = 4\nseq_length = 4100",
        "Use a sequence length that is a multiple of 2 * context_parallel_size.",
        "Megatron-LM megatron/training/arguments.py validate_args; Transformer Engine context_parallel.py"}},
      &check, "cp,model_seq_length,dataset_seq_length"};
  return rule;
}

}  // namespace hcp::lint

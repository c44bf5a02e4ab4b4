#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  if (!f.model_seq_length.known() || !f.dataset_seq_length.known()) return;
  if (*f.model_seq_length.value == *f.dataset_seq_length.value) return;
  r.report(f.model_seq_length.loc(),
           "model.seq_length (" + std::to_string(*f.model_seq_length.value) + ") differs from dataset.seq_length (" +
               std::to_string(*f.dataset_seq_length.value) + ")",
           "set both to the same value (Bridge's config validation asserts they match for its own dataset configs)",
           {{f.dataset_seq_length.loc(), "dataset.seq_length is " + std::to_string(*f.dataset_seq_length.value) +
                                             " here"}});
}

}  // namespace

const Rule& rule_hcp004() {
  static const Rule rule{
      {"HCP004", "seq-length-mismatch", Severity::warning, "model.seq_length differs from dataset.seq_length",
       {"Both model.seq_length and dataset.seq_length are set and they differ.",
        "Megatron-Bridge's ConfigContainer.validate asserts model.seq_length == dataset.seq_length for its own "
        "dataset configs (GPTDatasetConfig, GPTSFTDatasetConfig, DirectHFSFTDatasetConfig, EnergonDatasetConfig, "
        "MockVLMSFTDatasetConfig): the job stops before training. With another dataset provider nothing checks: "
        "the model and the data disagree in silence, and the CP divisibility check may pass on the wrong one. A "
        "warning, as the dataset's type is often not in the file.",
        "[model]\nseq_length = 8192\n[dataset]\nseq_length = 4096",
        "Set both to the sequence length you train with.",
        "Megatron-Bridge src/megatron/bridge/training/config.py (ConfigContainer.validate: \"Please ensure "
        "sequence length configuration in model config and dataset config match\")"}},
      &check, "model_seq_length,dataset_seq_length"};
  return rule;
}

}  // namespace hcp::lint

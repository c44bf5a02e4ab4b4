#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  const Facts& f = ctx.facts;
  struct Pair {
    const char* name;
    const Fact<int64_t>& student;
    const Fact<int64_t>& teacher;
  };
  const Pair pairs[] = {{"tensor_model_parallel_size", f.tp, f.teacher_tp},
                        {"pipeline_model_parallel_size", f.pp, f.teacher_pp},
                        {"context_parallel_size", f.cp, f.teacher_cp},
                        {"seq_length", f.model_seq_length, f.teacher_seq_length}};
  for (const Pair& p : pairs) {
    // Both sides as the input gives them: a side the input leaves to the recipe is not known here.
    if (!p.student.known() || !p.teacher.known() || *p.student.value == *p.teacher.value) continue;
    r.report(p.teacher.loc(),
             std::string("distillation teacher ") + p.name + " " + std::to_string(*p.teacher.value) +
                 " differs from the student's " + std::to_string(*p.student.value) +
                 ": Megatron-Bridge refuses it (\"Student and teacher providers must have the same " + p.name + "\")",
             std::string("give model.teacher.") + p.name + " the student's value",
             {{p.student.loc(), "the student's value"}});
  }
}

}  // namespace

const Rule& rule_hcp026() {
  static const Rule rule{
      {"HCP026", "distillation-teacher-mismatch", Severity::error,
       "distillation teacher and student differ in tp, pp, cp or seq_length",
       {"A Megatron-Bridge distillation config sets model.teacher.X and model.X to different values, for X one "
        "of tensor_model_parallel_size, pipeline_model_parallel_size, context_parallel_size, seq_length.",
        "The teacher runs on the student's process groups and sequence shards; DistillationProvider refuses a "
        "mismatch when the model is built (\"Student and teacher providers must have the same ...\").",
        "[model]\ncontext_parallel_size = 2\n[model.teacher]\ncontext_parallel_size = 1",
        "Give the teacher the student's parallel sizes and sequence length.",
        "Megatron-Bridge src/megatron/bridge/models/distillation_provider.py (__post_init__)"}},
      &check, "tp,pp,cp,model_seq_length,teacher_tp,teacher_pp,teacher_cp,teacher_seq_length"};
  return rule;
}

}  // namespace hcp::lint

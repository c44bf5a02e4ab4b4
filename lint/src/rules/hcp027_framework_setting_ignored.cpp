// A framework's key that never reaches Megatron: the loader keeps it under `ignored.<bridge key>` with why (verl's
// colocated workers, verl's hierarchical sizes), and this rule says so where it was written.
#include "hcp/lint/rule.hpp"
#include "rule_helpers.hpp"

namespace hcp::lint {
namespace {

void check(const LintContext& ctx, Reporter& r) {
  for (const std::string& key : ctx.tree.keys_in_order()) {
    if (key.rfind("ignored.", 0) != 0) continue;
    const Setting* s = ctx.tree.find(key);
    if (!s || s->provenance == Provenance::unknown) continue;
    r.report(s->key_loc, s->spelled + " = " + s->value.display() + " is not applied: " + s->why,
             "set it where the framework passes it on, or leave it out");
  }
}

}  // namespace

const Rule& rule_hcp027() {
  static const Rule rule{
      {"HCP027", "framework-setting-ignored", Severity::warning, "a framework setting that never reaches Megatron",
       {"A framework that drives Megatron-Core through keys of its own takes a parallel setting that its code never "
        "passes to Megatron.",
        "The job runs with another layout than the one written, silently. verl builds its workers of one resource "
        "pool into one process per GPU and calls mpu.initialize_model_parallel once, with the actor's sizes: a "
        "critic's or ref's sizes that differ are not applied. verl never passes hierarchical_context_parallel_sizes "
        "to mpu.initialize_model_parallel, so override_transformer_config's sizes build no hierarchical groups.",
        "python3 -m verl.trainer.main_ppo \\\n    actor_rollout_ref.actor.megatron.context_parallel_size=2 \\\n"
        "    critic.megatron.context_parallel_size=4",
        "Give every colocated worker the actor's sizes, or put the worker in a resource pool of its own; use p2p or "
        "a2a under verl.",
        "verl verl/workers/megatron_workers.py (the NOTE above init_process_group, and mpu.initialize_model_parallel "
        "in each worker), verl/trainer/ppo/ray_trainer.py create_colocated_worker_cls"}},
      &check, ""};
  return rule;
}

}  // namespace hcp::lint

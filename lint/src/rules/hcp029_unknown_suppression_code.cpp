#include "hcp/lint/rule.hpp"

namespace hcp::lint {

// Reported by the linter from the directives (suppressions.cpp), not by a check over the facts.
const Rule& rule_hcp029() {
  static const Rule rule{
      {"HCP029", "unknown-suppression-code", Severity::warning, "a suppression names a code that is no rule",
       {"A `# hcp-lint: disable=` or `disable-file=` directive names a code that is no rule of this hcp-lint "
        "(`all` is every rule).",
        "A misspelt code (`HCP03` for `HCP003`) silences nothing, and the finding it was meant for still fails the "
        "run, or a later rename leaves a directive that no longer does what it says; ruff reports such "
        "directives too.",
        "torchrun pretrain_gpt.py --context-parallel-size 3 --seq-length 4096  # hcp-lint: disable=HCP03",
        "Write the rule's code as --list-rules prints it, or remove the directive.",
        "hcp-lint docs/lint.md (Selecting and suppressing)"}},
      nullptr, ""};
  return rule;
}

}  // namespace hcp::lint

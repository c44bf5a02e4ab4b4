#include "hcp/lint/rule.hpp"

namespace hcp::lint {

// Reported by the loaders, not by a check over the facts: a part of an input that hcp-lint could not read or
// follow. The rest of the input is still read, so the finding says where the reading has a gap.
const Rule& rule_hcp000() {
  static const Rule rule{
      {"HCP000", "input-not-read", Severity::info, "a part of an input could not be read or followed",
       {"A construct of a launch script that the shell model does not follow (a syntax error bash's grammar "
        "recovers from, `source` of a file whose path is not known or that cannot be read, a statement kind the "
        "model does not run), reported where it is. The rest of the file is still read.",
        "A value set in the part that was not read is unknown to the linter, so the rules that need it stay "
        "silent; the finding makes that gap visible instead of silent.",
        "source \"$CONFIG_DIR/model.sh\"   # CONFIG_DIR comes from the environment",
        "Give the value in the script, or lint the file that sets it too.",
        "hcp-lint docs/lint.md (the shell model)"}},
      nullptr, ""};
  return rule;
}

}  // namespace hcp::lint

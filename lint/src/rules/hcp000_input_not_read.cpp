#include "hcp/lint/rule.hpp"

namespace hcp::lint {

// Reported by the linter, not by a check over the facts: an input that cannot be read or parsed (error), or a
// part of a script the shell model could not follow (info: the rest of the file is still read).
const Rule& rule_hcp000() {
  static const Rule rule{
      {"HCP000", "input-not-read", Severity::error, "an input, or a part of it, could not be read",
       {"An input that cannot be read (too large, not a regular file, no permission) or parsed (invalid TOML or "
        "YAML, a malformed override), at the place the parser names; the run goes on with the other inputs. At "
        "info level: a construct of a launch script the shell model does not follow (a syntax error bash's "
        "grammar recovers from, `source` of a file whose path is not known or that cannot be read), where it is; "
        "the rest of the file is still read.",
        "A file that is not read is not checked: in CI that must fail the run rather than pass it silently. A value "
        "set in a part that was not followed is unknown, so the rules that need it stay silent; the info makes "
        "that gap visible.",
        "source \"$CONFIG_DIR/model.sh\"   # CONFIG_DIR comes from the environment",
        "Give the value in the script, or lint the file that sets it too.",
        "hcp-lint docs/lint.md (the shell model)"}},
      nullptr, ""};
  return rule;
}

}  // namespace hcp::lint

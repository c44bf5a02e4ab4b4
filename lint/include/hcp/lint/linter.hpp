// Lints training configs: each input (with the overrides on top) is one unit; the result keeps the source texts
// for rendering. Inputs that cannot be read or parsed are reported per unit, not thrown.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hcp/lint/config_file.hpp"
#include "hcp/lint/diagnostic.hpp"
#include "hcp/lint/facts.hpp"
#include "hcp/lint/input_walk.hpp"
#include "hcp/lint/source.hpp"

namespace hcp::lint {

struct LintOptions {
  InputFormat format = InputFormat::automatic;  // for every input; automatic detects per input
  std::vector<std::string> overrides;           // Hydra-style, applied on top of every input (or alone)
  std::optional<SourceText> overrides_file;     // applied before `overrides`
  CommandLineFacts cluster;
  std::vector<std::string> select;              // codes or code prefixes ("HCP01"); empty: every rule
  std::vector<std::string> ignore;
  std::map<std::string, Severity> severity;     // per code, replacing the default
  std::vector<PathFacts> path_cluster;          // cluster facts by input path (hcp-lint.toml); `cluster` wins
  bool show_facts = false;                      // fill UnitReport::launches (--show-facts)
};

// The facts of one launch an input gives, as --show-facts reports them.
struct LaunchFacts {
  std::string role;                     // ConfigVariant::role: a framework's worker, empty otherwise
  std::vector<std::string> conditions;  // the script path's conditions, empty when it always runs
  std::vector<ShownFact> facts;
};

struct UnitReport {
  std::string name;
  std::vector<Diagnostic> diagnostics;  // sorted by position
  std::optional<std::string> error;     // "path:line:col: ..." when the input could not be read or parsed
  std::optional<std::string> skipped;   // what the input was taken for when it is none of the linted forms
  std::vector<LaunchFacts> launches;    // with LintOptions::show_facts: one per configuration the input gives
};

struct LintReport {
  std::vector<UnitReport> units;
  std::map<std::string, SourceText> sources;  // by name, for the line under a caret
  bool facts_shown = false;                   // LintOptions::show_facts: renderers print each unit's launches

  size_t count(Severity s) const;
  bool has_input_errors() const;
  // Whether any finding is at or above `threshold`.
  bool fails(Severity threshold) const;
};

// Throws Error{invalid_argument} for unknown rule codes in select/ignore/severity.
void validate_options(const LintOptions& options);

LintReport lint(std::vector<SourceText> inputs, const LintOptions& options);

// Adds an input that could not be read at all (the message from read_source) as a unit with that error and, when
// HCP000 is selected, its HCP000 error finding.
void add_unreadable(LintReport& report, const std::string& path, const std::string& message, const LintOptions& options);

// Reads a file; throws Error{io} naming it. Directories are refused here (see collect_inputs).
SourceText read_source(const std::string& path);
// Standard input as the input "<stdin>", with the same size limit as a file (16 MiB): a stream that goes on past it
// (`hcp-lint - < /dev/zero`) is refused once the limit is read, never held whole.
SourceText read_standard_input();

}  // namespace hcp::lint

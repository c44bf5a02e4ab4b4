// hcp-lint's own configuration: `hcp-lint.toml`, or `[tool.hcp-lint]` in `pyproject.toml`, found in the working
// directory or the nearest folder above it that has one (hcp-lint.toml first). It holds what a repository wants
// for every run - excluded paths, rule selection and severities, the failure threshold - and the cluster facts of
// each group of its scripts, so that one command lints scripts that target different clusters:
//
//     extend-exclude = ["third_party", "examples/old/**"]
//     ignore = ["HCP020"]
//     fail-on = "warning"
//     [severity]
//     HCP011 = "error"
//     [[cluster]]
//     paths = ["examples/llama/**"]
//     nodes = 4
//     gpus-per-node = 8
//     gpu = "h100"
//     te-version = "2.4.0"
//
// `exclude`, `extend-exclude`, `force-exclude` and `respect-gitignore` mean what they mean to ruff. Command-line
// options win over the file. A key the file should not have is an error naming its place.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hcp/lint/diagnostic.hpp"
#include "hcp/lint/facts.hpp"
#include "hcp/lint/source.hpp"

namespace hcp::lint {

struct PathFacts {
  std::vector<std::string> paths;  // globs over the input's path relative to `config`'s folder, or as given
                                   // (`*` also crosses `/`)
  CommandLineFacts facts;
  std::string config;              // the file the entry is in
};

struct LintConfig {
  std::string path;  // the file it was read from
  // Globs relative to the file's directory (see ExcludePattern): `exclude` replaces default_excludes(),
  // `extend-exclude` adds to them.
  std::optional<std::vector<std::string>> exclude;
  std::vector<std::string> extend_exclude;
  std::optional<bool> force_exclude, respect_gitignore;
  std::vector<std::string> select, ignore;
  std::map<std::string, Severity> severity;
  std::optional<Severity> fail_on;
  std::vector<PathFacts> clusters;
};

// Throws Error{parse} naming file:line:col for a malformed file or a key it should not have. nullopt for a
// pyproject.toml without [tool.hcp-lint].
std::optional<LintConfig> read_lint_config(const SourceText& source, bool pyproject);
// Looks in `start` and its parents; nullopt when no folder has one (or a pyproject.toml without the table).
std::optional<LintConfig> find_lint_config(const std::string& start);

// Whether `path` (as given on the command line or found in a directory, or relative to the folder of `config`, the
// hcp-lint.toml the glob is from) matches a glob.
bool path_matches(const std::string& glob, const std::string& path, const std::string& config = "");

}  // namespace hcp::lint

// Which files a run lints: the paths named, and the config files found in the directories named, as ruff and rg
// choose them. A directory's walk leaves out hidden directories, what .gitignore files say (inside a git
// repository, with .git/info/exclude) and what .ignore files say (anywhere), and what the exclude patterns match.
// A file named on the command line is always read, unless force_exclude and an exclude pattern matches it.
#pragma once

#include <string>
#include <vector>

namespace hcp::lint {

// A glob of hcp-lint.toml's `exclude` / `extend-exclude` or of --exclude. One without a '/' matches a file or
// directory of that name anywhere ("third_party", "*_test.py"); one with a '/' matches the path relative to `base`
// ("examples/**", "scripts/old_*.sh"), where `*` also crosses '/'.
struct ExcludePattern {
  std::string glob;
  std::string base;  // absolute: the config file's directory, or the working directory for --exclude
};

// What ruff leaves out unless `exclude` in hcp-lint.toml replaces it: directories of installed or built packages.
// Hidden directories (.git, .venv, .tox, ...) are never entered.
const std::vector<std::string>& default_excludes();

struct WalkOptions {
  std::vector<ExcludePattern> exclude;
  bool respect_ignore_files = true;  // --no-ignore: false
  bool force_exclude = false;        // exclude applies to files named on the command line too
};

// An input to read, or (refused non-empty) one found in a directory that must not be opened, and why.
struct CollectedInput {
  std::string path;
  std::string refused;
};

struct CollectedInputs {
  std::vector<CollectedInput> inputs;
  size_t directories_named = 0;  // for "no config found under ..." when nothing is linted
};

// Files as given; directories searched recursively for .toml, .yaml, .yml, .sh, .args, .py (sorted by path); a link
// found there that leads out of the directory is refused. Throws Error{io} for a directory that cannot be listed or
// an ignore file that cannot be read: never a silently partial walk.
CollectedInputs collect_inputs(const std::vector<std::string>& paths, const WalkOptions& options = {});

}  // namespace hcp::lint

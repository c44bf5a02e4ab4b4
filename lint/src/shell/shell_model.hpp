// What a bash script would run, read without running it: every simple command on every path through the script,
// with each word's value and where that value came from. Values the script cannot know (positional parameters,
// environment it does not set, command output, `read`) stay unknown and say why; branches whose condition is
// unknown fork the path (each path carries its conditions), up to a bound past which the branches' variables are
// joined (a variable that differs between them becomes unknown). Nothing here guesses: a construct the model
// cannot follow is recorded as skipped and the rest of the script is still read.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hcp/lint/location.hpp"
#include "hcp/lint/source.hpp"
#include "hcp/lint/value.hpp"

namespace hcp::lint {


// A fragment of a value: literal text of the script, text computed from known values, or an unknown part (whose
// text is the expansion as written, "${WORLD_SIZE}").
struct ShellPiece {
  std::string text;
  Location loc;
  Provenance provenance = Provenance::literal;
  std::string why;  // for unknown pieces: "positional parameter $2", "environment variable WORLD_SIZE", ...
};

struct ShellWord {
  std::string text;
  Location loc;
  Provenance provenance = Provenance::literal;
  std::string why;               // the first unknown piece's reason
  size_t known_prefix = 0;       // bytes of `text` before the first unknown piece (text.size() when known)

  bool known() const { return provenance != Provenance::unknown; }
};

struct ShellEnv {
  std::string name;
  ShellWord value;
};

struct ShellCommand {
  std::vector<ShellWord> words;   // after expansion and word splitting; NAME=v prefixes removed
  std::vector<ShellEnv> env;      // exported variables and NAME=v prefixes in effect when it runs
  std::vector<ShellWord> outer;   // the command whose `bash -c STRING` ran this one (srun ... bash -c "...")
  Location loc;
};

struct ShellPath {
  std::vector<std::string> conditions;  // "[ \"$MODE\" = long ]", "not [ -f \"$CKPT\" ]", "$1 = --cp"
  std::vector<ShellCommand> commands;   // in the order they run
  bool exits = false;                   // ended by `exit`
};

struct ShellSkip {
  Location loc;
  std::string what;  // "syntax error", "eval of a value with unknown parts", ...
};

struct ShellRun {
  std::vector<ShellPath> paths;
  std::vector<ShellSkip> skipped;
  std::vector<SourceText> sourced;       // files read through `source` / `.`, for carets and suppressions
  std::vector<std::string> directives;   // `#SBATCH ...` and `#PBS ...` header lines, as written
  std::vector<Location> directive_locs;
  bool joined = false;                   // some branches were joined instead of forked (too many paths)
};

struct ShellOptions {
  // Reads a file that the script sources, by the path as the script names it resolved against the script's
  // folder; nullopt when it cannot be read (the source command is then skipped with that reason).
  std::function<std::optional<SourceText>(const std::string& path)> read_sourced;
  // Whether a path may be read at all: empty when it may, otherwise why not (then it is never passed to
  // read_sourced, and the source command is skipped with that reason). Null allows every path.
  std::function<std::string(const std::string& path)> may_source;
  // Which commands to keep (the others run, but are not recorded): a caller that looks for training launches
  // keeps only those, which saves copying every `echo` of every path. Null keeps all.
  std::function<bool(const std::vector<ShellWord>& words)> keep;
  size_t max_paths = 32;
  int max_source_depth = 8;
  int max_call_depth = 16;
};

ShellRun run_shell(const SourceText& script, const ShellOptions& options);

}  // namespace hcp::lint

// A small shell lexer for launch scripts: enough of bash to find Megatron-LM flags and their values. It joins
// line continuations, drops comments, removes quotes, expands variables assigned earlier in the same script
// ($CP, ${CP}, ${CP:-4}), splits unquoted expansions into words, and keeps each word's source position (for a
// word that came from a variable: the position in the assignment). Array literals NAME=( ... ) contribute their
// words where they are written; "${NAME[@]}" expands to nothing, so nothing is counted twice.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hcp/lint/location.hpp"
#include "hcp/lint/source.hpp"

namespace hcp::lint {

struct ShellWord {
  std::string text;
  Location loc;
  int command = 0;          // words of one simple command (or one array literal) share this number
  bool unresolved = false;  // contains an expansion the script does not define
};

struct ShellExport {
  std::string name;
  std::string value;
  Location loc;
};

struct ShellScan {
  std::vector<ShellWord> words;
  std::vector<ShellExport> exports;  // `export NAME=value`, `export NAME`, and `NAME=value command` prefixes
};

ShellScan scan_shell(const SourceText& source);

}  // namespace hcp::lint

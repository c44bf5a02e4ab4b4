// Inline suppressions: "# hcp-lint: disable=HCP011,HCP019" silences those codes on the command it is on - every
// line of a command continued with a trailing backslash, or of a shell string that spans lines - or, alone on a
// comment line, on the next command; "# hcp-lint: disable-file=HCP011" anywhere silences them in the whole file.
// "all" matches every code. A code that names no rule is kept for HCP029: a typo must not silence nothing quietly.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "hcp/lint/diagnostic.hpp"
#include "hcp/lint/source.hpp"

namespace hcp::lint {

class Suppressions {
 public:
  explicit Suppressions(const SourceText& source);
  bool suppressed(const std::string& code, int line) const;
  // The codes of directives that name no rule ("HCP10"), where they are written.
  const std::vector<std::pair<Location, std::string>>& unknown_codes() const { return unknown_; }

 private:
  int command_of(int line) const;

  std::vector<int> command_start_;  // by line (1-based): the first line of the command the line belongs to
  std::map<int, std::set<std::string>> by_command_;
  std::set<std::string> file_;
  std::vector<std::pair<Location, std::string>> unknown_;
};

}  // namespace hcp::lint

// Inline suppressions: "# hcp-lint: disable=HCP011,HCP019" on a line silences those codes on that line;
// "# hcp-lint: disable-file=HCP011" anywhere silences them in the whole file. "all" matches every code.
#pragma once

#include <map>
#include <set>
#include <string>

#include "hcp/lint/source.hpp"

namespace hcp::lint {

class Suppressions {
 public:
  explicit Suppressions(const SourceText& source);
  bool suppressed(const std::string& code, int line) const;

 private:
  std::map<int, std::set<std::string>> by_line_;
  std::set<std::string> file_;
};

}  // namespace hcp::lint

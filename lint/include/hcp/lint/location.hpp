// A position in an input: file, 1-based line and column (0 when unknown).
#pragma once

#include <string>

namespace hcp::lint {

struct Location {
  std::string file;
  int line = 0;
  int col = 0;

  bool known() const { return line > 0; }
  std::string text() const;  // "file:line:col", "file:line" or "file"
};

}  // namespace hcp::lint

#include "hcp/lint/location.hpp"

namespace hcp::lint {

std::string Location::text() const {
  if (line <= 0) return file;
  // Appended piece by piece: `":" + std::to_string(col)` inlined into operator+ trips GCC 12's -Wrestrict
  // false positive (PR 105329) under -O3.
  std::string out = file;
  out += ':';
  out += std::to_string(line);
  if (col > 0) {
    out += ':';
    out += std::to_string(col);
  }
  return out;
}

}  // namespace hcp::lint

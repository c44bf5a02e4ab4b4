#include "hcp/lint/location.hpp"

namespace hcp::lint {

std::string Location::text() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + (col > 0 ? ":" + std::to_string(col) : "");
}

}  // namespace hcp::lint

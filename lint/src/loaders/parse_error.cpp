#include "hcp/error.hpp"
#include "hcp/lint/loaders.hpp"

namespace hcp::lint {

void throw_parse_error(const Location& where, const std::string& message) {
  throw Error(Errc::parse, where.text() + ": " + message);
}

}  // namespace hcp::lint

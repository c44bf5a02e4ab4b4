#include "hcp/workflow_command.hpp"

#include "hcp/printable.hpp"

namespace hcp {
namespace {

std::string escaped(std::string_view text, bool property) {
  std::string out;
  for (char c : printable(text)) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else if (property && c == ':') out += "%3A";
    else if (property && c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

}  // namespace

std::string workflow_data(std::string_view text) { return escaped(text, false); }
std::string workflow_property(std::string_view text) { return escaped(text, true); }

}  // namespace hcp

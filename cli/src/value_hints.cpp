#include "value_hints.hpp"

#include <map>

namespace hcp::cli {
namespace {

// Options live as long as the App that owns them, for the whole run.
std::map<const CLI::Option*, ValueHint>& hints() {
  static std::map<const CLI::Option*, ValueHint> by_option;
  return by_option;
}

}  // namespace

CLI::Option* hint_values(CLI::Option* option, ValueHint hint) {
  hints()[option] = std::move(hint);
  return option;
}

const ValueHint* value_hint(const CLI::Option* option) {
  const auto it = hints().find(option);
  return it == hints().end() ? nullptr : &it->second;
}

}  // namespace hcp::cli

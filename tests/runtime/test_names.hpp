// Test-case names built by appending each piece (integers through std::to_string): GCC 12 warns (-Wrestrict, a
// false positive) on "literal" + std::string chains in an optimised build.
#pragma once

#include <string>
#include <type_traits>

namespace hcp::testing {

template <class... Parts>
std::string name_of(const Parts&... parts) {
  std::string s;
  auto add = [&s](const auto& part) {
    using Part = std::decay_t<decltype(part)>;
    static_assert(!std::is_same_v<Part, char> && !std::is_same_v<Part, bool>, "a char or bool would print as a number");
    if constexpr (std::is_integral_v<Part>) {
      s += std::to_string(part);
    } else {
      s += part;
    }
  };
  (add(parts), ...);
  return s;
}

}  // namespace hcp::testing

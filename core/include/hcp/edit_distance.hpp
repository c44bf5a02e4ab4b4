// Shared by the linter's key suggestions and the command line's "did you mean".
#pragma once

#include <string_view>

namespace hcp {

// Edit distance counting a swap of two neighbouring characters as one edit, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace hcp

// Shared by the linter's key suggestions and the command line's "did you mean".
#pragma once

#include <cstddef>
#include <string_view>

namespace hcp {

// Edit distance counting a swap of two neighbouring characters as one edit, for "did you mean" suggestions; any
// distance above `limit` is returned as limit + 1 (the callers only want near names, and stop early).
size_t edit_distance(std::string_view a, std::string_view b, size_t limit = static_cast<size_t>(-1) - 1);

}  // namespace hcp

#pragma once

#include <cstddef>
#include <cstdint>

namespace hcp::logscan {

// Number of '\n' bytes in [begin, end): line numbers without looking at every line (AVX2 when the CPU has it).
uint64_t count_newlines(const char* begin, const char* end);

}  // namespace hcp::logscan

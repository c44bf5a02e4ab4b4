// A regular file scanned through mapped windows, robust to the file shrinking while it is read.
#pragma once

#include <cstdint>
#include <string>

#include "hcp/logscan/scanner.hpp"

namespace hcp::logscan {

// Scans fd, a regular file of `size` bytes when it was opened, as the input `name`. False, with nothing fed, when
// the first window cannot be mapped (the caller then reads the file).
bool scan_mapped(LogScanner& scanner, int fd, const std::string& name, uint64_t size);

}  // namespace hcp::logscan

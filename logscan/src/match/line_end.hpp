// The end of a line and whether it holds an ESC byte, in one pass: the scanner needs both for every line it hands
// to an extractor (ANSI colour codes are stripped only from lines that have them), and two memchr passes over each
// iteration line were a tenth of the scan.
#pragma once

#include <cstddef>

namespace hcp::logscan {

struct LineEnd {
  size_t end;   // offset of the '\n' at or after `from`, or n
  bool escape;  // an ESC (0x1b), or a CR that is not the last byte before the '\n', lies in [from, end): the line
                // needs view_line (ANSI codes, '\r' redraws)
};

LineEnd find_line_end(const char* data, size_t from, size_t n);

}  // namespace hcp::logscan

// Stage one of the scan: which lines of a region hold a trigger literal, with their bounds, keys and line numbers.
// It depends only on the bytes; the extractors then see exactly these lines, plus every line inside an open
// traceback or YAML list, which the scanner walks itself (scanner.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "literal_set.hpp"

namespace hcp::logscan {

struct LineJob {
  size_t start, end;  // [start, end) within the region; end is the '\n' or the region's end
  size_t key;         // where the first literal starts
  uint64_t number;    // 1-based line number in the input
  uint32_t triggers;  // the extractors the line goes to
  bool escape;        // the line holds an ESC byte (ANSI colour codes to strip)
};

struct Region {
  const char* data = nullptr;
  size_t size = 0;
  uint64_t lines_before = 0;  // lines of the input before data
  uint64_t newlines = 0;      // '\n' bytes in the region (set by find)
  std::vector<LineJob> jobs;
};

class LineFinder {
 public:
  LineFinder();

  // Fills r.jobs and r.newlines for r.data[0, r.size). The cursor stops at each line with a literal; the literals
  // later on that line are collected by searching up to its end - except on an iteration line, known by the
  // counters after its key, whose remaining bytes are never fingerprinted (it is read as an iteration line only).
  void find(Region& r) const;

 private:
  bool settled(const char* p, size_t line_end, size_t at, uint64_t ids) const;
  uint32_t triggers_of(uint64_t ids) const;

  LiteralSet literals_;
  std::vector<uint32_t> trigger_of_;  // by literal id
  uint64_t settles_line_ = 0;         // literals whose line may be settled by its counters
};

}  // namespace hcp::logscan

// What scanning one input made the scanner's extractors do, recorded so that another scanner can replay it: the
// parallel scan of many files (scan_paths with jobs > 1) reads, decodes and searches each file on a worker, and
// the report is built by replaying the files' tapes in input order on one scanner - the same report as a
// sequential scan, for any number of threads. A large input's tape comes in segments of about kSegmentBytes,
// replayed while the worker still reads the input: the memory of a parallel scan does not grow with file sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hcp/logscan/report.hpp"

namespace hcp::logscan {

struct InputTape {
  enum class Kind : uint8_t { dispatch, settled_iteration };
  struct Entry {
    Kind kind;
    int32_t rank;
    uint32_t triggers;
    uint64_t number;
    size_t text, size;  // in arena
  };
  std::string name;
  std::vector<Entry> entries;
  std::string arena;
  FileReport file;     // the input's report when it ended
  bool ended = false;  // close_input ran (else the input failed to open: file.error says why)
  std::optional<FileReport> error_after;  // the input failed after part of it was read
  // Segments: the first starts the input, the last ends it (name, file, ended and error_after are the last's).
  bool first = true, last = true;

  static constexpr size_t kSegmentBytes = 1u << 20;

  size_t bytes() const { return arena.size() + entries.size() * sizeof(Entry); }
  // For a segment: room for kSegmentBytes of lines, or of entries, without growing.
  void reserve() {
    arena.reserve(kSegmentBytes);
    entries.reserve(kSegmentBytes / sizeof(Entry));
  }
  void clear() {  // keeps the capacity
    name.clear();
    entries.clear();
    arena.clear();
    file = FileReport{};
    ended = false;
    error_after.reset();
    first = last = true;
  }
};

}  // namespace hcp::logscan

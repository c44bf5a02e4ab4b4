// What scanning one input made the scanner's extractors do, recorded so that another scanner can replay it: the
// parallel scan of many files (scan_paths with jobs > 1) reads, decodes and searches each file on a worker, and
// the report is built by replaying the files' tapes in input order on one scanner - the same report as a
// sequential scan, for any number of threads.
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


  size_t bytes() const { return arena.size() + entries.size() * sizeof(Entry); }
};

}  // namespace hcp::logscan

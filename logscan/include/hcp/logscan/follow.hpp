// Live reading: follow log files and directories while a job writes them (hcp-logscan --follow).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "hcp/logscan/scanner.hpp"

namespace hcp::logscan {

struct FollowOptions {
  int poll_ms = 250;            // how often the files are looked at
  double until_idle_s = 0;      // stop after this long without new bytes (0: until stopped)
  const std::atomic<bool>* stop = nullptr;  // set (by a signal handler) to stop
};

// Reads the paths as they grow: files, and the files that appear in directories (per-rank logs). A file that is
// replaced (rotated) is read to its end and its successor from the start; a file that shrinks (truncated) is read
// again from the start; a path that does not exist yet is waited for. Each event goes to on_event as soon as a
// poll sees it; on_event returns false to stop at once. Returns the report of everything read.
ScanReport follow_paths(const std::vector<std::string>& paths, const ScanOptions& options,
                        const FollowOptions& follow, const std::function<bool(const LiveEvent&)>& on_event);

}  // namespace hcp::logscan

// `hcp-logscan --follow`: read logs while a job writes them, print each event as it appears.
#pragma once

#include <string>
#include <vector>

#include "hcp/logscan/scanner.hpp"

namespace hcp::cli {

struct FollowArgs {
  std::vector<std::string> paths;
  std::string format = "text";        // text: a line per event; json: a JSON object per line
  std::vector<std::string> exit_on;   // verdict names and "failure"
  int poll_ms = 250;
  double until_idle_s = 0;
};

// Exit codes: kExitStopCp / kExitStopFailure when an --exit-on event appeared, else as a scan of what was read
// (kExitInput also for a path of which nothing was read).
int run_follow(const FollowArgs& args, const logscan::ScanOptions& options);

}  // namespace hcp::cli

// Lists the files under a directory with several threads: a per-rank log directory of a large job is thousands of
// directories (torchrun --log-dir writes attempt_N/<rank>/stdout.log), and listing them one after the other took
// a third of the scan of such a directory.
#pragma once

#include <string>
#include <vector>

namespace hcp::logscan {

struct WalkEntry {
  std::string path;
  std::string error;  // empty for a file; else why `path` (a directory, or a FIFO, device, socket or a link to
                      // one or to nothing) could not be read
};

// The regular files under `root`, recursively: names that start with '.' are skipped, symbolic links to files are
// files, symbolic links to directories are not followed. A directory that cannot be listed, and any other entry
// that is not a regular file, is an entry with its error (never left out silently). In no particular order;
// `jobs` threads list directories in parallel.
std::vector<WalkEntry> walk_directory(const std::string& root, unsigned jobs);

}  // namespace hcp::logscan

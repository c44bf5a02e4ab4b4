#include "mapped_scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mapped_window.hpp"

namespace hcp::logscan {
namespace {

uint64_t current_size(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

// 16 MiB windows: no copy out of the page cache (the copy was a third of the time), and unmapping each window
// keeps the resident size bounded whatever the file size. The pages are mapped by the faults of the scan, which
// map many cached pages at once; MAP_POPULATE mapped them one at a time and doubled the kernel time (95 -> 45 ms
// of system time on a 1 GiB log). Each window is clipped to the file's size at that moment, so a file truncated
// between windows stops cleanly; one truncated during a window reads zeros past its end (see MappedWindow).
bool scan_mapped(LogScanner& scanner, int fd, const std::string& name, uint64_t size) {
  constexpr uint64_t kWindow = 16u << 20;
  if (size == 0) return false;
  bool shrank = false;
  for (uint64_t offset = 0; offset < size && !shrank; offset += kWindow) {
    if (offset > 0) {
      if (const uint64_t now = current_size(fd); now < size) {
        shrank = true;
        size = now;
        if (now <= offset) break;
      }
    }
    const MappedWindow window(fd, offset, static_cast<size_t>(std::min(kWindow, size - offset)));
    if (!window.data()) {
      if (offset == 0) return false;  // nothing was fed
      scanner.input_error(name, std::string("mmap failed: ") + std::strerror(errno));
      return true;
    }
    if (offset == 0) scanner.begin_input(name);
    scanner.feed(window.data(), window.size());
    shrank = shrank || window.shrank();
  }
  if (shrank) {
    const uint64_t now = current_size(fd);
    scanner.input_damaged(now, "the file shrank to " + std::to_string(now) +
                                   " bytes while it was read (truncated or rotated); the rest was not scanned");
  }
  scanner.end_input();
  return true;
}

}  // namespace hcp::logscan

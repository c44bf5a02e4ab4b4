// A read-only mapping of part of a regular file that survives the file shrinking under it.
//
// A log is often truncated while it is read (logrotate's copytruncate, a job restarted onto the same file), and a
// read of a mapped page past the new end of the file raises SIGBUS, which kills the process. While a window is
// mapped, a SIGBUS at an address inside it is answered by mapping zero pages from the file's new end to the end of
// the window, so the faulting read resumes on zeros; the window then says that the file shrank, and the caller stops there. A SIGBUS
// anywhere else goes to the handler that was installed before (by default: the process ends as it would have).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hcp::logscan {

class MappedWindow {
 public:
  // Maps [offset, offset + len) of fd. When it fails (or every one of the process's window slots is in use),
  // data() is null and errno tells why (EBUSY for the slots).
  MappedWindow(int fd, uint64_t offset, size_t len);
  ~MappedWindow();
  MappedWindow(const MappedWindow&) = delete;
  MappedWindow& operator=(const MappedWindow&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return len_; }
  // Whether a read reached past the file's end: the bytes from the first such page on read as zeros.
  bool shrank() const;

 private:
  const char* data_ = nullptr;
  size_t len_ = 0;
  int slot_ = -1;
};

}  // namespace hcp::logscan

// Files, directories (recursively, sorted) and "-" for standard input. Regular files are mapped (mapped_scan.hpp);
// standard input, and a file that cannot be mapped, are read in 256 KiB chunks.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "hcp/logscan/scanner.hpp"

#include "mapped_scan.hpp"

namespace hcp::logscan {
namespace {

// Small enough to stay in the L2 cache between the read and the scan; large reads were measurably slower.
constexpr size_t kChunk = 256u << 10;

void scan_fd(LogScanner& scanner, int fd, const std::string& name, std::vector<char>& buf) {
  scanner.begin_input(name);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      scanner.input_error(name, std::string("read failed: ") + std::strerror(errno));
      return;
    }
    if (n == 0) break;
    scanner.feed(buf.data(), static_cast<size_t>(n));
  }
  scanner.end_input();
}

void scan_file(LogScanner& scanner, const std::string& path, std::vector<char>& buf) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    scanner.input_error(path, errno == ENOENT ? "no such file" : std::strerror(errno));
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    // A FIFO or device could block forever; use "-" to scan a pipe.
    scanner.input_error(path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file (use - for a pipe)");
    ::close(fd);
    return;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (!scan_mapped(scanner, fd, path, static_cast<uint64_t>(st.st_size))) scan_fd(scanner, fd, path, buf);
  ::close(fd);
}

}  // namespace

ScanReport scan_paths(const std::vector<std::string>& paths, const ScanOptions& options) {
  namespace fs = std::filesystem;
  LogScanner scanner(options);
  std::vector<char> buf(kChunk);
  for (const std::string& path : paths) {
    if (path == "-") {
      scan_fd(scanner, STDIN_FILENO, "<stdin>", buf);
      continue;
    }
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      scan_file(scanner, path, buf);
      continue;
    }
    std::vector<std::string> files;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) {
      scanner.input_error(path, "cannot list directory: " + ec.message());
      continue;
    }
    for (; it != end; it.increment(ec)) {
      if (ec) break;
      const std::string name = it->path().filename().string();
      if (!name.empty() && name[0] == '.') {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec)) files.push_back(it->path().string());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) scanner.input_error(path, "directory holds no files");
    for (const std::string& f : files) scan_file(scanner, f, buf);
  }
  return scanner.finish();
}

}  // namespace hcp::logscan

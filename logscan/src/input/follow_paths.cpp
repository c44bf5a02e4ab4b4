#include "hcp/logscan/follow.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "hcp/error.hpp"

namespace hcp::logscan {
namespace {

constexpr size_t kChunk = 1 << 20;
// A stream (FIFO, <(cmd), device) is read at most this much a tick, so one that never pauses (/dev/zero) still
// lets events, --exit-on and --until-idle be checked between reads.
constexpr size_t kStreamBytesPerTick = 16 * kChunk;

// One followed file: the descriptor read from, the file it was opened on, how far it was read.
struct Followed {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t offset = 0;
  int input = -1;      // -1: no input open for it (waiting for the path to be reopened)
  int generation = 0;  // how many files this path has been (rotations)
  bool ignored = false;  // a file already read under another name (a rotated copy), or one that cannot be read
  bool stream = false;   // a FIFO, pipe or character device: read as it comes, no offsets, rotation or truncation
};

class Follower {
 public:
  Follower(const ScanOptions& options) : scanner_(options), buf_(kChunk) {}
  ~Follower() {
    for (auto& [path, f] : files_) {
      if (f.fd >= 0) ::close(f.fd);
    }
  }

  // Opens the files the paths name now; returns true when bytes were read.
  bool tick(const std::vector<std::string>& paths) {
    bool grew = false;
    for (const ScanInput& in : expand_inputs(paths)) {
      if (in.kind == ScanInput::Kind::stdin_) throw Error(Errc::invalid_argument, "--follow reads files and directories, not -");
      if (in.kind != ScanInput::Kind::file || files_.count(in.path)) continue;
      Followed f;
      if (open_file(in.path, f)) files_.emplace(in.path, f);  // else not there yet: looked for again next tick
    }
    for (auto& [path, f] : files_) {
      if (f.ignored) continue;
      if (follow(path, f)) {
        grew = true;
      } else if (f.input >= 0) {
        scanner_.settle_learning_of(f.input);  // it stopped growing: read what it holds with what was learned
      }
    }
    return grew;
  }
  LogScanner& scanner() { return scanner_; }

  ScanReport finish() {
    for (auto& [path, f] : files_) {
      if (f.fd < 0 || f.input < 0) continue;
      read_to_end(f);
      scanner_.close_input(f.input);
      ::close(f.fd);
      f.fd = -1;
    }
    return scanner_.finish();
  }

 private:
  // Opens path for f; false when it does not exist (yet). A file already followed under another name (logrotate
  // renamed it) is not read twice; one that cannot be opened for another reason is reported and left.
  bool open_file(const std::string& path, Followed& f) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) return false;
      scanner_.input_error(path, std::string("cannot follow: ") + std::strerror(errno));
      f.ignored = true;
      return true;
    }
    struct stat st{};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return false;
    }
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)) {
      // `--follow <(kubectl logs -f ...)`, a named pipe, a terminal: followed as a stream from its start.
      f.fd = fd;
      f.stream = true;
      f.input = scanner_.open_input(path);
      return true;
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      scanner_.input_error(path, "cannot follow: not a regular file, pipe or device");
      f.ignored = true;
      return true;
    }
    if (!read_inodes_.insert({st.st_dev, st.st_ino}).second) {
      ::close(fd);
      f.ignored = true;
      return true;
    }
    f.fd = fd;
    f.dev = st.st_dev;
    f.ino = st.st_ino;
    f.offset = 0;
    f.input = scanner_.open_input(f.generation == 0 ? path : path + " (after rotation " + std::to_string(f.generation) + ")");
    return true;
  }

  bool read_to_end(Followed& f) {
    bool any = false;
    if (f.stream) {
      // What the stream holds now (non-blocking): EAGAIN or a writer not there (yet, or any more) reads nothing.
      for (size_t got = 0; got < kStreamBytesPerTick;) {
        const ssize_t n = ::read(f.fd, buf_.data(), buf_.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        scanner_.feed_input(f.input, buf_.data(), static_cast<size_t>(n));
        got += static_cast<size_t>(n);
        any = true;
      }
      return any;
    }
    for (;;) {
      const ssize_t n = ::pread(f.fd, buf_.data(), buf_.size(), static_cast<off_t>(f.offset));
      if (n <= 0) return any;
      scanner_.feed_input(f.input, buf_.data(), static_cast<size_t>(n));
      f.offset += static_cast<uint64_t>(n);
      any = true;
    }
  }

  bool follow(const std::string& path, Followed& f) {
    if (f.stream) return read_to_end(f);
    bool grew = false;
    if (f.fd < 0) {  // rotated away and not reopened yet
      return open_file(path, f) && !f.ignored && read_to_end(f);
    }
    struct stat named{};
    const bool exists = ::stat(path.c_str(), &named) == 0;
    if (exists && (named.st_ino != f.ino || named.st_dev != f.dev)) {
      // Rotated: the old file's last lines, then the new file from its start.
      grew = read_to_end(f);
      scanner_.close_input(f.input);
      ::close(f.fd);
      f.fd = -1;
      f.input = -1;
      ++f.generation;
      if (!open_file(path, f) || f.ignored) return grew;
    }
    struct stat st{};
    if (::fstat(f.fd, &st) == 0 && static_cast<uint64_t>(st.st_size) < f.offset) {
      // Truncated in place (a job restarted with `>` redirection): read it again as a new input.
      scanner_.close_input(f.input);
      ++f.generation;
      f.offset = 0;
      f.input = scanner_.open_input(path + " (after truncation " + std::to_string(f.generation) + ")");
    }
    return read_to_end(f) || grew;
  }

  LogScanner scanner_;
  std::vector<char> buf_;
  std::map<std::string, Followed> files_;
  std::set<std::pair<dev_t, ino_t>> read_inodes_;  // files read so far, whatever their name now
};

}  // namespace

ScanReport follow_paths(const std::vector<std::string>& paths, const ScanOptions& options,
                        const FollowOptions& follow, const std::function<bool(const LiveEvent&)>& on_event) {
  using Clock = std::chrono::steady_clock;
  Follower f(options);
  auto last_growth = Clock::now();
  for (;;) {
    if (f.tick(paths)) last_growth = Clock::now();
    for (const LiveEvent& e : f.scanner().poll()) {
      if (!on_event(e)) return f.finish();
    }
    if (follow.stop && follow.stop->load()) break;
    if (follow.until_idle_s > 0 &&
        std::chrono::duration<double>(Clock::now() - last_growth).count() >= follow.until_idle_s) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(follow.poll_ms));
  }
  ScanReport r = f.finish();
  return r;
}

}  // namespace hcp::logscan

// Files, directories (recursively, sorted) and "-" for standard input. A regular file over 1 MiB is mapped
// (mapped_scan.hpp); standard input, a smaller file and one that cannot be mapped are read.
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "hcp/logscan/scanner.hpp"

#include "input_tape.hpp"
#include "mapped_scan.hpp"
#include "walk_dirs.hpp"

namespace hcp::logscan {
namespace {

// Small enough to stay in the L2 cache between the read and the scan; large reads were measurably slower.
constexpr size_t kChunk = 256u << 10;
constexpr uint64_t kReadBelow = 1u << 20;

// Files of /proc and /sys say 0 and still hold text: those are read to their end.
uint64_t known_size(const struct stat& st) {
  return st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : UINT64_MAX;
}

// Reads fd to its end; a regular file only to the size fstat gave (one read instead of two for a small file, and
// the same snapshot a mapping of it would read). The first `have` bytes of buf were read already.
void scan_fd(LogScanner& scanner, int fd, const std::string& name, std::vector<char>& buf,
             uint64_t size = UINT64_MAX, size_t have = 0) {
  // Begun at the first bytes (or the end): an input whose first read fails is one unreadable input, not an empty
  // one and then an error (a closed standard input was listed twice).
  bool begun = false;
  auto begin = [&] {
    if (!begun) scanner.begin_input(name);
    begun = true;
  };
  uint64_t total = have;
  if (have > 0) begin(), scanner.feed(buf.data(), have);
  while (total < size) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      scanner.input_error(name, std::string("read failed: ") + std::strerror(errno));
      return;
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    begin();
    scanner.feed(buf.data(), static_cast<size_t>(n));
  }
  begin();
  scanner.end_input();
}

// Large files are mapped on the workers of a parallel scan too: reading them copied every byte once more (a
// seventh of the CPU time on 16 x 64 MiB), where their 16 MiB windows unmap a few times a second.
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
  // Small files are read: mapping costs two system calls and page faults, more than a read of 1 MiB copies.
  if (static_cast<uint64_t>(st.st_size) <= kReadBelow ||
      !scan_mapped(scanner, fd, path, static_cast<uint64_t>(st.st_size))) {
    scan_fd(scanner, fd, path, buf, known_size(st));
  }
  ::close(fd);
}

// "rank_2.log" before "rank_10.log", "attempt_9" before "attempt_10": runs and ranks in the order they happened.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      size_t is = i, js = j;  // compare without leading zeros: by length, then digit by digit
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      if (const int c = a.compare(is, ie - is, b, js, je - js); c != 0) return c < 0;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

}  // namespace

std::vector<ScanInput> expand_inputs(const std::vector<std::string>& paths, unsigned jobs) {
  namespace fs = std::filesystem;
  std::vector<ScanInput> out;
  std::vector<ScanInput> files;
  for (const std::string& path : paths) {
    if (path == "-") {  // standard input once, however often it is named
      if (out.empty()) out.push_back({ScanInput::Kind::stdin_, "<stdin>", ""});
      continue;
    }
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      files.push_back({ScanInput::Kind::file, path, ""});
      continue;
    }
    bool found = false;
    for (WalkEntry& e : walk_directory(path, jobs)) {
      found = found || e.error.empty() || e.path == path;
      files.push_back({e.error.empty() ? ScanInput::Kind::file : ScanInput::Kind::error, std::move(e.path),
                       std::move(e.error)});
    }
    if (!found) files.push_back({ScanInput::Kind::error, path, "directory holds no files"});
  }
  // Standard input first, then every file in natural order, however the paths were given: the report does not
  // depend on the order of the arguments.
  std::stable_sort(files.begin(), files.end(),
                   [](const ScanInput& a, const ScanInput& b) { return natural_less(a.path, b.path); });
  files.erase(std::unique(files.begin(), files.end(),
                          [](const ScanInput& a, const ScanInput& b) { return a.path == b.path && a.kind == b.kind; }),
              files.end());
  out.insert(out.end(), files.begin(), files.end());
  return out;
}

namespace {

void scan_input(LogScanner& scanner, const ScanInput& in, std::vector<char>& buf) {
  switch (in.kind) {
    case ScanInput::Kind::stdin_: scan_fd(scanner, STDIN_FILENO, in.path, buf); break;
    case ScanInput::Kind::file: scan_file(scanner, in.path, buf); break;
    case ScanInput::Kind::error: scanner.input_error(in.path, in.error); break;
  }
}

// Tape segments waiting to be replayed, per worker: the bound on the memory of a parallel scan.
constexpr size_t kTapeBudgetPerThread = 8u << 20;

struct Stopped {};  // unwinds a worker waiting for room when the scan stops

// `jobs - 1` workers read, decode and search the inputs in input order, each recording what the input makes the
// extractors do into tape segments; this thread replays the segments in input order, those of a large file while
// its worker still reads it, and scans inputs itself while it waits (below). A worker whose input is not the one
// being replayed waits while the segments waiting exceed the budget, and takes a new input only within it (or when
// that input is the next to replay): memory is bounded whatever the sizes, and the replay always progresses.
ScanReport scan_parallel(const std::vector<ScanInput>& inputs, const ScanOptions& options, unsigned jobs) {
  const size_t n = inputs.size();
  std::vector<std::deque<std::unique_ptr<InputTape>>> segments(n);
  std::mutex mu;
  // Two conditions, so that a segment published wakes only the merging thread, and only when it waits for that
  // input, and a segment replayed wakes workers only when one waits for room (a wake-up per file for everyone was
  // a tenth of the time on a directory of small per-rank files).
  std::condition_variable merge_cv, room_cv;
  size_t waiting_for = SIZE_MAX;  // the input the merging thread waits for
  int workers_waiting = 0;
  size_t next = 0, replaying = 0, buffered = 0;
  const size_t budget = kTapeBudgetPerThread * jobs;
  bool stop = false;
  std::exception_ptr failure;  // a worker's exception, rethrown by the merging thread
  // Replayed segments, kept for reuse: full-sized ones for the inputs that fill segments, others for the first
  // segment of an input (most inputs of a per-rank directory fill less than one). Allocating and faulting in a
  // fresh arena for every segment was a third of the time of a directory of large files; reserving a full one for
  // every small file, as much on a directory of small ones.
  const size_t kept = budget / InputTape::kSegmentBytes + 2 * jobs;
  std::vector<std::unique_ptr<InputTape>> spare_full, spare_small;
  auto fresh_segment = [&](const std::string& name, bool full_size) {
    std::unique_ptr<InputTape> t;
    {
      std::lock_guard lock(mu);
      auto& pool = full_size || spare_small.empty() ? spare_full : spare_small;
      if (!pool.empty()) {
        t = std::move(pool.back());
        pool.pop_back();
      }
    }
    if (t) {
      t->clear();
    } else {
      t = std::make_unique<InputTape>();
    }
    if (full_size) t->reserve();
    t->name = name;
    return t;
  };
  auto keep_segment = [&](std::unique_ptr<InputTape> t) {  // under the lock
    auto& pool = t->arena.capacity() >= InputTape::kSegmentBytes ? spare_full : spare_small;
    if (pool.size() < kept) pool.push_back(std::move(t));
  };

  // Hands a segment of input k to the merging thread; then, if more of k follows and k is not the input being
  // replayed, waits for room. Called without the lock.
  auto publish = [&](size_t k, std::unique_ptr<InputTape> segment) {
    std::unique_lock lock(mu);
    const bool last = segment->last;
    buffered += segment->bytes();
    segments[k].push_back(std::move(segment));
    if (waiting_for == k) merge_cv.notify_one();
    if (last) return;
    ++workers_waiting;
    room_cv.wait(lock, [&] { return stop || buffered < budget || replaying == k; });
    --workers_waiting;
    if (stop) throw Stopped{};
  };
  // One scanner per worker for all its inputs (building one per file was a fifth of the time on small per-rank
  // files; its own report is never used, only the lines each input hands to its extractors, which depend on that
  // input alone).
  auto work = [&] {
    try {
      std::vector<char> buf(kChunk);
      LogScanner scanner(options);
      for (;;) {
        size_t k;
        {
          std::unique_lock lock(mu);
          ++workers_waiting;
          room_cv.wait(lock, [&] { return stop || next >= n || buffered < budget || next == replaying; });
          --workers_waiting;
          if (stop || next >= n) return;
          k = next++;
        }
        const std::string& name = inputs[k].path;  // "<stdin>" for standard input
        std::unique_ptr<InputTape> segment = fresh_segment(name, false);
        bool first = true;
        scanner.record_to(segment.get(), [&]() -> InputTape* {
          segment->first = std::exchange(first, false);
          segment->last = false;
          publish(k, std::move(segment));
          segment = fresh_segment(name, true);
          return segment.get();
        });
        scan_input(scanner, inputs[k], buf);
        scanner.record_to(nullptr);
        segment->first = first;
        publish(k, std::move(segment));
      }
    } catch (const Stopped&) {
    } catch (...) {
      std::lock_guard lock(mu);
      if (!failure) failure = std::current_exception();
      stop = true;
      merge_cv.notify_all();
      room_cv.notify_all();
    }
  };
  // This thread is one of the `jobs`: it replays every segment that is ready, in input order, and while the input
  // to replay next is not ready it scans the next input itself onto tapes, as a worker would, replaying between its
  // own segments. So `jobs` threads scan and none waits idle: a merging thread that only replayed was a third
  // thread on two cores (--jobs 2 was 1.6x --jobs 1 on 16 x 64 MiB, where two independent halves make 1.9x), and
  // one that read large inputs in their turn, without a tape, sat idle until the inputs before them were replayed.
  LogScanner merged(options), helper(options);
  std::vector<char> buf(kChunk);
  size_t k = 0;  // the input replayed next
  // Replays what is ready of input k, and of the inputs after it once k ends.
  auto replay_ready = [&] {
    while (k < n) {
      std::unique_ptr<InputTape> segment;
      {
        std::lock_guard lock(mu);
        if (failure) std::rethrow_exception(failure);
        if (segments[k].empty()) return;
        segment = std::move(segments[k].front());
        segments[k].pop_front();
      }
      merged.replay(*segment);
      std::lock_guard lock(mu);
      buffered -= segment->bytes();
      if (segment->last) replaying = ++k;
      if (workers_waiting > 0) room_cv.notify_all();
      keep_segment(std::move(segment));
    }
  };
  // Waits until input k has a segment ready (or a worker failed).
  auto wait_for_k = [&] {
    std::unique_lock lock(mu);
    waiting_for = k;
    merge_cv.wait(lock, [&] { return !segments[k].empty() || failure; });
    waiting_for = SIZE_MAX;
  };
  // Scans input m (claimed, after k) onto tapes. Its segments wait for their turn with the workers' and count in
  // the budget; over the budget this thread replays the inputs before m as they come rather than scan further.
  auto scan_here = [&](size_t m) {
    const std::string& name = inputs[m].path;
    std::unique_ptr<InputTape> segment = fresh_segment(name, false);
    bool first = true;
    auto hand_over = [&] {
      std::lock_guard lock(mu);
      buffered += segment->bytes();
      segments[m].push_back(std::move(segment));
    };
    helper.record_to(segment.get(), [&]() -> InputTape* {
      segment->first = std::exchange(first, false);
      segment->last = false;
      hand_over();
      for (replay_ready(); k < m; replay_ready()) {
        {
          std::lock_guard lock(mu);
          if (buffered < budget) break;
        }
        wait_for_k();
      }
      segment = fresh_segment(name, true);
      return segment.get();
    });
    scan_input(helper, inputs[m], buf);
    helper.record_to(nullptr);
    segment->first = first;
    hand_over();
  };
  std::vector<std::thread> workers;
  try {
    for (unsigned i = 1; i < jobs; ++i) workers.emplace_back(work);
    for (replay_ready(); k < n; replay_ready()) {
      size_t m = SIZE_MAX;
      {
        std::lock_guard lock(mu);
        if (!failure && next < n && (buffered < budget || next == k)) m = next++;
      }
      if (m == k) {  // the next to replay: scanned on the merged scanner itself, with no tape to record and replay
        scan_input(merged, inputs[k], buf);
        std::lock_guard lock(mu);
        replaying = ++k;
        if (workers_waiting > 0) room_cv.notify_all();
      } else if (m != SIZE_MAX) {
        scan_here(m);
      } else {
        wait_for_k();
      }
    }
  } catch (...) {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    room_cv.notify_all();
    for (std::thread& t : workers) t.join();
    throw;
  }
  for (std::thread& t : workers) t.join();
  return merged.finish();
}

}  // namespace

namespace {

// The cores this process may run on (taskset, a container's cpuset), not the machine's: a second thread on a
// process held to one core only takes turns with the first.
unsigned available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

ScanReport scan_paths(const std::vector<std::string>& paths, const ScanOptions& options) {
  unsigned jobs = options.jobs == 0 ? available_cores() : options.jobs;
  const std::vector<ScanInput> inputs = expand_inputs(paths, jobs);
  const bool threads = jobs > 1;
  jobs = static_cast<unsigned>(std::min<size_t>(jobs, inputs.size()));
  if (jobs > 1) return scan_parallel(inputs, options, jobs);
  LogScanner scanner(options);
  scanner.decode_ahead(threads);  // one input: its decoding may take the second thread
  std::vector<char> buf(kChunk);
  for (const ScanInput& in : inputs) scan_input(scanner, in, buf);
  return scanner.finish();
}

}  // namespace hcp::logscan

// A log that shrinks while it is read (logrotate's copytruncate, a restarted job writing the same file) must not
// end the process with SIGBUS: the mapped reader reads zeros past the new end and reports the shrink as the file's
// damage. Simulated deterministically by scanning with the size the file had before it shrank, and for real by a
// thread truncating the file during scans; a SIGBUS that is not the reader's still reaches the handler that was
// there before, or ends the process as before.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "hcp/logscan/scanner.hpp"

#include "input/mapped_scan.hpp"
#include "input/mapped_window.hpp"

namespace hcp::logscan {
namespace {

namespace fs = std::filesystem;

// A file in a fresh temporary directory, removed with it.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    std::string pattern = (fs::temp_directory_path() / "hcp-mapped-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    path_ = dir_ + "/train.log";
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

std::string iteration_lines(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) {
    out += " [2026-11-30 10:00:00] iteration " + std::to_string(i) + "/ 100000 | consumed samples: " +
           std::to_string(i * 8) + " | elapsed time per iteration (ms): 812.3 | throughput per GPU (TFLOP/s/GPU): "
           "402.5 | lm loss: 1.0E+00 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
  }
  return out;
}

// The report of the file scanned as if it had had `claimed` bytes when it was opened.
ScanReport scan_claiming(const std::string& path, uint64_t claimed) {
  LogScanner scanner;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  EXPECT_TRUE(scan_mapped(scanner, fd, path, claimed));
  ::close(fd);
  return scanner.finish();
}

TEST(MappedWindow, PagesPastTheEndReadAsZerosAndTheShrinkIsTold) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const TempFile file(std::string(page + 100, 'x'));
  const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  {
    const MappedWindow whole(fd, 0, page + 100);
    ASSERT_NE(whole.data(), nullptr);
    size_t xs = 0;
    for (size_t i = 0; i < whole.size(); ++i) xs += whole.data()[i] == 'x';
    EXPECT_EQ(xs, page + 100);
    EXPECT_FALSE(whole.shrank());
  }
  {
    const MappedWindow longer(fd, 0, 5 * page);  // as if the file had been 5 pages long
    ASSERT_NE(longer.data(), nullptr);
    size_t xs = 0, zeros = 0;
    for (size_t i = 0; i < longer.size(); ++i) {
      xs += longer.data()[i] == 'x';
      zeros += longer.data()[i] == 0;
    }
    EXPECT_EQ(xs, page + 100);
    EXPECT_EQ(zeros, 4 * page - 100);
    EXPECT_TRUE(longer.shrank());
  }
  const MappedWindow again(fd, 0, page);  // a slot used before starts afresh
  ASSERT_NE(again.data(), nullptr);
  EXPECT_EQ(again.data()[0], 'x');
  EXPECT_FALSE(again.shrank());
  ::close(fd);
}

TEST(MappedScan, AFileThatShrankWithinAWindowIsReportedAsDamaged) {
  const std::string text = iteration_lines(2000);
  const TempFile file(text);
  const ScanReport r = scan_claiming(file.path(), text.size() + (40u << 20));
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_FALSE(r.files[0].error);
  ASSERT_TRUE(r.files[0].damage);
  EXPECT_EQ(*r.files[0].damage, "byte " + std::to_string(text.size()) + ": the file shrank to " +
                                    std::to_string(text.size()) +
                                    " bytes while it was read (truncated or rotated); the rest was not scanned");
  EXPECT_EQ(r.progress.iteration_lines, 2000);  // all that was there was read
}

TEST(MappedScan, AFileThatShrankBetweenWindowsStopsAtItsNewEnd) {
  std::string text = iteration_lines(1);
  while (text.size() < (20u << 20)) text += text;  // beyond the first 16 MiB window
  const TempFile file(text);
  const ScanReport r = scan_claiming(file.path(), text.size() + (40u << 20));
  ASSERT_TRUE(r.files.at(0).damage);
  EXPECT_NE(r.files[0].damage->find("shrank to " + std::to_string(text.size()) + " bytes"), std::string::npos);
  EXPECT_EQ(r.files[0].text_bytes, text.size());  // clipped: no zeros were read
  EXPECT_EQ(r.progress.iteration_lines, static_cast<int64_t>(text.size() / iteration_lines(1).size()));
}

TEST(MappedScan, AFileOfUnchangedSizeHasNoDamage) {
  const std::string text = iteration_lines(10);
  const TempFile file(text);
  const ScanReport r = scan_claiming(file.path(), text.size());
  EXPECT_FALSE(r.files.at(0).damage);
  EXPECT_EQ(r.progress.iteration_lines, 10);
}

// The real race: another thread truncates the file at different moments of the scan (before it, within a window,
// between windows, after it). Whatever the moment, the process survives, the first MiB (which stays) is read,
// and a shrink seen is reported as the file's damage.
TEST(MappedScan, ATruncationDuringTheScanIsSurvived) {
  const std::string line = iteration_lines(1);
  std::string text = line;
  while (text.size() < (48u << 20)) text += text;  // three windows
  const TempFile file(text);
  const uint64_t kept = 1u << 20;
  for (int delay_us : {0, 2000, 5000, 10000, 20000, 40000}) {
    std::ofstream(file.path(), std::ios::binary) << text;
    ScanReport r;
    std::thread scan([&] { r = scan_paths({file.path()}); });
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    ASSERT_EQ(::truncate(file.path().c_str(), static_cast<off_t>(kept)), 0);
    scan.join();
    ASSERT_EQ(r.files.size(), 1u) << delay_us;
    EXPECT_FALSE(r.files[0].error) << delay_us;
    EXPECT_GE(r.progress.iteration_lines, kept / line.size()) << delay_us;
    if (r.files[0].damage) {
      EXPECT_NE(r.files[0].damage->find("the file shrank to"), std::string::npos) << *r.files[0].damage;
    }
  }
}

// With `previous` as the SIGBUS handler before the reader installs its own, a read past the end of a mapping that
// is not a window: the reader's handler must not swallow it.
void foreign_sigbus(void (*previous)(int), const std::string& path) {
  std::signal(SIGBUS, previous);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  // The death test's child ends without running destructors, so its own temporary directory goes now; the open
  // descriptor keeps the file readable and mappable.
  std::error_code ec;
  fs::remove_all(fs::path(path).parent_path(), ec);
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  { const MappedWindow installs_the_handler(fd, 0, 1); }
  const auto* p = static_cast<const volatile char*>(::mmap(nullptr, 4 * page, PROT_READ, MAP_SHARED, fd, 0));
  (void)p[3 * page];  // past the file's one page
}

void exit_42(int) { _exit(42); }

// "threadsafe": the child runs the test in a fresh process, where the reader has not installed its handler yet.
TEST(MappedWindowDeathTest, AForeignSigbusReachesThePreviousHandler) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const TempFile file("short\n");
  EXPECT_EXIT(foreign_sigbus(exit_42, file.path()), testing::ExitedWithCode(42), "");
}

TEST(MappedWindowDeathTest, AForeignSigbusStillEndsTheProcessByDefault) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const TempFile file("short\n");
  EXPECT_EXIT(foreign_sigbus(SIG_DFL, file.path()), testing::KilledBySignal(SIGBUS), "");
}

}  // namespace
}  // namespace hcp::logscan

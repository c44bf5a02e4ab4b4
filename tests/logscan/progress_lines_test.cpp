// Progress lines are read by hand. Validation-loss lines: the reader is held to the regular expression it
// replaced, on the real shape and on random text around it (blanks of every kind, signs, exponents, damaged
// numbers). Iteration lines: the skipped and nan counts, through the fast reader of Megatron's exact tail and
// the general one; the scanner's fast lane against the general path; the median sample beyond its capacity.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "hcp/logscan/scanner.hpp"

#include "extract/scan_state.hpp"
#include "match/triggers.hpp"

namespace hcp::logscan {
namespace {

std::optional<std::pair<int64_t, double>> by_regex(const std::string& line) {
  static const RE2 re(R"(validation loss at iteration\s+(\d+)\s*\|\s*lm loss value:\s*([-+0-9.eE]+))");
  int64_t iteration = 0;
  double loss = 0;
  if (!RE2::PartialMatch(line, re, &iteration, &loss)) return std::nullopt;
  return std::pair(iteration, loss);
}

// The progress extractor on one line, as the scanner calls it for a line with the " iteration " literal (the
// literal prefilter decides which lines get here; that is tested with the scanner).
Progress progress_of(const std::string& line) {
  ScanState s;
  const std::string file = "p.log";
  LineView v;
  v.text = line;
  v.file = &file;
  extract_progress(s, v, kIteration);
  return s.report.progress;
}

std::optional<std::pair<int64_t, double>> by_scanner(const std::string& line) {
  const Progress p = progress_of(line);
  if (p.validation_losses.empty()) return std::nullopt;
  return p.validation_losses.back();
}

void expect_same(const std::string& line) {
  const auto want = by_regex(line);
  const auto got = by_scanner(line);
  ASSERT_EQ(got.has_value(), want.has_value()) << "'" << line << "'";
  if (want) {
    EXPECT_EQ(got->first, want->first) << "'" << line << "'";
    EXPECT_EQ(got->second, want->second) << "'" << line << "'";
  }
}

TEST(ValidationLine, RealShapes) {
  expect_same("[default7]: validation loss at iteration 65 | lm loss value: 8.900000E+00 | lm loss PPL: 1.04E+01 | ");
  expect_same(" validation loss at iteration 1000 | lm loss value: 2.345678E+00 | lm loss PPL: 1.043960E+01 |");
  expect_same("validation loss at iteration\t7\t|\tlm loss value:\t+3.5e-1");
  expect_same("validation loss at iteration 7|lm loss value:-0.25");
  expect_same("validation loss at iteration 99999999999999999999 | lm loss value: 1.0");  // wider than int64
  expect_same("validation loss at iteration 7 | lm loss value: 1.0.0");
  expect_same("validation loss at iteration 7 | lm loss value: ");
  expect_same("validation loss at iteration7 | lm loss value: 1.0");
  expect_same("validation loss at iteration 7 \v| lm loss value: 1.0");  // \v is not a blank to RE2
  const auto v = by_scanner("validation loss at iteration 65 | lm loss value: 8.900000E+00 |");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first, 65);
  EXPECT_DOUBLE_EQ(v->second, 8.9);
  // Through the scanner: the line's " iteration " literal brings it to the reader.
  LogScanner scanner;
  const std::string text = "[default0]: validation loss at iteration 12 | lm loss value: 2.5E+00 | \n";
  scanner.feed(text.data(), text.size());
  const ScanReport r = scanner.finish();
  ASSERT_EQ(r.progress.validation_losses.size(), 1u);
  EXPECT_EQ(r.progress.validation_losses[0].first, 12);
  EXPECT_EQ(r.progress.validation_losses[0].second, 2.5);
}

TEST(ValidationLine, AgreesWithTheRegexOnRandomText) {
  std::mt19937 rng(29);
  const std::vector<std::string> pieces = {"validation loss at iteration", " ", "\t", "\v", "12", "0", "|",
                                           "lm loss value:", "+", "-", ".", "5", "e", "E", "x", "  | "};
  for (int round = 0; round < 3000; ++round) {
    std::string line = "validation loss at iteration";
    const size_t n = rng() % 9;
    for (size_t i = 0; i < n; ++i) line += pieces[rng() % pieces.size()];
    // Most rounds keep the valid skeleton with one piece disturbed, so that matches are common.
    if (round % 2 == 0) {
      line = "validation loss at iteration " + std::to_string(rng() % 100000) + pieces[rng() % pieces.size()] +
             " | lm loss value: " + pieces[rng() % pieces.size()] + std::to_string(rng() % 1000) + "." +
             std::to_string(rng() % 1000) + pieces[rng() % pieces.size()] + std::to_string(rng() % 30);
    }
    expect_same(line);
  }
}

// Skipped and nan totals of one iteration line whose end is `tail`.
std::pair<int64_t, int64_t> counts_of(const std::string& tail) {
  const Progress p = progress_of(" iteration       10/     100 | consumed samples: 5120 | elapsed time per iteration "
                                 "(ms): 812.3 | lm loss: 9.0E+00 | loss scale: 1.0 " + tail);
  EXPECT_EQ(p.iteration_lines, 1u) << tail;
  return {p.skipped_iterations, p.nan_iterations};
}

TEST(IterationLine, SkippedAndNanCounts) {
  using Counts = std::pair<int64_t, int64_t>;
  // Megatron's "%3d" widths (the fast reader) and wider or reshaped ones (the general reader).
  EXPECT_EQ(counts_of("| number of skipped iterations:   0 | number of nan iterations:   0 |"), Counts(0, 0));
  EXPECT_EQ(counts_of("| number of skipped iterations:   7 | number of nan iterations:  42 |"), Counts(7, 42));
  EXPECT_EQ(counts_of("| number of skipped iterations: 999 | number of nan iterations: 100 |"), Counts(999, 100));
  EXPECT_EQ(counts_of("| number of skipped iterations: 1234 | number of nan iterations:   3 |"), Counts(1234, 3));
  EXPECT_EQ(counts_of("| number of skipped iterations:   5 | number of nan iterations: 12345 |"), Counts(5, 12345));
  EXPECT_EQ(counts_of("| number of skipped iterations: 2 | number of nan iterations: 1 |"), Counts(2, 1));
  EXPECT_EQ(counts_of("| number of skipped iterations:   2 | number of nan iterations:   1 | "), Counts(2, 1));
  EXPECT_EQ(counts_of("| number of skipped iterations:   2 | number of nan iterations:   1"), Counts(2, 1));
  EXPECT_EQ(counts_of("| number of nan iterations:   4 |"), Counts(0, 4));
  EXPECT_EQ(counts_of("| number of skipped iterations:  x1 | number of nan iterations:   1 |"), Counts(0, 1));
  EXPECT_EQ(counts_of("| number of skipped iterations:     | number of nan iterations:   1 |"), Counts(0, 1));
  EXPECT_EQ(counts_of("| grad norm: 1.0 |"), Counts(0, 0));
}

// The timing fields of one iteration line whose text after the counters is `rest`.
std::pair<std::optional<double>, std::optional<double>> timing_of(const std::string& rest) {
  const Progress p = progress_of(" iteration       10/     100" + rest);
  return {p.elapsed_ms.median(), p.tflops.median()};
}

TEST(IterationLine, ElapsedAndThroughputFields) {
  using Timing = std::pair<std::optional<double>, std::optional<double>>;
  // Megatron's layout (read at fixed places), a wider consumed-samples field, no consumed samples, a '(' before
  // the field, other field orders, and a line without the fields.
  EXPECT_EQ(timing_of(" | consumed samples:         5120 | elapsed time per iteration (ms): 812.3 | throughput per GPU "
                      "(TFLOP/s/GPU): 402.5 | lm loss: 1.0 |"),
            Timing(812.3, 402.5));
  EXPECT_EQ(timing_of(" | consumed samples: 1234567890123 | elapsed time per iteration (ms): 81.5 | throughput per "
                      "GPU (TFLOP/s/GPU): 40.25 |"),
            Timing(81.5, 40.25));
  EXPECT_EQ(timing_of(" | elapsed time per iteration (ms): 7.0 | throughput per GPU (TFLOP/s/GPU): 3.5 |"), Timing(7.0, 3.5));
  EXPECT_EQ(timing_of(" | note (x) | elapsed time per iteration (ms): 9.5 | learning rate: 1.0 | throughput per GPU "
                      "(TFLOP/s/GPU): 2.5 |"),
            Timing(9.5, 2.5));
  EXPECT_EQ(timing_of(" | consumed samples:         5120 | elapsed time per iteration (ms): 812.3 |"),
            Timing(812.3, std::nullopt));
  EXPECT_EQ(timing_of(" | consumed samples:         5120 | lm loss: 1.0 |"), Timing(std::nullopt, std::nullopt));
  // Primus: the elapsed time as "instant/average", the throughput as "compute per GPU ... (avg ...)".
  EXPECT_EQ(timing_of(" | consumed samples:       150400 | elapsed time per iteration (ms): 1460.8/1450.4 | compute "
                      "per GPU (TFLOP/s/GPU): 633.7 (avg 630.1) | tokens per GPU (tokens/s/GPU): 180743.2 |"),
            Timing(1460.8, 633.7));
}

// Text that ends where a page ends, with an inaccessible page after it: a read past the text's end faults in every
// build, where the sanitizers may miss a small read that the compiler expanded inline.
class TextBeforeGuardPage {
 public:
  explicit TextBeforeGuardPage(std::string_view text) {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    if (text.size() > page_) throw std::length_error("text longer than a page");
    void* m = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<char*>(m);
    if (mprotect(base_ + page_, page_, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
    char* at = base_ + page_ - text.size();
    std::copy(text.begin(), text.end(), at);
    text_ = std::string_view(at, text.size());
  }
  ~TextBeforeGuardPage() { munmap(base_, 2 * page_); }
  TextBeforeGuardPage(const TextBeforeGuardPage&) = delete;
  TextBeforeGuardPage& operator=(const TextBeforeGuardPage&) = delete;
  std::string_view text() const { return text_; }

 private:
  size_t page_ = 0;
  char* base_ = nullptr;
  std::string_view text_;
};

// A line cut anywhere - the last line of a log being written - is read within its bytes: every prefix of Megatron's
// layout, each just before a guard page (a fuzzer found a read past it: the fixed-place check of the elapsed field
// looked 35 bytes after the counters before checking that the line was that long).
TEST(IterationLine, EveryCutOfTheLineIsReadWithinIt) {
  const std::string full =
      " iteration       10/     100 | consumed samples:         5120 | elapsed time per iteration (ms): 812.3 | "
      "throughput per GPU (TFLOP/s/GPU): 402.5 | number of skipped iterations:   0 | number of nan iterations:   0 |";
  const std::string file = "p.log";
  const size_t counters_end = full.find("/     1") + 7, elapsed_end = full.find("(ms):") + 5;
  for (size_t n = 0; n <= full.size(); ++n) {
    const TextBeforeGuardPage cut(std::string_view(full).substr(0, n));
    ScanState s;
    LineView v;
    v.text = cut.text();
    v.file = &file;
    extract_progress(s, v, kIteration);
    const Progress& p = s.report.progress;
    // A line counts once its counters have a digit of the total; the elapsed field once it has a digit.
    EXPECT_EQ(p.iteration_lines, n >= counters_end ? 1 : 0) << n;
    EXPECT_EQ(p.elapsed_ms.median().has_value(), n > elapsed_end + 1) << n;
  }
}

// Beyond its capacity the sample keeps a uniform share of the whole stream: the median of a stream that is 45%
// ones then 55% twos is 2, and of 55% ones then 45% twos is 1 (a sample that favoured early or late lines would
// get one of them wrong), and the median of 0..n-1 is within 1% of n/2.
TEST(Reservoir, UniformBeyondItsCapacity) {
  constexpr int64_t n = 2000000;
  for (const auto& [ones, want] : {std::pair(0.45, 2.0), std::pair(0.55, 1.0)}) {
    Reservoir r;
    for (int64_t i = 0; i < n; ++i) r.add(static_cast<double>(i) < ones * n ? 1.0 : 2.0);
    EXPECT_EQ(r.count(), static_cast<uint64_t>(n));
    EXPECT_EQ(r.median(), want) << ones;
  }
  Reservoir r;
  for (int64_t i = 0; i < n; ++i) r.add(static_cast<double>(i));
  EXPECT_NEAR(*r.median(), n / 2.0, n * 0.01);
  // A sample kept in step with it holds the same lines.
  Reservoir leader, follower;
  for (int64_t i = 0; i < n; ++i) {
    if (double* slot = leader.reserve()) *slot = static_cast<double>(i);
    if (double* slot = follower.reserve_as(leader)) *slot = 2.0 * static_cast<double>(i) + 1;
  }
  EXPECT_EQ(follower.count(), static_cast<uint64_t>(n));
  EXPECT_EQ(*follower.median(), 2 * *leader.median() + 1);
  Reservoir small;  // exact below the capacity
  for (int i = 1; i <= 1001; ++i) small.add(i);
  EXPECT_EQ(small.median(), 501.0);
}

// The scanner's fast lane for settled iteration lines against the general path: the same log once plain (most
// lines take the lane) and once with an ANSI code on every line (which the lane refuses: view_line strips it, so
// the text the general path reads is the same). Lines vary in what the lane must refuse or get right: counts,
// wide counts, other tails, CRLF, prefixes; more lines than the median sample holds, so its draws are compared.
TEST(IterationLine, FastLaneAgreesWithTheGeneralPath) {
  std::mt19937 rng(53);
  std::string plain, coloured;
  const char* tails[] = {"| number of skipped iterations:   0 | number of nan iterations:   0 |",
                         "| number of skipped iterations:   3 | number of nan iterations:  12 |",
                         "| number of skipped iterations: 1234 | number of nan iterations:   1 |",
                         "| number of skipped iterations:   1 | number of nan iterations:   0 | ",
                         "| grad norm: 1.25 |"};
  for (int i = 1; i <= 70000; ++i) {
    const unsigned r = static_cast<unsigned>(rng() % 100);
    const std::string prefix = r < 80 ? "[default7]:" : r < 90 ? "[rank3]: " : "";
    const std::string tail = tails[r < 90 ? 0 : 1 + r % 4];
    char body[400];
    std::snprintf(body, sizeof body,
                  " [2026-08-22 12:01:07] iteration %9d/ 100000000 | consumed samples: %12d | elapsed time per "
                  "iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | lm loss: %.6E | loss scale: 1.0 ",
                  i, i * 512, 800 + static_cast<double>(rng() % 400) / 10, 390 + static_cast<double>(rng() % 300) / 10,
                  9 - i * 1e-5);
    const std::string eol = rng() % 50 == 0 ? "\r\n" : "\n";
    plain += prefix + body + tail + eol;
    coloured += prefix + "\x1b[0m" + body + tail + eol;
  }
  auto scan = [](const std::string& text) {
    LogScanner scanner;
    scanner.feed(text.data(), text.size());
    return scanner.finish().progress;
  };
  const Progress a = scan(plain), b = scan(coloured);
  EXPECT_EQ(a.iteration_lines, 70000u);
  EXPECT_EQ(a.iteration_lines, b.iteration_lines);
  EXPECT_EQ(a.skipped_iterations, b.skipped_iterations);
  EXPECT_EQ(a.nan_iterations, b.nan_iterations);
  EXPECT_GT(a.skipped_iterations, 0);
  EXPECT_EQ(a.last_iteration, b.last_iteration);
  EXPECT_EQ(a.last_iteration, 70000);
  EXPECT_EQ(a.total_iterations, b.total_iterations);
  EXPECT_EQ(a.last_lm_loss, b.last_lm_loss);
  EXPECT_EQ(a.first_lm_loss, b.first_lm_loss);
  EXPECT_EQ(a.elapsed_ms.count(), b.elapsed_ms.count());
  EXPECT_EQ(a.elapsed_ms.median(), b.elapsed_ms.median());
  EXPECT_EQ(a.tflops.median(), b.tflops.median());
  ASSERT_TRUE(a.first_iteration && b.first_iteration);
  EXPECT_EQ(a.first_iteration->line, b.first_iteration->line);
}

}  // namespace
}  // namespace hcp::logscan

// The log scanner: push raw bytes (plain, zstd or gzip) of one or more inputs, then finish() for the report.
// Memory stays bounded whatever the input size: a 4 MiB line window, a 64 KiB cap per line, bounded samples.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hcp/logscan/report.hpp"

namespace hcp::logscan {

struct LiveEvent {
  enum class Kind { verdict, failure, warning } kind;
  Verdict verdict = Verdict::unknown;  // kind verdict
  std::vector<std::pair<std::string, SourceRef>> reasons;
  Failure failure;                     // kind failure
  Notice warning;                      // kind warning
};

struct ScanOptions {
  std::optional<std::string> gpu;  // GPU model when the log does not name it ("h200")
  size_t max_line = 64 * 1024;     // longer lines are matched on this prefix and counted as truncated
  unsigned jobs = 1;               // scan_paths: threads reading files (0: every core); the report is the same
  bool series = false;             // keep every iteration line's loss, time and TFLOP/s (ScanReport::series)
};

struct InputTape;  // input/input_tape.hpp

class LogScanner {
 public:
  explicit LogScanner(ScanOptions options = {});
  ~LogScanner();
  LogScanner(const LogScanner&) = delete;
  LogScanner& operator=(const LogScanner&) = delete;

  // Inputs are scanned one after another; each has its own decoder and line numbers.
  void begin_input(const std::string& name);
  void feed(const char* data, size_t size);
  void end_input();
  // An input that could not be opened or read.
  void input_error(const std::string& name, const std::string& message);
  // The open input's raw bytes from `offset` on could not be read (the file shrank while it was read): the text
  // before is the input's report, and this is its damage, in place of any the decoder found after it.
  void input_damaged(uint64_t offset, const std::string& message);
  // Inputs begun from now on that are compressed are decoded on a second thread, ahead of the scan (scan_paths
  // does so for a single input when it may use more than one thread). The report is the same.
  void decode_ahead(bool on);

  // Several inputs open at once (a live per-rank directory): open_input gives an id to feed and close it by; the
  // inputs' lines interleave as they are fed. begin_input's input is closed by the next begin_input.
  int open_input(const std::string& name);
  void feed_input(int id, const char* data, size_t size);
  void close_input(int id);
  // Live reading: inputs that have shown at least min_lines lines stop holding their first lines back to learn
  // their line prefixes and read them with what was learned (later lines keep that); settle_learning_of does it
  // for one input whatever it showed (a file that stopped growing).
  void settle_learning(size_t min_lines = 0);
  void settle_learning_of(int id);
  static constexpr size_t kLiveSampleLines = 16;
  // Live reading (ends learning as settle_learning(kLiveSampleLines)): what happened since the last call - each new failure and
  // warning, and the verdict once the evidence settles it (a conclusive verdict, or any verdict after the first
  // training step) and whenever it changes.
  std::vector<LiveEvent> poll();

  // Parallel scanning: while a tape is set, what each input makes the extractors do is also recorded in it;
  // replay() does the same to this scanner as scanning the recorded input here would. When the tape holds
  // InputTape::kSegmentBytes, `full` (if given) is called and recording goes on in the tape it returns; replaying
  // the segments in order is replaying the whole tape.
  void record_to(InputTape* tape, std::function<InputTape*()> full = {});
  void replay(const InputTape& tape);

  // Closes the open inputs and computes the verdict. The scanner is spent afterwards.
  ScanReport finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// An input of scan_paths: standard input, a file, or a path that could not be listed.
struct ScanInput {
  enum class Kind { stdin_, file, error } kind;
  std::string path;
  std::string error;
};
// The inputs that paths name: "-" first, then the files (directories recursively, hidden entries skipped) in
// natural name order, each once, whatever the order of the paths. A subdirectory that cannot be listed is an
// error input. Directories are listed by up to `jobs` threads.
std::vector<ScanInput> expand_inputs(const std::vector<std::string>& paths, unsigned jobs = 1);

// Scans files, directories (recursively) and "-" (standard input), in expand_inputs' order.
ScanReport scan_paths(const std::vector<std::string>& paths, const ScanOptions& options = {});

// Peak dense bf16 TFLOP/s of a GPU model named in a log or by the user (H100, H200, A100, B200), if known.
std::optional<double> peak_bf16_tflops(std::string_view gpu);

}  // namespace hcp::logscan

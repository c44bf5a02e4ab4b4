// The scanner's model while it reads: the report being built, plus the few multi-line states (an open traceback
// per rank, a YAML list being read). Extractors are free functions over a LineView, one file per family of lines.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "hcp/logscan/report.hpp"
#include "line_prefix.hpp"

namespace hcp::logscan {

struct LineView {
  std::string_view text;  // after the launcher prefix, ANSI codes and CR are removed
  int rank = -1;
  uint64_t number = 0;
  const std::string* file = nullptr;
  bool stable = true;  // text lies in the input region (valid until it ends), not in view_line's scratch
  const char* key = nullptr;  // the line's first trigger literal in text, when the scanner knows it
  // After an iteration key: the end of the counters that follow it, when the scanner checked them (the check
  // ran on the whole line, which may be longer than text).
  const char* counters_end = nullptr;
  SourceRef ref() const { return {*file, number, rank}; }
};

// The line without its launcher prefix (which gives the rank when it names one), ANSI colour codes (dropped into
// scratch) and '\r' redraws. `escape` false says the caller knows the line holds no ESC byte.
LineView view_line(std::string_view raw, std::string& scratch, bool escape, const LinePrefixes& prefixes);
// raw without ANSI CSI sequences and lone ESC bytes (into scratch when it has any).
std::string_view remove_ansi(std::string_view raw, std::string& scratch);

struct TracebackState {
  uint64_t started_at = 0;
  int lines_seen = 0;
  int frame_indent = -1;  // where its first frame's "File" starts (2; more when a collector indented the block)
};

// torchrun's "Root Cause (first observed failure):" block: the root rank and exit code follow on their own lines.
// torchrun's ChildFailedError block: "Failures:" lists the other failed ranks ("[1]:", "  rank : 1 ...") or
// "<NO_OTHER_FAILURES>", then "Root Cause (first observed failure):" names the first one. A block cut before its
// root cause (or a log that shows only the list) reports the first rank listed.
struct ChildFailedBlock {
  bool active = false;
  bool in_list = false;  // reading "Failures:", the root cause not seen yet
  int lines_seen = 0;
  int rank = -1;
  std::string exitcode;
  SourceRef where;
};

// "terminate called after throwing an instance of 'c10::CUDAError'" and the "what():" and frame lines after it,
// or "terminate called without an active exception" (std::terminate with no exception: a thread left joinable,
// c10d's watchdog ending the process) and its frames.
struct AbortBlock {
  bool active = false;
  int lines_seen = 0;
  std::string what;
  bool in_nccl = false;  // a frame in ProcessGroupNCCL: the NCCL work's error
  bool in_check_timeout = false;  // a frame in WorkNCCL::checkTimeout: the watchdog's timeout
  SourceRef where;
  const char* head = "terminate called after throwing an exception";  // or "... without an active exception"
};

struct ListCapture {  // "hierarchical_context_parallel_sizes:" followed by "- 2" lines (Bridge's YAML dump)
  bool active = false;
  std::vector<int64_t> items;
  SourceRef where;
  int lines_seen = 0;
};

// What one input is in the middle of: blocks that span its lines.
struct InputBlocks {
  uint64_t run_lines_at_input_start = 0;     // the run's progress lines before the input
  std::map<int, TracebackState> tracebacks;  // by rank
  bool wrap_pending = false;                 // a hard-wrapped line is being joined: its next piece is wanted
  ListCapture list;
  ChildFailedBlock child_failed;
  AbortBlock abort;
  // A C++ terminate block without what() says only that a process ended: it is a failure of its own only if the
  // run shows no other by the time the input ends (a log interleaves several ranks' blocks and loses the
  // what() of all but one; a terminate without an exception is the teardown after a failure).
  std::optional<Failure> abort_without_what;
};

// The per-input blocks are a base, so that switching between live inputs swaps them as one.
struct ScanState : InputBlocks {
  ScanReport report;
  bool keep_series = false;   // ScanOptions::series
  uint64_t series_seen = 0;   // iteration lines offered to report.series
  void add_point(const SeriesPoint& point);
  std::set<std::string> slurm_cancellations;  // "kind:job id" already reported (a JOB line and its STEP twin)
  // What each failure in report.failures was caused by ("uncorrectable ECC error encountered"): the same fault
  // reported again (a traceback, then the watchdog, then the C++ terminate) is one failure.
  std::vector<std::string> failure_causes;
  size_t run_failures_from = 0;  // failures of the current run start here (a failure is counted once per run)
  int64_t bar_total = 0;         // the training progress bar's total (an evaluation bar's is smaller)
  // Whether the bar advanced with the training loss: Hugging Face's loss dicts seen, and how many of them had
  // been when the bar last moved, and whether it had then reached its total. A bar finished before the first
  // loss (a 7/7 preparation bar) was not the training (settle_progress).
  uint64_t loss_dicts = 0, loss_dicts_at_bar = 0;
  bool bar_finished = false;
  int64_t max_steps = 0;         // a configuration's "max_steps: N" (NeMo Automodel prints no total on its steps)
  // Runs (run_lines.cpp): where the current one started, and what the report held when it did.
  SourceRef run_start;
  uint64_t failures_before_run = 0;
  std::set<std::string> disagreements;  // configuration keys the inputs of the current run disagree on
  // The progress of the last closed run that made any: the report's when the last run made none (a restart that
  // died before its first step).
  std::optional<Progress> last_progress;
  int last_progress_run = -1;
  // The current run ends: its summary goes to report.runs, the accumulators start afresh.
  void close_run(const std::string& file);
  void finish_runs(const ScanReport& decided);  // the last run, when the inputs end
  // The last two iteration lines from their "iteration " word (at most 1024 bytes each): the counters of the last
  // and the loss of the last one that has it (a log cut mid-line) are read when the input ends. Kept as views
  // while the region they lie in is being scanned, and copied once when the region ends (a copy per line was a
  // fifth of the extraction time).
  std::string_view last_iteration, previous_iteration;
  std::string last_iteration_copy, previous_iteration_copy;

  bool wants_every_line() const {
    return !tracebacks.empty() || list.active || wrap_pending || child_failed.active || abort.active;
  }
  void keep_last_iteration_line(std::string_view line, bool stable) {
    if (line.size() > 1024) line = line.substr(0, 1024);
    if (!last_iteration.empty() && last_iteration.data() == last_iteration_copy.data()) {
      std::swap(previous_iteration_copy, last_iteration_copy);
      previous_iteration = previous_iteration_copy;
    } else {
      previous_iteration = last_iteration;
    }
    last_iteration = line;
    if (!stable) end_region();
  }
  void end_region() {  // the scanned region is about to be reused: views into it become copies
    keep_copy(last_iteration, last_iteration_copy);
    keep_copy(previous_iteration, previous_iteration_copy);
  }
  static void keep_copy(std::string_view& view, std::string& copy) {
    if (view.empty() || view.data() == copy.data()) return;
    copy.assign(view);
    view = copy;
  }
  void swap_input_blocks(InputBlocks& b) { std::swap(static_cast<InputBlocks&>(*this), b); }
  void reset_input() {
    static_cast<InputBlocks&>(*this) = InputBlocks{};
    run_lines_at_input_start = report.progress.iteration_lines;  // the run's progress lines before this input
  }
  // Records a failure unless it is one already counted in this run: the same kind on the same rank, the same
  // cause, or a traceback of a rank whose failure is known; a traceback just before a more specific failure of
  // its rank takes that failure's kind.
  void add_failure(Failure f, std::string cause = {});
  void add_warning(std::string kind, std::string message, SourceRef where);
  void end_input(const std::string& file);  // closes the blocks still open when an input ends
  void dispatch(const LineView& line, uint32_t triggers);
};

// Extractors (extract/*.cpp).
void extract_progress(ScanState& s, const LineView& line, uint32_t triggers);
void extract_intent(ScanState& s, const LineView& line, uint32_t triggers);
void extract_groups(ScanState& s, const LineView& line, uint32_t triggers);
void extract_failures(ScanState& s, const LineView& line, uint32_t triggers);
void follow_open_blocks(ScanState& s, const LineView& line);  // lines of open blocks (tracebacks, lists, ...)
void follow_tracebacks(ScanState& s, const LineView& line);
bool is_python_frame(std::string_view text);
// A Python 3.11+ exception group's lines carry a "  | " gutter: the text after it ("  |   File ..." is a frame).
std::string_view without_gutter(std::string_view text);
// A frame of a rich traceback box whose header the log lacks: "│ ❱ 785 │   elastic_launch(  ... │".
bool is_rich_frame(std::string_view text);
void child_failed_line(ScanState& s, const LineView& line);  // "Failures:" or "Root Cause (first observed failure)"
void follow_child_failed(ScanState& s, const LineView& line);
void follow_abort(ScanState& s, const LineView& line);
void close_failure_blocks(ScanState& s, const std::string& file);
// The failure kind a CUDA/HIP error text names (cuda-illegal-address, device-assert, cuda-oom), or empty.
std::string_view gpu_fault_kind(std::string_view text);
// The fault a message reports, for counting it once: "an illegal memory access was encountered".
std::string fault_cause(std::string_view text);
std::string clip_message(std::string_view s);
void follow_list(ScanState& s, const LineView& line);
void extract_gpu(ScanState& s, const LineView& line);
void extract_attention(ScanState& s, const LineView& line);   // Transformer Engine (attention_lines.cpp)
void extract_dynamic_cp(ScanState& s, const LineView& line);  // Megatron's dynamic CP (dynamic_cp_lines.cpp)
void extract_run_start(ScanState& s, const LineView& line, uint32_t triggers);
// Progress lines of the formats other than Megatron's (progress_formats.cpp).
void extract_other_progress(ScanState& s, const LineView& line);
void settle_progress(ScanState& s);  // finish what extract_progress deferred
// The scanner's fast lane for an iteration line it settled, with no ANSI codes, no other trigger and no open
// block: [word, end) is the line from its "iteration " word, which follows a blank (in the region being scanned,
// without the '\r'), and counters_end is where its counters end. Does what extract_progress would and returns
// true when the line has Megatron's exact tail and is not the scan's first iteration line; otherwise changes
// nothing and returns false (the line then takes the general path).
bool settled_iteration_line(ScanState& s, const char* word, const char* counters_end, const char* end);

// The counters of an iteration line, read after its "iteration " word: "     10/     100"; `after` is null when
// the text is not that.
struct IterationCounters {
  int64_t iteration = 0, total = 0;
  const char* after = nullptr;
};
IterationCounters iteration_counters(const char* p, const char* end);
// The same check without reading the values (every iteration line is checked; only the last one is read).
const char* skip_iteration_counters(const char* p, const char* end);

// Number parsing that never throws.
std::optional<int64_t> to_int(std::string_view s);
std::optional<double> to_double(std::string_view s);
// "[2, 8]", "[2,8]", "2 8" -> integers; nullopt for anything else.
std::optional<std::vector<int64_t>> to_int_list(std::string_view s);
std::string_view trim(std::string_view s);

}  // namespace hcp::logscan

// What hcp-logscan learns from training logs, and its verdict.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hcp::logscan {

// Where something was seen: file, 1-based line of the decoded text, and the rank when known (-1 otherwise).
struct SourceRef {
  std::string file;
  uint64_t line = 0;
  int rank = -1;
  std::string text() const;  // "file:line"
};

template <typename T>
struct Seen {
  std::optional<T> value;
  SourceRef where;
};

// What the run was configured to do.
struct Intent {
  Seen<int64_t> world_size, tp, pp, cp, dp;
  Seen<std::vector<std::string>> cp_comm_type;
  // hierarchical_context_parallel_sizes: value set and the inner optional empty means the log says None/null.
  Seen<std::optional<std::vector<int64_t>>> hcp_sizes;
  Seen<bool> use_decentralized_pg;
  // Megatron's hybrid_context_parallel (main) / dynamic_context_parallel (dev): the CP group is chosen per
  // micro-batch from groups of several sizes, so context_parallel_size is not the size attention runs with.
  Seen<bool> dynamic_cp;

  bool hierarchical() const;      // a2a+p2p in the comm types, or sizes set
  bool a2a_p2p_without_sizes() const;
};

// Lines that prove which process groups exist.
struct GroupEvidence {
  std::string group;   // CONTEXT_PARALLEL_GROUP, HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0, HIERARCHICAL_CONTEXT_PARALLEL_GROUPS
  std::string source;  // "c10d", "hcp-runtime", "mention"
  uint64_t lines = 0;
  std::set<int> ranks;
  std::set<int64_t> sizes;
  SourceRef first;
};

// Transformer Engine's attention under NVTE_DEBUG=1 NVTE_DEBUG_LEVEL=2: its "Running with config={...}" records
// say whether the attention was given a CP group ('context_parallel': True/False, 'cp_comm_type', 'cp_size' on
// TE >= 2.15), and its "Disabling ... context parallelism" lines are printed only when it was.
struct AttentionEvidence {
  std::optional<SourceRef> cp_on;        // the first config with 'context_parallel': True, or a Disabling line
  std::optional<SourceRef> cp_off;       // the first config with 'context_parallel': False
  uint64_t cp_on_lines = 0, cp_off_lines = 0;
  std::set<std::string> comm_types;      // 'cp_comm_type' of the configs with CP on
  std::set<int64_t> cp_sizes;            // 'cp_size' of the configs with CP on
  std::map<std::string, uint64_t> backends;  // "FusedAttention (sub-backend 1)" -> lines that selected it
  bool any() const { return cp_on || cp_off || !backends.empty(); }
};

// Megatron's dynamic (hybrid) CP at run time: its "Dynamic CP enabled: ..." warning, or process groups described
// HYBRID_DP_CP_GROUP_<n> (main) / DYNAMIC_DP_CP_GROUP_<n> (dev), or Transformer Engine configs with CP on at
// several sizes.
struct DynamicCpEvidence {
  std::optional<SourceRef> first;
  std::string how;                 // what the first line was
  std::set<int64_t> group_sizes;   // sizes the groups' descriptions name
};

struct Evidence {
  std::map<std::string, GroupEvidence> groups;  // keyed by source + group
  AttentionEvidence attention;
  DynamicCpEvidence dynamic_cp;
  std::map<int64_t, uint64_t> nccl_comm_sizes;  // nranks of NCCL "Init COMPLETE" lines (weak evidence)
  std::optional<SourceRef> nccl_first;
  std::optional<SourceRef> hypercommgrid;       // Bridge's decentralized process groups

  bool hierarchical_groups() const;  // a level group line or the runtime's HIERARCHICAL line
  bool flat_cp_groups() const;
};

// A bounded sample for medians: exact up to its capacity, a uniform sample beyond.
// Values are parsed only when they are kept: reserve() says where the next value goes, or null when the sample
// does not need it, which on a long log is most lines. Beyond the capacity the sample skips ahead by a random
// count drawn when it keeps a value (Li's algorithm L), so a line it does not keep costs one compare rather than
// a random draw; the draws are deterministic, so reports are reproducible.
class Reservoir {
 public:
  double* reserve() {
    ++count_;
    return count_ < next_ ? nullptr : keep();
  }
  // For a sample kept in step with `leader` (same lines, this called right after leader.reserve()): the slot that
  // matches the leader's, so the two draw their random numbers once.
  double* reserve_as(const Reservoir& leader) {
    ++count_;
    return leader.kept_at_ == count_ ? slot_like(leader) : nullptr;
  }
  void add(double x) {
    if (double* slot = reserve()) *slot = x;
  }
  std::optional<double> median() const;
  uint64_t count() const { return count_; }

 private:
  // 16384 values: exact on runs up to that many lines; beyond, the sample median's rank has a standard error of
  // 0.4% (0.5 / sqrt(16384)). The two timing samples (128 KiB each) fit the L2 cache; with 65536 values (512 KiB
  // each) the scan of a 1 GiB log was 11% slower.
  static constexpr size_t kCapacity = 1 << 14;
  double* keep();
  double* slot_like(const Reservoir& leader);
  uint64_t random();
  double uniform();  // in (0, 1)
  void draw_next();  // the count at which the next value is kept

  std::vector<double> sample_;
  uint64_t count_ = 0;
  uint64_t next_ = 1;
  uint64_t kept_at_ = 0;  // the count of the last value kept
  size_t kept_slot_ = 0;  // and its slot
  double w_ = 1;  // algorithm L's running maximum of the keys, as exp(log(u) / k) products
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
};

// Which kind of line reported training progress (docs/logscan.md says how each counts its iterations).
enum class ProgressFormat : uint8_t {
  none, megatron, nemo2, progress_bar, torchtitan, bridge_step_time, nanotron, megatron_deepspeed_kv, automodel,
  nanochat, llmc, verl, slime, nemo_rl
};
std::string_view progress_format_name(ProgressFormat f);

struct Progress {
  uint64_t iteration_lines = 0;  // training progress lines of every format (validation never counts)
  ProgressFormat format = ProgressFormat::none;  // of the last one
  int run = -1;  // the run this progress is of (ScanReport::runs index; -1 before runs are numbered)
  std::optional<int64_t> last_iteration, total_iterations;
  // Every iteration line is one entry of elapsed_ms and tflops (NaN: the line lacks the field or it could not be
  // read), so both samples keep the same lines and a line's fields are read only when it is kept.
  Reservoir elapsed_ms, tflops, model_tflops;
  // Step times and TFLOP/s of the other formats (NeMo bars, torchtitan, Bridge's "Step Time :" lines), used when
  // no Megatron iteration line has them.
  Reservoir step_ms, step_tflops;
  std::optional<double> first_lm_loss, last_lm_loss;
  int64_t skipped_iterations = 0, nan_iterations = 0;
  std::vector<std::pair<int64_t, double>> validation_losses;  // (iteration, loss), the last 32
  std::optional<double> max_allocated_mb, max_reserved_mb;
  std::optional<SourceRef> first_iteration;

  // The throughput the run reported: the iteration lines' TFLOP/s/GPU, else Bridge's MODEL_TFLOP/s/GPU lines,
  // else the other formats' TFLOP/s.
  std::optional<double> reported_tflops() const;
  std::optional<double> iteration_ms() const;  // the iteration lines' median, else the other formats'
  bool any() const { return iteration_lines > 0 || model_tflops.count() > 0 || step_ms.count() > 0; }
};

struct Failure {
  // traceback, hcp-validation, cuda-oom, nccl-error, nccl-timeout, cuda-illegal-address, device-assert, xid,
  // hip-error, cuda-error, abort, child-failed, oom-kill, slurm-time-limit, slurm-preempted, slurm-node-fail,
  // cp-validation
  std::string kind;
  std::string message;
  std::string lint_code;  // for hcp-validation: the hcp-lint rule that catches it before the run
  std::string group;      // process group named in the line, if any
  SourceRef where;
  int run = 0;            // index into ScanReport::runs
};

// Something worth knowing that is no failure: a Python warning, an upstream validation text printed as a warning,
// a job cancelled by its user, runs that disagree on their configuration.
struct Notice {
  std::string kind;
  std::string message;
  SourceRef where;
};

struct FileReport {
  std::string path;
  std::string compression = "plain";
  int rank_from_name = -1;
  uint64_t raw_bytes = 0, text_bytes = 0, lines = 0, truncated_lines = 0;
  std::optional<std::string> damage;  // "byte N: ..."
  std::optional<std::string> error;   // could not be read at all
};

enum class Verdict { cp_silently_off, hcp_active, hcp_not_active, dynamic_cp, flat_cp, no_cp, unknown };
std::string_view verdict_name(Verdict v);

// One run of the inputs: a log can hold several (an appended rerun, a restart, attempts), each starting with a
// configuration dump, Megatron's "using world size" line, torchtitan's "Starting job", or a fresh NCCL
// initialisation after progress in the same file.
struct RunReport {
  SourceRef start;  // the line that started it (empty for a run the inputs start in)
  Verdict verdict = Verdict::unknown;
  Intent intent;
  uint64_t iteration_lines = 0;
  std::optional<int64_t> last_iteration, total_iterations;
  std::optional<double> last_lm_loss, iteration_ms, tflops;
  uint64_t failure_count = 0;
};

// One training iteration line, for the charts of the HTML report (ScanOptions::series). NaN: not on the line.
struct SeriesPoint {
  int64_t iteration = -1;  // the line's iteration counter (-1 when unreadable)
  double loss = NAN, elapsed_ms = NAN, tflops = NAN;
  int run = 0;  // ScanReport::runs index
};

struct ScanReport {
  Verdict verdict = Verdict::unknown;
  bool step_completed = false;
  bool failed = false;
  Intent intent;
  Evidence evidence;
  Progress progress;
  std::optional<std::string> gpu;
  std::optional<double> gpu_peak_tflops;
  std::optional<SourceRef> gpu_where;
  std::vector<Failure> failures;  // the first 256
  uint64_t failure_count = 0;
  std::vector<Notice> warnings;  // the first 64
  uint64_t warning_count = 0;
  std::vector<FileReport> files;
  std::vector<RunReport> runs;  // in input order; the verdict, intent, evidence and progress are the last one's
  std::vector<std::pair<std::string, SourceRef>> reasons;  // why the verdict
  std::string advice;  // how to make the next run verifiable (unknown verdicts)
  // ScanOptions::series: Megatron and NeMo 2 iteration lines in input order; beyond kMaxSeries points every
  // series_stride-th line is kept (the stride doubles each time the points fill up again).
  std::vector<SeriesPoint> series;
  uint64_t series_stride = 1;
  static constexpr size_t kMaxSeries = 1 << 16;

  // An input that could not be opened, or a compressed one of which nothing could be decoded.
  bool unreadable_inputs() const;
};

}  // namespace hcp::logscan

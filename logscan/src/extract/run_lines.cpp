// Runs: where one run of the inputs ends and the next starts. A start is a configuration dump (Megatron's
// arguments block and "using world size" line, Megatron-Bridge's and NeMo's configuration prints, torchtitan's
// "Starting job"), or an NCCL initialisation or Megatron's start-of-training line in a file that already showed
// progress (a restart in place). A start only splits when the run so far has shown progress or a failure: the
// several prints that open one run (the world-size line, then the arguments) stay one run, and so do per-rank
// files, of which only rank 0 prints the configuration.
#include "hcp/logscan/scanner.hpp"
#include "../match/triggers.hpp"
#include "../verdict/verdict.hpp"
#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

bool has(std::string_view t, std::string_view what) { return t.find(what) != std::string_view::npos; }

// Whether the line starts a run, and whether it does so only after progress in the same file.
bool run_start(const LineView& line, uint32_t triggers, bool& same_file_only) {
  const std::string_view t = line.text;
  same_file_only = false;
  if ((triggers & kWorldSize) && has(t, "using world size")) return true;
  if (!(triggers & kRunStart)) return false;
  if (has(t, "- arguments -") || has(t, "Final configuration") || has(t, "Final Merged Configuration") ||
      has(t, "Task Configuration") || has(t, "Configuration Summary") || has(t, "Starting job:") ||
      has(t, "initializing tensor model parallel with size")) {
    return true;
  }
  // An NCCL initialisation, or Megatron's "[before the start of training step] datetime: ..." (rank 0, once a run,
  // after its setup), after progress in the same file: a restart in place whose configuration was not printed.
  if (has(t, "NCCL version") || has(t, "[before the start of training step]")) {
    same_file_only = true;
    return true;
  }
  return false;
}

std::string describe(const Intent& in) {
  std::string out;
  auto add = [&](const std::string& s) {
    if (!out.empty()) out += ", ";
    out += s;
  };
  if (in.cp.value) add("context_parallel_size " + std::to_string(*in.cp.value));
  if (in.cp_comm_type.value) {
    std::string types;
    for (const std::string& t : *in.cp_comm_type.value) {
      if (!types.empty()) types += ',';
      types += t;
    }
    add("cp_comm_type " + types);
  }
  if (in.hcp_sizes.value) {
    std::string sizes = "None";
    if (*in.hcp_sizes.value) {
      sizes = "[";
      for (int64_t v : **in.hcp_sizes.value) {
        if (sizes.size() > 1) sizes += ',';
        sizes += std::to_string(v);
      }
      sizes += "]";
    }
    add("hierarchical_context_parallel_sizes " + sizes);
  }
  if (in.tp.value) add("tp " + std::to_string(*in.tp.value));
  if (in.pp.value) add("pp " + std::to_string(*in.pp.value));
  if (in.world_size.value) add("world size " + std::to_string(*in.world_size.value));
  return out.empty() ? "no configuration shown" : out;
}

bool same_config(const Intent& a, const Intent& b) {
  return a.cp.value == b.cp.value && a.cp_comm_type.value == b.cp_comm_type.value &&
         a.hcp_sizes.value == b.hcp_sizes.value && a.tp.value == b.tp.value && a.pp.value == b.pp.value &&
         a.world_size.value == b.world_size.value;
}

}  // namespace

void extract_run_start(ScanState& s, const LineView& line, uint32_t triggers) {
  bool same_file_only = false;
  if (!run_start(line, triggers, same_file_only)) return;
  const Progress& pr = s.report.progress;
  const bool failed = s.report.failures.size() > s.run_failures_from;
  const bool progressed = same_file_only ? pr.iteration_lines > s.run_lines_at_input_start : pr.any();
  // Another file's configuration dump, when this run already has one: another run (per-rank files of one run do
  // not each print the configuration; only rank 0 does).
  const Intent& in = s.report.intent;
  const bool configured = in.cp.value || in.world_size.value || in.tp.value || in.cp_comm_type.value;
  const bool other_file = !s.run_start.file.empty() && s.run_start.file != *line.file;
  if (progressed || (failed && !same_file_only) || (!same_file_only && configured && other_file)) {
    s.close_run(*line.file);
    s.run_start = line.ref();
  } else if (s.run_start.file.empty()) {
    s.run_start = line.ref();
  }
}

void ScanState::close_run(const std::string& file) {
  close_failure_blocks(*this, file);  // what the old run was printing when the new one started belongs to it
  settle_progress(*this);
  RunReport run;
  run.start = run_start;
  run.failure_count = report.failure_count - failures_before_run;
  // The run's verdict is decided on the run alone.
  ScanReport alone;
  alone.intent = report.intent;
  alone.evidence = std::move(report.evidence);
  alone.progress = std::move(report.progress);
  alone.gpu = report.gpu;
  alone.gpu_where = report.gpu_where;
  if (alone.gpu) alone.gpu_peak_tflops = peak_bf16_tflops(*alone.gpu);
  alone.failure_count = run.failure_count;
  decide(alone);
  run.verdict = alone.verdict;
  run.intent = std::move(report.intent);
  run.iteration_lines = alone.progress.iteration_lines;
  run.last_iteration = alone.progress.last_iteration;
  run.total_iterations = alone.progress.total_iterations;
  run.last_lm_loss = alone.progress.last_lm_loss;
  run.iteration_ms = alone.progress.iteration_ms();
  run.tflops = alone.progress.reported_tflops();
  if (alone.progress.any()) {
    last_progress = std::move(alone.progress);
    last_progress_run = static_cast<int>(report.runs.size());
  }
  if (!report.runs.empty() && !same_config(report.runs.back().intent, run.intent)) {
    add_warning("runs-differ",
                "run " + std::to_string(report.runs.size()) + " (" + describe(report.runs.back().intent) + ") and run " +
                    std::to_string(report.runs.size() + 1) + " (" + describe(run.intent) + ") differ in configuration",
                run.start);
  }
  report.runs.push_back(std::move(run));
  report.intent = {};
  report.evidence = {};
  report.progress = {};
  run_failures_from = report.failures.size();
  failures_before_run = report.failure_count;
  run_lines_at_input_start = 0;
  bar_total = 0;
  loss_dicts = loss_dicts_at_bar = 0;
  bar_finished = false;
  run_start = {};
  disagreements.clear();
}

// The last run, when the inputs end: its summary is computed from the report, whose verdict is decided.
void ScanState::finish_runs(const ScanReport& decided) {
  RunReport run;
  run.start = run_start;
  run.verdict = decided.verdict;
  run.intent = decided.intent;
  const Progress& p = decided.progress;
  run.iteration_lines = p.iteration_lines;
  run.last_iteration = p.last_iteration;
  run.total_iterations = p.total_iterations;
  run.last_lm_loss = p.last_lm_loss;
  run.iteration_ms = p.iteration_ms();
  run.tflops = p.reported_tflops();
  run.failure_count = decided.failure_count - failures_before_run;
  if (!report.runs.empty() && !same_config(report.runs.back().intent, run.intent)) {
    add_warning("runs-differ",
                "run " + std::to_string(report.runs.size()) + " (" + describe(report.runs.back().intent) + ") and run " +
                    std::to_string(report.runs.size() + 1) + " (" + describe(run.intent) + ") differ in configuration; "
                    "the verdict is the last run's",
                run.start);
  }
  report.runs.push_back(std::move(run));
}

}  // namespace hcp::logscan

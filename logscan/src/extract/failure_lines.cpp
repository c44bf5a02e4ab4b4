// Failures: Python tracebacks (with their final exception line), the upstream HCP validation messages (mapped to
// the hcp-lint rule that catches them before a run), CUDA out-of-memory, NCCL errors and watchdog timeouts.
#include <re2/re2.h>

#include "../match/literal_set.hpp"
#include "../match/triggers.hpp"
#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

constexpr size_t kMaxMessage = 400;
constexpr int kMaxTracebackLines = 400;

std::string clip(std::string_view s) {
  s = trim(s);
  return std::string(s.substr(0, kMaxMessage));
}

std::string group_named(std::string_view text) {
  static const RE2 re(R"(PG GUID [^ (]*\(([A-Z_0-9]+)\))");
  std::string group;
  RE2::PartialMatch(text, re, &group);
  return group;
}

void upstream_validation_message(ScanState& s, const LineView& line) {
  // Megatron also prints some of these texts as warnings on healthy runs (its CUDA_DEVICE_MAX_CONNECTIONS advice
  // with FSDP or MoE overlap, warn_rank_0 / UserWarning): only the failing forms are failures.
  const std::string_view t = line.text;
  if (t.find("Warning") != std::string_view::npos || t.find("WARNING") != std::string_view::npos ||
      t.find("warnings.warn") != std::string_view::npos || t.find("to maximize the performance") != std::string_view::npos) {
    return;
  }
  for (const ValidationMessage& m : validation_messages()) {
    if (line.text.find(m.text) == std::string_view::npos) continue;
    s.add_failure({"hcp-validation", clip(line.text), std::string(m.lint_code), "", line.ref()});
    return;
  }
}

// slurmstepd's "*** JOB 42 ON node CANCELLED AT <time> DUE TO TIME LIMIT ***" (and its STEP twin): the job ended
// by Slurm, once per job and reason. Without a reason the user cancelled it, which is no failure of the job.
void slurm_cancellation(ScanState& s, const LineView& line) {
  static constexpr std::pair<std::string_view, std::string_view> kReasons[] = {
      {"DUE TO TIME LIMIT", "slurm-time-limit"},
      {"DUE TO PREEMPTION", "slurm-preempted"},
      {"DUE TO NODE FAIL", "slurm-node-fail"},
  };
  for (const auto& [reason, kind] : kReasons) {
    if (line.text.find(reason) == std::string_view::npos) continue;
    static const RE2 job(R"((?:JOB|STEP) (\d+))");
    std::string id;
    RE2::PartialMatch(line.text, job, &id);
    const std::string key = std::string(kind) + ":" + id;
    if (!s.slurm_cancellations.insert(key).second) return;
    s.add_failure({std::string(kind), clip(line.text), "", "", line.ref()});
    return;
  }
}

}  // namespace

void ScanState::add_failure(Failure f) {
  ++report.failure_count;
  report.failed = true;
  if (report.failures.size() < 256) report.failures.push_back(std::move(f));
}

void extract_failures(ScanState& s, const LineView& line, uint32_t triggers) {
  if (triggers & kTraceback) s.tracebacks[line.rank] = TracebackState{line.number, 0};
  if (triggers & kHcpValidation) upstream_validation_message(s, line);
  if (triggers & kOutOfMemory) {
    const size_t at = line.text.find("CUDA out of memory");
    s.add_failure({"cuda-oom", clip(at == std::string_view::npos ? line.text : line.text.substr(at)), "", "",
                   line.ref()});
  }
  if (triggers & kSlurmCancel) slurm_cancellation(s, line);
  if (triggers & kNcclTimeout) {
    s.add_failure({"nccl-timeout", clip(line.text), "", group_named(line.text), line.ref()});
  } else if (triggers & kNcclError) {
    s.add_failure({"nccl-error", clip(line.text), "", group_named(line.text), line.ref()});
  }
}

// The lines after "Traceback (most recent call last):" of the same rank: frames are indented; the first line at
// the left margin that is not a chaining remark is the exception.
void follow_tracebacks(ScanState& s, const LineView& line) {
  const auto it = s.tracebacks.find(line.rank);
  if (it == s.tracebacks.end() || it->second.started_at == line.number) return;
  TracebackState& tb = it->second;
  const std::string_view t = line.text;
  if (++tb.lines_seen > kMaxTracebackLines) {
    s.add_failure({"traceback", "Traceback without a final exception line", "", "", line.ref()});
    s.tracebacks.erase(it);
    return;
  }
  if (t.empty() || t[0] == ' ' || t[0] == '\t' || t.rfind("Traceback", 0) == 0 || t.rfind("During handling", 0) == 0 ||
      t.rfind("The above exception", 0) == 0 || t == "^" || t.find_first_not_of("^~ ") == std::string_view::npos) {
    return;
  }
  static const RE2 exception(R"(^([A-Za-z_][A-Za-z0-9_.]*)(?::\s*(.*))?$)");
  std::string type, message;
  if (RE2::FullMatch(t, exception, &type, &message)) {
    s.add_failure({"traceback", clip(t), "", "", line.ref()});
    s.tracebacks.erase(it);
  }
}

void follow_open_blocks(ScanState& s, const LineView& line) {
  if (!s.tracebacks.empty()) follow_tracebacks(s, line);
  if (s.list.active) follow_list(s, line);
}

void extract_gpu(ScanState& s, const LineView& line) {
  if (s.report.gpu) return;
  static const RE2 re(R"(NVIDIA (?:GeForce |RTX )?(GB200|GB300|[ABHL]\d{2,3}[A-Z]?)\b)");
  std::string model;
  if (!RE2::PartialMatch(line.text, re, &model)) return;
  s.report.gpu = model;
  s.report.gpu_where = line.ref();
}

void ScanState::dispatch(const LineView& line, uint32_t triggers) {
  if (wants_every_line()) follow_open_blocks(*this, line);
  if (triggers & (kIteration | kMemory | kModelTflop)) extract_progress(*this, line, triggers);
  if (triggers & (kWorldSize | kConfigKey)) extract_intent(*this, line, triggers);
  if (triggers & (kHcpRuntime | kGroupName | kNcclInit | kHyperCommGrid)) extract_groups(*this, line, triggers);
  if (triggers & (kTraceback | kOutOfMemory | kNcclError | kNcclTimeout | kHcpValidation | kSlurmCancel)) {
    extract_failures(*this, line, triggers);
  }
  if (triggers & kGpuName) extract_gpu(*this, line);
}

}  // namespace hcp::logscan

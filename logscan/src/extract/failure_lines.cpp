// Failures seen on one line: CUDA out of memory and other GPU faults (illegal memory access, device-side asserts,
// Xid, HIP errors), NCCL errors and c10d watchdog timeouts, Slurm ending a job, the OOM killer, and the upstream
// HCP validation messages (mapped to the hcp-lint rule that catches them before a run). Python warnings are
// reported as warnings. Multi-line blocks (tracebacks, torchrun's ChildFailedError, C++ terminate) are in
// failure_blocks.cpp.
#include <re2/re2.h>

#include <cctype>
#include <string_view>

#include "../match/triggers.hpp"
#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

// Where an out-of-memory message starts: at the exception's whole (dotted) name before the words -
// "torch.OutOfMemoryError: CUDA out of memory", "RuntimeError: CUDA out of memory" - or, without one, at the
// "CUDA"/"HIP" the words follow; never inside a name ("OfMemoryError: ..." was what a fixed offset gave).
size_t oom_message_start(std::string_view text) {
  const size_t words = text.find("out of memory");
  size_t name_end = text.rfind("Error", words);
  // A name only when it introduces the words ("Error: CUDA error: out of memory"), not one earlier in the line.
  if (words != std::string_view::npos && name_end != std::string_view::npos && words - name_end > 24)
    name_end = std::string_view::npos;
  size_t from = words == std::string_view::npos ? 0 : words;
  if (name_end != std::string_view::npos) {
    from = name_end;
  } else {
    for (std::string_view device : {"CUDA ", "HIP ", "CUDA error: ", "HIP error: "})
      if (from >= device.size() && text.substr(from - device.size(), device.size()) == device) from -= device.size();
  }
  auto in_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  while (from > 0 && in_name(text[from - 1])) --from;
  return from;
}

constexpr size_t kMaxMessage = 400;
constexpr size_t npos = std::string_view::npos;

bool has(std::string_view t, std::string_view what) { return t.find(what) != npos; }

// "[PG ID 7 PG GUID 41(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 1]" (torch 2.5+) and
// "[PG 9 (HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 1]" (torch 2.3/2.4).
std::string group_named(std::string_view text) {
  static const RE2 re(R"(\[PG (?:ID \d+ PG GUID [^ (]*|\d+ )\(([A-Za-z_0-9]+)\)(?: Rank \d+)?\])");
  std::string group;
  RE2::PartialMatch(text, re, &group);
  return group;
}

// The rank a c10d line names when the line has no rank prefix: "[Rank 3]", "[PG 1 Rank 3]".
int rank_named(const LineView& line) {
  if (line.rank >= 0) return line.rank;
  static const RE2 re(R"(\[(?:PG [^\]]*? )?Rank (\d{1,7})\])");
  int rank = -1;
  RE2::PartialMatch(line.text, re, &rank);
  return rank;
}

bool is_warning_line(std::string_view t) {
  return has(t, "Warning") || has(t, "WARNING") || has(t, "warnings.warn") || has(t, "to maximize the performance");
}

// Whether the line is one of the messages (a failure, or a warning in its warning form).
bool upstream_validation_message(ScanState& s, const LineView& line) {
  for (const ValidationMessage& m : validation_messages()) {
    if (!has(line.text, m.text)) continue;
    // Megatron also prints some of these texts as warnings on healthy runs (its CUDA_DEVICE_MAX_CONNECTIONS
    // advice with FSDP or MoE overlap, warn_rank_0 / UserWarning): only the failing forms are failures.
    if (is_warning_line(line.text)) {
      s.add_warning("validation-warning", clip_message(line.text), line.ref());
    } else {
      s.add_failure({m.lint_code.empty() ? "cp-validation" : "hcp-validation", clip_message(line.text),
                     std::string(m.lint_code), "", line.ref()});
    }
    return true;
  }
  return false;
}

// slurmstepd's "*** JOB 42 ON node CANCELLED AT <time> DUE TO TIME LIMIT ***" (and its STEP twin): the job ended
// by Slurm, once per job and reason. Without a reason the user cancelled it, which is no failure of the job.
void slurm_cancellation(ScanState& s, const LineView& line) {
  static constexpr std::pair<std::string_view, std::string_view> kReasons[] = {
      {"DUE TO TIME LIMIT", "slurm-time-limit"},
      {"DUE TO PREEMPTION", "slurm-preempted"},
      {"DUE TO NODE FAIL", "slurm-node-fail"},
  };
  static const RE2 job(R"((?:JOB|STEP) (\d+))");
  std::string id;
  RE2::PartialMatch(line.text, job, &id);
  for (const auto& [reason, kind] : kReasons) {
    if (!has(line.text, reason)) continue;
    if (!s.slurm_cancellations.insert(std::string(kind) + ":" + id).second) return;
    s.add_failure({std::string(kind), clip_message(line.text), "", "", {line.ref().file, line.number, -1}});
    return;
  }
  if (s.slurm_cancellations.insert("user:" + id).second) {
    s.add_warning("slurm-cancelled", "Slurm job cancelled without a reason (by its user): " + clip_message(line.text),
                  line.ref());
  }
}

// c10d's watchdog: a collective timed out, or the watchdog thread died of an exception whose text says which
// fault it was (an illegal memory access is the GPU's failure, not NCCL's).
// c10d's watchdog shown only by its C++ frames ("frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(...)",
// "Exception raised from checkTimeout at ..."), its what() line lost: the timeout path raised. Inside a C++
// terminate block the block reports it; elsewhere it is a timeout unless the run has one already.
bool check_timeout_frame(ScanState& s, const LineView& line) {
  const std::string_view t = trim(line.text);
  const bool frame = t.substr(0, 7) == "frame #" && has(t, "WorkNCCL::checkTimeout");
  if (!frame && !(t.substr(0, 21) == "Exception raised from" && has(t, "from checkTimeout at"))) return false;
  if (s.abort.active) return true;  // follow_abort notes it
  for (size_t i = s.run_failures_from; i < s.report.failures.size(); ++i) {
    if (s.report.failures[i].kind == "nccl-timeout") return true;
  }
  s.add_failure({"nccl-timeout", "c10d watchdog timeout, shown by its C++ frames: " + clip_message(t), "", "",
                 line.ref()});
  return true;
}

bool watchdog_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  if (check_timeout_frame(s, line)) return true;
  // "... Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang."
  if (!has(t, "Watchdog caught collective operation timeout") && !has(t, "atchdog thread terminated") &&
      !has(t, "detected by watchdog") && !has(t, "watchdog got stuck") && !has(t, "watchdog hang")) {
    return false;  // another mention of the watchdog
  }
  std::string kind = "nccl-timeout";
  const size_t ex = t.find("terminated with exception");
  if (ex != npos) {
    const std::string_view what = t.substr(ex);
    if (const std::string_view k = gpu_fault_kind(what); !k.empty()) {
      kind = std::string(k);
    } else if (!has(what, "Watchdog caught collective operation timeout") && !has(what, "timed out")) {
      kind = "nccl-error";
    }
  }
  SourceRef where = line.ref();
  where.rank = rank_named(line);
  s.add_failure({kind, clip_message(t), "", group_named(t), where}, fault_cause(t));
  return true;
}

// glog's fatal CHECK in C++ (PaddlePaddle, MXNet, older torch): "F0426 17:52:54.043815 30811 hl_cuda_device.cc:565]
// Check failed: cudaSuccess == cudaStat (0 vs. 39) Cuda Error: uncorrectable ECC error encountered". The F level
// aborts the process; the frames of "*** Check failure stack trace: ***" follow.
bool glog_check_failed(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  static const RE2 re(R"((?:^|[\s`\[])F\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]+\] Check failed: )");
  if (!has(t, "Check failed: ") || !RE2::PartialMatch(t, re)) return false;
  std::string kind(gpu_fault_kind(t));
  if (kind.empty()) {
    if (has(t, "Cuda Error") || has(t, "CUDA error") || has(t, "cuda error") || has(t, "cudaSuccess")) {
      kind = "cuda-error";
    } else if (has(t, "NCCL") || has(t, "nccl")) {
      kind = "nccl-error";
    } else {
      kind = "abort";
    }
  }
  s.add_failure({kind, clip_message(t.substr(t.find("Check failed: "))), "", "", line.ref()}, fault_cause(t));
  return true;
}

void gpu_fault_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  if (glog_check_failed(s, line)) return;
  if (has(t, "terminate called after throwing") || has(t, "terminate called without an active exception")) {
    s.abort = AbortBlock{};
    s.abort.active = true;
    s.abort.where = line.ref();
    if (has(t, "without an active exception")) s.abort.head = "terminate called without an active exception";
    return;
  }
  std::string kind(gpu_fault_kind(t));
  if (kind.empty()) {
    // "NVRM: Xid (PCI:...): 45, ..." ("NVRM:" may have been taken for a prefix), DCGM's "Detected Critical Xid
    // Error", and "GPU ... has fallen off the bus" (Xid 79).
    if (has(t, "Xid") || has(t, "fallen off the bus")) {
      kind = "xid";
    } else if (has(t, "HIP error")) {
      kind = "hip-error";
    } else if (has(t, "Assertion `") && has(t, "failed") && (has(t, "block: [") || has(t, ".cu:"))) {
      kind = "device-assert";  // a CUDA kernel's assert, printed by each thread that failed it
    } else {
      return;
    }
  }
  s.add_failure({kind, clip_message(t), "", "", line.ref()}, fault_cause(t));
}

// "NCCL error" in prose ("// 2 GPUs: NCCL error") is no error; NCCL's and torch's own lines say "NCCL error in:",
// "NCCL error:", "NCCL WARN" or name the nccl*Error result.
bool nccl_error_is_prose(std::string_view t) {
  return has(t, "L error") && !has(t, "NCCL error in") && !has(t, "NCCL error:") && !has(t, "L WARN") &&
         !has(t, "nccl") && !has(t, "Error:");
}

// "RuntimeError: CUDA error: uncorrectable ECC error encountered" (PyTorch 1.x: "RuntimeError: cuda runtime error
// (39) : uncorrectable ECC error encountered at ...") at the left margin: the exception line of a
// traceback whose header the log does not show (an excerpt, or lines lost). Inside an open traceback the
// traceback reader has it.
void exception_line(ScanState& s, const LineView& line) {
  if (s.tracebacks.count(line.rank)) return;
  // Also Transformer Engine's "ValueError: No dot product attention backend is available for the provided
  // inputs", which ends the run as surely; a '> ' is an issue's quote of the log.
  static const RE2 re(
      R"(^(?:> )?[A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception): .*(?:CUDA error: |cuda runtime error \(\d+\) : |No dot product attention backend is available))");
  if (!RE2::PartialMatch(line.text, re)) return;
  std::string_view kind = gpu_fault_kind(line.text);
  if (kind.empty()) kind = "traceback";
  s.add_failure({std::string(kind), clip_message(line.text), "", "", line.ref()}, fault_cause(line.text));
}

void python_warning(ScanState& s, const LineView& line) {
  static const RE2 re(R"(\b([A-Z][A-Za-z]*Warning): )");
  if (RE2::PartialMatch(line.text, re)) s.add_warning("python-warning", clip_message(line.text), line.ref());
}

}  // namespace

std::string clip_message(std::string_view s) {
  s = trim(s);
  return std::string(s.substr(0, kMaxMessage));
}

std::string_view gpu_fault_kind(std::string_view t) {
  if (has(t, "illegal memory access")) return "cuda-illegal-address";
  if (has(t, "device-side assert triggered") || has(t, "Device-side assertion `")) return "device-assert";
  if ((has(t, "out of memory") && (has(t, "CUDA") || has(t, "HIP") || has(t, "cuda"))) ||
      has(t, "OutOfMemoryError")) {
    return "cuda-oom";
  }
  return {};
}

std::string fault_cause(std::string_view t) {
  // "CUDA error: an illegal memory access was encountered", "cudaErrorECCUncorrectable: uncorrectable ECC error
  // encountered": the words after the last "error" label, up to the sentence's end.
  size_t at = npos;
  for (std::string_view key : {"CUDA error: ", "HIP error: ", "cudaError", "hipError"}) {
    const size_t k = t.rfind(key);
    if (k == npos) continue;
    const size_t colon = t.find(": ", k);
    if (colon != npos && (at == npos || colon + 2 > at)) at = colon + 2;
  }
  if (at == npos) return {};
  std::string_view cause = t.substr(at);
  cause = cause.substr(0, std::min(cause.find_first_of(".\n"), size_t{120}));
  return std::string(trim(cause));
}

void ScanState::add_failure(Failure f, std::string cause) {
  abort_without_what.reset();  // a process that ended without saying why: this failure's
  auto& items = report.failures;
  auto is_generic = [](const std::string& kind) { return kind == "traceback" || kind == "log-ends-in-traceback"; };
  const bool generic = is_generic(f.kind);
  for (size_t i = items.size(); i-- > run_failures_from;) {
    Failure& e = items[i];
    const bool same_rank = e.where.rank == f.where.rank;
    if (!generic && same_rank && is_generic(e.kind) && e.where.file == f.where.file &&
        f.where.line == e.where.line) {
      e.kind = std::move(f.kind);  // the traceback's exception line was this failure (its message stays whole)
      e.lint_code = std::move(f.lint_code);
      if (e.group.empty()) e.group = std::move(f.group);
      if (!cause.empty()) failure_causes[i] = std::move(cause);
      return;
    }
    const bool same_cause = !cause.empty() && failure_causes[i] == cause;
    if (same_cause || (same_rank && (e.kind == f.kind || generic))) {
      if (e.group.empty()) e.group = f.group;  // the watchdog names the group on a later line
      return;
    }
  }
  ++report.failure_count;
  report.failed = true;
  f.run = static_cast<int>(report.runs.size());
  if (items.size() < 256) {
    items.push_back(std::move(f));
    failure_causes.push_back(std::move(cause));
  }
}

void ScanState::add_warning(std::string kind, std::string message, SourceRef where) {
  ++report.warning_count;
  if (report.warnings.size() < 64) report.warnings.push_back({std::move(kind), std::move(message), std::move(where)});
}

void extract_failures(ScanState& s, const LineView& line, uint32_t triggers) {
  if ((triggers & kTraceback) && line.text.find("Traceback (most recent call last)") != std::string_view::npos) {
    s.tracebacks[line.rank] = TracebackState{line.number, 0};
  } else if ((triggers & kTraceback) && !s.tracebacks.count(line.rank) &&
             (is_python_frame(line.text) || is_rich_frame(line.text))) {
    s.tracebacks[line.rank] = TracebackState{line.number, 0};  // a frame without its header opens the traceback
  }
  const bool validation = (triggers & kHcpValidation) && upstream_validation_message(s, line);
  if (triggers & kSlurmCancel) slurm_cancellation(s, line);
  if (triggers & kChildFailed) child_failed_line(s, line);
  if (triggers & kOomKill && (has(line.text, "oom_kill event") || has(line.text, "oom-kill"))) {
    s.add_failure({"oom-kill", clip_message(line.text), "", "", line.ref()});
  }
  if ((triggers & kNcclTimeout) && watchdog_line(s, line)) {
  } else if (triggers & kGpuFault) {
    gpu_fault_line(s, line);
  } else if (triggers & kOutOfMemory) {
    if (gpu_fault_kind(line.text) == "cuda-oom") {
      s.add_failure({"cuda-oom", clip_message(line.text.substr(oom_message_start(line.text))), "", "", line.ref()},
                    "out of memory");
    }
  } else if (triggers & kCudaError) {
    exception_line(s, line);
  } else if ((triggers & kNcclError) && !nccl_error_is_prose(line.text)) {
    s.add_failure({"nccl-error", clip_message(line.text), "", group_named(line.text), line.ref()},
                  fault_cause(line.text));
  }
  if ((triggers & kWarning) && !validation) python_warning(s, line);
}

void follow_open_blocks(ScanState& s, const LineView& line) {
  if (!s.tracebacks.empty()) follow_tracebacks(s, line);
  if (s.list.active) follow_list(s, line);
  if (s.child_failed.active) follow_child_failed(s, line);
  if (s.abort.active) follow_abort(s, line);
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
  if (triggers & (kRunStart | kWorldSize)) extract_run_start(*this, line, triggers);
  if (wants_every_line()) follow_open_blocks(*this, line);
  if (triggers & (kIteration | kMemory | kModelTflop | kOtherProgress)) extract_progress(*this, line, triggers);
  if (triggers & (kWorldSize | kConfigKey)) extract_intent(*this, line, triggers);
  if (triggers & (kHcpRuntime | kGroupName | kNcclInit | kHyperCommGrid)) extract_groups(*this, line, triggers);
  if (triggers & (kTraceback | kOutOfMemory | kNcclError | kNcclTimeout | kHcpValidation | kSlurmCancel | kGpuFault |
                  kChildFailed | kOomKill | kWarning | kCudaError)) {
    extract_failures(*this, line, triggers);
  }
  if (triggers & kGpuName) extract_gpu(*this, line);
  if (triggers & kAttention) extract_attention(*this, line);
  if (triggers & kDynamicCp) extract_dynamic_cp(*this, line);
}

void ScanState::end_input(const std::string& file) { close_failure_blocks(*this, file); }

}  // namespace hcp::logscan

// Failures that span lines: Python tracebacks (one per rank at a time, read to their exception line), torchrun's
// ChildFailedError summary (its root cause's rank and exit code), and a C++ exception that ended the process
// ("terminate called after throwing ...", its "what():" and frames).
#include <re2/re2.h>

#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

constexpr int kMaxTracebackLines = 400;
constexpr int kMaxBlockLines = 40;
constexpr std::string_view kAgentFailed = "torchrun agent: ";  // a failure from the agent's line, not its block

bool starts_with(std::string_view t, std::string_view p) { return t.substr(0, p.size()) == p; }

void close_child_failed(ScanState& s) {
  ChildFailedBlock& b = s.child_failed;
  if (!b.active) return;
  SourceRef where = b.where;
  where.rank = b.rank;
  std::string message = "torchrun: ChildFailedError, ";
  message += b.in_list ? "first failure listed" : "root cause";
  if (b.rank >= 0) message += " rank " + std::to_string(b.rank);
  if (!b.exitcode.empty()) message += ", exitcode " + b.exitcode;
  // The agent's "failed (exitcode: 1) local_rank: 0" line came first for the same failure: the block names the
  // global rank, so it takes that failure's place.
  auto& items = s.report.failures;
  for (size_t i = s.run_failures_from; i < items.size(); ++i) {
    if (items[i].kind == "child-failed" && items[i].message.rfind(kAgentFailed, 0) == 0) {
      items[i].message = std::move(message);
      items[i].where = std::move(where);
      b = {};
      return;
    }
  }
  s.add_failure({"child-failed", message, "", "", where});
  b = {};
}

void close_abort(ScanState& s) {
  AbortBlock& b = s.abort;
  if (!b.active) return;

  // what() holds the exception's text: a GPU fault, a c10d watchdog's timeout ("[PG ID 16 ... Rank 2] Watchdog
  // caught collective operation timeout"), else an NCCL error when the frames are NCCL's.
  const std::string_view what = b.what;
  std::string kind(gpu_fault_kind(what));
  if (kind.empty()) {
    if (what.find("Watchdog caught collective operation timeout") != std::string_view::npos ||
        what.find("timed out") != std::string_view::npos || (what.empty() && b.in_check_timeout)) {
      kind = "nccl-timeout";
    } else if (b.in_nccl || what.find("NCCL") != std::string_view::npos) {
      kind = "nccl-error";
    } else {
      kind = what.find("CUDA error") != std::string_view::npos ? "cuda-error" : "abort";
    }
  }
  static const RE2 rank_re(R"(\[(?:PG [^\]]*? )?Rank (\d{1,7})\])");
  if (int rank = -1; b.where.rank < 0 && RE2::PartialMatch(what, rank_re, &rank)) b.where.rank = rank;
  std::string message(b.head);
  if (!b.what.empty()) message += ": " + b.what;
  Failure f{kind, clip_message(message), "", "", b.where};
  if (b.what.empty() && kind == "abort") {
    // Known only as a process that ended: held until the input ends (abort_without_what), unless the run has a
    // failure already.
    if (s.report.failures.size() == s.run_failures_from && !s.abort_without_what) s.abort_without_what = std::move(f);
  } else {
    s.add_failure(std::move(f), fault_cause(b.what));
  }
  b = {};
}

}  // namespace

// '  File "x.py", line 98, in pretrain' - the comma before "in" is the traceback's; faulthandler's stack dumps
// (hangs, not failures) write 'File "x.py", line 98 in pretrain'.
std::string_view without_gutter(std::string_view t) {
  const size_t lead = t.find_first_not_of(' ');  // npos for a blank line
  if (lead == std::string_view::npos || lead < 2 || t.size() - lead < 2) return t;
  return t[lead] == '|' && t[lead + 1] == ' ' ? t.substr(lead + 2) : t;
}

bool is_rich_frame(std::string_view t) {
  const size_t at = t.find("\xe2\x94\x82 \xe2\x9d\xb1 ");  // "│ ❱ "
  return at != std::string_view::npos && at + 8 < t.size() && t[at + 8] >= '0' && t[at + 8] <= '9';
}

bool is_python_frame(std::string_view t) {
  t = without_gutter(t);
  const size_t f = t.find("File \"");
  if (f == std::string_view::npos || f == 0 || t.find_first_not_of(' ') != f) return false;
  const size_t line = t.find("\", line ", f + 6);
  return line != std::string_view::npos && t.find(", in ", line + 7) != std::string_view::npos;
}

// The lines after "Traceback (most recent call last):" of the same rank: frames are indented; the first line at
// the left margin that is not a chaining remark is the exception.
void follow_tracebacks(ScanState& s, const LineView& line) {
  const auto it = s.tracebacks.find(line.rank);
  if (it == s.tracebacks.end() || it->second.started_at == line.number) return;
  TracebackState& tb = it->second;
  std::string_view t = without_gutter(line.text);
  if (++tb.lines_seen > kMaxTracebackLines) {
    s.add_failure({"traceback", "Traceback without a final exception line", "", "", line.ref()});
    s.tracebacks.erase(it);
    return;
  }
  // A block whose frames are indented more than Python's two spaces (a collector or a quote added the rest) has
  // its exception line indented by the same extra: that is its margin.
  const size_t lead = t.find_first_not_of(' ');
  if (tb.frame_indent < 0 && is_python_frame(t)) tb.frame_indent = static_cast<int>(lead);
  if (tb.frame_indent > 2 && lead == static_cast<size_t>(tb.frame_indent - 2)) t.remove_prefix(lead);
  if (t.empty() || t[0] == ' ' || t[0] == '\t' || starts_with(t, "Traceback") || starts_with(t, "During handling") ||
      starts_with(t, "The above exception") || t == "^" || t.find_first_not_of("^~ ") == std::string_view::npos) {
    return;
  }
  // "ValueError: ...", "torch.OutOfMemoryError: ...", Ray's "ray.exceptions.RayTaskError(TypeError): ...".
  static const RE2 exception(R"(^([A-Za-z_][A-Za-z0-9_.]*(?:\([A-Za-z_][A-Za-z0-9_.]*\))?)(?::\s*(.*))?$)");
  std::string type, message;
  if (RE2::FullMatch(t, exception, &type, &message)) {
    // torchrun's own exception repeats the ChildFailedError block, which is reported with its root cause.
    const bool child_failed = type.size() >= 16 && type.compare(type.size() - 16, 16, "ChildFailedError") == 0;
    if (!child_failed) s.add_failure({"traceback", clip_message(t), "", "", line.ref()}, fault_cause(t));
    s.tracebacks.erase(it);
  }
}

void child_failed_line(ScanState& s, const LineView& line) {
  const std::string_view t = trim(line.text);
  ChildFailedBlock& b = s.child_failed;
  // torchrun's agent, before its ChildFailedError block (which a log may lack): "ERROR:torch.distributed.elastic.
  // multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1622990) of binary: /usr/bin/python". The local
  // rank is not the global rank on a node other than the first, so the failure keeps the line's own rank.
  static const RE2 agent(R"(failed \(exitcode: (-?\d{1,4})\) local_rank: (\d{1,7}) \(pid: \d+\) of binary: )");
  std::string exitcode, local_rank;
  if (RE2::PartialMatch(t, agent, &exitcode, &local_rank)) {
    // After the worker's own failure it only reports that failure's exit.
    if (s.report.failures.size() > s.run_failures_from) return;
    s.add_failure({"child-failed",
                   std::string(kAgentFailed) + "worker local_rank " + local_rank + " failed with exitcode " + exitcode,
                   "", "", line.ref()});
    return;
  }
  if (t.find("Root Cause (first observed failure)") != std::string_view::npos) {
    b = ChildFailedBlock{true, false, 0, -1, "", line.ref()};  // the root cause wins over the list before it
  } else if (t == "Failures:" && !b.active) {
    b = ChildFailedBlock{true, true, 0, -1, "", line.ref()};
  }
}

// "Root Cause (first observed failure):" / "[0]:" / "  rank      : 3 (local_rank: 3)" / "  exitcode  : 1 (pid: 9)";
// in the list before it ("Failures:"), the first entry's rank and exit code, kept unless a root cause follows.
void follow_child_failed(ScanState& s, const LineView& line) {
  ChildFailedBlock& b = s.child_failed;
  if (line.number == b.where.line) return;
  static const RE2 rank(R"(^\s*rank\s*:\s*(\d+))");
  static const RE2 exitcode(R"(^\s*exitcode\s*:\s*(-?\d+(?: \(pid: \d+\))?))");
  const std::string_view t = line.text;
  const std::string_view bare = trim(t);
  if (b.in_list) {
    // Not torchrun's list after all ("Failures:" followed by anything but "[1]:" or "<NO_OTHER_FAILURES>").
    // An entry "[1]:" may have been taken for a rank prefix (a block of several entries looks like "[N]:"
    // prefixed lines): its text is then empty.
    const bool entry = bare.empty() || starts_with(bare, "[") || starts_with(bare, "<NO_OTHER_FAILURES>");
    if (b.lines_seen == 0 && !entry) {
      b = {};
      return;
    }
    if (starts_with(bare, "<NO_OTHER_FAILURES>")) b.lines_seen = 1;
    int r = -1;
    if (b.rank < 0 && RE2::PartialMatch(t, rank, &r)) b.rank = r;
    if (b.exitcode.empty()) RE2::PartialMatch(t, exitcode, &b.exitcode);
    // A list of many ranks is read to its end, where the root cause or the block's last rule comes; bounded.
    if (++b.lines_seen >= 400 || starts_with(bare, "=====")) close_child_failed(s);
    return;
  }
  RE2::PartialMatch(t, rank, &b.rank);
  RE2::PartialMatch(t, exitcode, &b.exitcode);
  if (++b.lines_seen >= 12 || starts_with(bare, "=====") || (b.rank >= 0 && !b.exitcode.empty())) {
    close_child_failed(s);
  }
}

void follow_abort(ScanState& s, const LineView& line) {
  AbortBlock& b = s.abort;
  if (line.number == b.where.line) return;
  const std::string_view t = trim(line.text);
  if (starts_with(t, "what():")) {
    b.what = std::string(trim(t.substr(7)));
  } else if (starts_with(t, "frame #") || starts_with(t, "Exception raised from") || t.empty()) {
    if (t.find("ProcessGroupNCCL") != std::string_view::npos) b.in_nccl = true;
    if (t.find("checkTimeout") != std::string_view::npos) b.in_check_timeout = true;
  } else {
    close_abort(s);
    return;
  }
  if (++b.lines_seen >= kMaxBlockLines) close_abort(s);
}

void close_failure_blocks(ScanState& s, const std::string& file) {
  close_child_failed(s);
  close_abort(s);
  if (s.abort_without_what) {
    Failure f = std::move(*s.abort_without_what);
    s.abort_without_what.reset();
    s.add_failure(std::move(f));
  }
  // A traceback still open when its input ends: the process died while printing it, or the log was cut there.
  for (const auto& [rank, tb] : s.tracebacks) {
    const SourceRef where{file, tb.started_at, rank};
    s.add_failure({"log-ends-in-traceback", "the log ends inside a traceback (no exception line)", "", "", where});
  }
  s.tracebacks.clear();
}

}  // namespace hcp::logscan

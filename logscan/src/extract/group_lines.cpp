// Evidence of process groups: the runtime's "created ..." and "using the caller's ..." lines, PyTorch c10d lines that name a group, other
// mentions of HIERARCHICAL_CONTEXT_PARALLEL_GROUPS, NCCL "Init COMPLETE" sizes, Bridge's HyperCommGrid.
#include <re2/re2.h>

#include "../match/triggers.hpp"
#include "scan_state.hpp"

namespace hcp::logscan {
namespace {

GroupEvidence& evidence(ScanState& s, const std::string& source, const std::string& group, const LineView& line) {
  GroupEvidence& g = s.report.evidence.groups[source + ":" + group];
  if (g.lines == 0) {
    g.group = group;
    g.source = source;
    g.first = line.ref();
  }
  ++g.lines;
  return g;
}

// The trigger found "[hcp] rank" on the raw line; a log whose every line starts "[hcp]" has that learned as its
// prefix, so the text may start at "rank".
bool runtime_line(ScanState& s, const LineView& line) {
  static const RE2 cp(R"((?:\[hcp\] )?rank (\d+): created CONTEXT_PARALLEL_GROUP size=(\d+))");
  static const RE2 hier(R"((?:\[hcp\] )?rank (\d+): created HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=\[([0-9, ]*)\])");
  // Groups the caller made (hcp.torch on torch.distributed groups, hcp_cp_context_create_on_groups): the CP rank is
  // known, the world rank is not.
  static const RE2 given(R"re((?:\[hcp\] )?cp rank (\d+): using the caller's CONTEXT_PARALLEL_GROUP size=(\d+))re"
                         R"re((?: and HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=\[([0-9, ]*)\])?)re");
  int rank = 0;
  int64_t size = 0;
  std::string sizes;
  Intent& in = s.report.intent;
  if (RE2::PartialMatch(line.text, cp, &rank, &size)) {
    GroupEvidence& g = evidence(s, "hcp-runtime", "CONTEXT_PARALLEL_GROUP", line);
    g.ranks.insert(rank);
    g.sizes.insert(size);
    if (!in.cp.value) in.cp = {size, line.ref()};
    return true;
  }
  if (RE2::PartialMatch(line.text, hier, &rank, &sizes)) {
    GroupEvidence& g = evidence(s, "hcp-runtime", "HIERARCHICAL_CONTEXT_PARALLEL_GROUPS", line);
    g.ranks.insert(rank);
    if (auto levels = to_int_list(sizes)) {
      for (int64_t v : *levels) g.sizes.insert(v);
      if (!in.hcp_sizes.value) in.hcp_sizes = {std::optional(*levels), line.ref()};
    }
    return true;
  }
  sizes.clear();
  if (RE2::PartialMatch(line.text, given, &rank, &size, &sizes)) {
    GroupEvidence& g = evidence(s, "hcp-runtime", "CONTEXT_PARALLEL_GROUP", line);
    if (line.rank >= 0) g.ranks.insert(line.rank);
    g.sizes.insert(size);
    if (!in.cp.value) in.cp = {size, line.ref()};
    if (sizes.empty()) return true;
    GroupEvidence& h = evidence(s, "hcp-runtime", "HIERARCHICAL_CONTEXT_PARALLEL_GROUPS", line);
    if (line.rank >= 0) h.ranks.insert(line.rank);
    if (auto levels = to_int_list(sizes)) {
      for (int64_t v : *levels) h.sizes.insert(v);
      if (!in.hcp_sizes.value) in.hcp_sizes = {std::optional(*levels), line.ref()};
    }
    return true;
  }
  return false;
}

void c10d_line(ScanState& s, const LineView& line) {
  // torch 2.5+: [PG ID 7 PG GUID 41(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 1] ProcessGroupNCCL created ...
  // torch 2.3/2.4: [PG 9 (HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 1] ProcessGroupNCCL created ...
  static const RE2 re(
      R"(\[PG (?:ID \d+ PG GUID [^ (]*|\d+ )\(((?:HIERARCHICAL_)?CONTEXT_PARALLEL_GROUP(?:_L\d+)?)\) Rank (\d+)\])");
  std::string group;
  int group_rank = 0;
  if (RE2::PartialMatch(line.text, re, &group, &group_rank)) {
    GroupEvidence& g = evidence(s, "c10d", group, line);
    if (line.rank >= 0) g.ranks.insert(line.rank);
    return;
  }
  if (line.text.find("HIERARCHICAL_CONTEXT_PARALLEL_GROUPS") != std::string_view::npos) {
    GroupEvidence& g = evidence(s, "mention", "HIERARCHICAL_CONTEXT_PARALLEL_GROUPS", line);
    if (line.rank >= 0) g.ranks.insert(line.rank);
  }
}

// "... NCCL INFO ncclCommInitRank comm 0x... rank 1 nranks 2 cudaDev 1 ... - Init COMPLETE" (hundreds per run:
// parsed by hand)
void nccl_init_line(ScanState& s, const LineView& line) {
  const std::string_view t = line.text;
  if (t.find("Init COMPLETE") == std::string_view::npos || t.find("ncclComm") == std::string_view::npos) return;
  const size_t at = t.find(" nranks ");
  if (at == std::string_view::npos) return;
  size_t end = at + 8;
  while (end < t.size() && t[end] >= '0' && t[end] <= '9') ++end;
  const auto n = to_int(t.substr(at + 8, end - at - 8));
  if (!n) return;
  ++s.report.evidence.nccl_comm_sizes[*n];
  if (!s.report.evidence.nccl_first) s.report.evidence.nccl_first = line.ref();
}

}  // namespace

void extract_groups(ScanState& s, const LineView& line, uint32_t triggers) {
  if ((triggers & kHcpRuntime) && runtime_line(s, line)) return;
  if (triggers & kGroupName) c10d_line(s, line);
  if (triggers & kNcclInit) nccl_init_line(s, line);
  if ((triggers & kHyperCommGrid) && line.text.find("initialized HyperCommGrid") != std::string_view::npos &&
      !s.report.evidence.hypercommgrid) {
    s.report.evidence.hypercommgrid = line.ref();
  }
}

}  // namespace hcp::logscan

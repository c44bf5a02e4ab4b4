// Megatron's dynamic CP (main's --hybrid-context-parallel, dev's --dynamic-context-parallel) at run time: the CP
// group of each micro-batch is picked from groups of several sizes, so the run is neither flat CP of one size nor
// CP off when a micro-batch runs without it. Two kinds of line show it:
// - dev's validate_args warning (rank 0): "Dynamic CP enabled: dp_size * context_parallel_size=8 will be used as the
//   maximum dynamic CP group size. Dynamic CP groups will range from min_dynamic_context_parallel_size=1 to 8."
// - PyTorch's c10d lines of the groups it creates, described HYBRID_DP_CP_GROUP_<n> (main: n = 2, 4, ... up to
//   dp*cp/2) or DYNAMIC_DP_CP_GROUP_<n> (dev), e.g. "[PG ID 7 PG GUID 12(HYBRID_DP_CP_GROUP_2) Rank 1]".
#include <re2/re2.h>

#include "scan_state.hpp"

namespace hcp::logscan {

void extract_dynamic_cp(ScanState& s, const LineView& line) {
  static const RE2 warning(
      R"(Dynamic CP enabled: dp_size \* context_parallel_size=(\d{1,9}) .*? from min_dynamic_context_parallel_size=(\d{1,9}))");
  static const RE2 group(R"(\b((?:HYBRID|DYNAMIC)_DP_CP_GROUP)_(\d{1,9})\b)");
  DynamicCpEvidence& d = s.report.evidence.dynamic_cp;
  int64_t most = 0, least = 0;
  std::string name;
  if (RE2::PartialMatch(line.text, warning, &most, &least)) {
    // Groups of every power of two from the least size up to half the most, and the full size (which reuses the
    // data-parallel-with-CP group). most < 10^9, so n stays far from overflow.
    for (int64_t n = 1; n < most; n *= 2) {
      if (n >= least) d.group_sizes.insert(n);
    }
    d.group_sizes.insert(most);
    if (!d.first) {
      d.first = line.ref();
      d.how = "Megatron's \"Dynamic CP enabled\" warning (groups of " + std::to_string(least) + " to " +
              std::to_string(most) + " ranks)";
    }
  } else if (RE2::PartialMatch(line.text, group, &name, &most)) {
    d.group_sizes.insert(most);
    if (!d.first) {
      d.first = line.ref();
      d.how = "process group " + name + "_" + std::to_string(most);
    }
  }
}

}  // namespace hcp::logscan

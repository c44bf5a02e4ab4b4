// `hcp attn --inject-fault RANK:STEP:KIND`: makes one rank fail at its STEP-th ring exchange (post_send_recv,
// counted over all its communicators), so that the tests can show what the other ranks do with real processes:
//   kill  - the process ends itself with SIGKILL (a crashed rank; the launcher then ends the job);
//   hang  - the rank stops answering (sleeps), the others time out;
//   abort - the rank aborts its communicator (a rank that gives up), the others fail with its reason.
// A wrapper around the communicator (and the groups split from it); no fault code is in the runtime.
#pragma once

#include <memory>
#include <string>

#include "hcp/communicator.hpp"

namespace hcp::cli {

struct FaultPlan {
  int rank = -1;  // -1: none
  int step = 1;
  std::string kind;
};

// Parses RANK:STEP:KIND; throws Error(invalid_config) naming the option.
FaultPlan parse_fault(const std::string& text);

// `inner` itself when the plan does not name inner's rank; else a wrapper that fails as planned.
std::unique_ptr<Communicator> with_fault(std::unique_ptr<Communicator> inner, const FaultPlan& plan);

}  // namespace hcp::cli

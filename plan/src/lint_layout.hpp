// Runs hcp-lint's rules on one candidate layout, written as the Megatron-Bridge overrides a user would pass, with
// the cluster as command-line facts: the layout is rejected by any error, and keeps the warnings as notes.
#pragma once

#include <vector>

#include "hcp/plan/plan.hpp"

namespace hcp::plan {

struct LintVerdict {
  std::vector<Finding> errors, warnings;
};

LintVerdict lint_layout(const PlanInput& in, const Layout& l);

}  // namespace hcp::plan

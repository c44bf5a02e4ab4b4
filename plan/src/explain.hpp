// The plan's sentences: what each candidate's layer time goes to, and why the first one wins.
#pragma once

#include <string>

#include "hcp/plan/plan.hpp"

namespace hcp::plan {

std::string explain_candidate(const PlanInput& in, const Candidate& c);
std::string explain_verdict(const PlanResult& r);

// Shared number formats: "1.25 ms", "2.0 MiB", "71%".
std::string ms(double seconds);
std::string mib(double bytes);
std::string pct(double fraction);

}  // namespace hcp::plan

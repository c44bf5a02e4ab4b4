#pragma once

#include "hcp/logscan/report.hpp"

namespace hcp::logscan {

// Sets verdict, step_completed, failed, reasons and advice from what was extracted (precedence in docs/logscan.md).
void decide(ScanReport& report);

}  // namespace hcp::logscan

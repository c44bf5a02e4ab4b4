// The documented exit codes of every hcp command (docs/cli.md).
#pragma once

namespace hcp::cli {

inline constexpr int kExitOk = 0;        // success, nothing to report
inline constexpr int kExitFindings = 1;  // findings at or above the threshold (lint), a bad verdict (logscan)
inline constexpr int kExitInput = 2;     // bad usage, an invalid configuration, an input that cannot be read/parsed
inline constexpr int kExitInternal = 3;  // a bug in hcp

}  // namespace hcp::cli

// The documented exit codes of every hcp command (docs/cli.md).
#pragma once

namespace hcp::cli {

inline constexpr int kExitOk = 0;        // success, nothing to report
inline constexpr int kExitFindings = 1;  // findings at or above the threshold (lint), a bad verdict (logscan)
inline constexpr int kExitInput = 2;     // bad usage, an invalid configuration, an input that cannot be read/parsed
inline constexpr int kExitInternal = 3;  // a bug in hcp
inline constexpr int kExitNotComparable = 4;  // logscan diff: the two runs are not comparable
inline constexpr int kExitStopCp = 5;         // logscan --follow --exit-on: a CP verdict it was told to stop on
inline constexpr int kExitStopFailure = 6;    // logscan --follow --exit-on failure: a failure appeared

}  // namespace hcp::cli

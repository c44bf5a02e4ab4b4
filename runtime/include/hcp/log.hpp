// hcp's log sink. The runtime reports what it did (the created CP groups, in the lines hcp-logscan verifies) through
// one process-wide callback; by default lines go to stderr. The level comes from HCP_LOG_LEVEL (error, warn, info,
// debug, or off; default info), read once at first use.
#pragma once

#include <string>

namespace hcp {

enum class LogLevel : int { error = 0, warn = 1, info = 2, debug = 3 };

// Receives one line without a trailing newline. Called from whichever thread logs, possibly concurrently.
using LogCallback = void (*)(int level, const char* line, void* user);

// nullptr restores the stderr sink. Thread-safe.
void set_log_callback(LogCallback callback, void* user);
bool log_enabled(LogLevel level);
void log_line(LogLevel level, const std::string& line);

}  // namespace hcp

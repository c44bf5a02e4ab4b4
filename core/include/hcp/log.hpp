// hcp's log sink. The runtime reports what it did (the created CP groups, in the lines hcp-logscan verifies) through
// one process-wide callback; by default lines go to stderr. The level comes from HCP_LOG_LEVEL (error, warn, info,
// debug, or off; default info), read once at first use.
#pragma once

#include <string>

namespace hcp {

enum class LogLevel : int { error = 0, warn = 1, info = 2, debug = 3 };

// Receives one line without a trailing newline. Calls are serialised (never two at once) and made without any hcp
// lock held, so the callback may log or call set_log_callback itself; a line may be delivered by another logging
// thread than the one that wrote it, in the order lines were written.
using LogCallback = void (*)(int level, const char* line, void* user);

// nullptr restores the stderr sink. Thread-safe. When it returns, the previous callback is not running and will
// not be called again (unless the caller is that callback).
void set_log_callback(LogCallback callback, void* user);
bool log_enabled(LogLevel level);
void log_line(LogLevel level, const std::string& line);

}  // namespace hcp

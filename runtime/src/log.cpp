#include "hcp/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace hcp {
namespace {

std::mutex g_mu;
LogCallback g_callback = nullptr;
void* g_user = nullptr;

int level_from_env() {
  const char* text = std::getenv("HCP_LOG_LEVEL");
  if (text == nullptr || *text == '\0') return static_cast<int>(LogLevel::info);
  static const char* const names[] = {"error", "warn", "info", "debug"};
  for (int i = 0; i < 4; ++i)
    if (std::strcmp(text, names[i]) == 0 || (text[0] == '0' + i && text[1] == '\0')) return i;
  if (std::strcmp(text, "off") == 0) return -1;
  std::fprintf(stderr, "[hcp] HCP_LOG_LEVEL=%s is not one of error, warn, info, debug, off; using info\n", text);
  return static_cast<int>(LogLevel::info);
}

int threshold() {
  static const int level = level_from_env();
  return level;
}

}  // namespace

void set_log_callback(LogCallback callback, void* user) {
  std::lock_guard lock(g_mu);
  g_callback = callback;
  g_user = user;
}

bool log_enabled(LogLevel level) { return static_cast<int>(level) <= threshold(); }

void log_line(LogLevel level, const std::string& line) {
  if (!log_enabled(level)) return;
  // The lock also keeps concurrent ranks' lines whole on stderr.
  std::lock_guard lock(g_mu);
  if (g_callback != nullptr) {
    g_callback(static_cast<int>(level), line.c_str(), g_user);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace hcp

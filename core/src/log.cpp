#include "hcp/log.hpp"

#include <condition_variable>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace hcp {
namespace {

// Lines are queued under the lock and delivered outside it by one thread at a time (the first thread that finds
// nobody delivering drains the queue), so that a callback may log, replace itself or call anything else in hcp
// without deadlocking, and calls never overlap.
struct Sink {
  std::mutex mu;
  std::condition_variable call_ended;
  LogCallback callback = nullptr;
  void* user = nullptr;
  uint64_t generation = 0;  // raised by every set_log_callback
  std::deque<std::pair<int, std::string>> queue;
  bool delivering = false;
  std::thread::id deliverer;
  bool calling = false;
  uint64_t calling_generation = 0;
};

Sink& sink() {
  static Sink* s = new Sink;  // never destroyed: threads may still log during static destruction
  return *s;
}

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
  Sink& s = sink();
  std::unique_lock lock(s.mu);
  s.callback = callback;
  s.user = user;
  const uint64_t generation = ++s.generation;
  // Once this returns, the previous callback is not running and will not be called again, so its user data may be
  // freed - except when the caller is that callback itself (waiting would never end).
  if (s.deliverer != std::this_thread::get_id()) {
    s.call_ended.wait(lock, [&] { return !s.calling || s.calling_generation >= generation; });
  }
}

bool log_enabled(LogLevel level) { return static_cast<int>(level) <= threshold(); }

void log_line(LogLevel level, const std::string& line) {
  if (!log_enabled(level)) return;
  Sink& s = sink();
  std::unique_lock lock(s.mu);
  s.queue.emplace_back(static_cast<int>(level), line);
  if (s.delivering) return;  // the delivering thread (perhaps this one, inside the callback) sends it in order
  s.delivering = true;
  s.deliverer = std::this_thread::get_id();
  while (!s.queue.empty()) {
    auto [lvl, text] = std::move(s.queue.front());
    s.queue.pop_front();
    const LogCallback callback = s.callback;
    void* const user = s.user;
    s.calling = true;
    s.calling_generation = s.generation;
    lock.unlock();
    if (callback != nullptr) {
      callback(lvl, text.c_str(), user);
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
    lock.lock();
    s.calling = false;
    s.call_ended.notify_all();
  }
  s.delivering = false;
  s.deliverer = std::thread::id();
}

}  // namespace hcp

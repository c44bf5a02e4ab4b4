#include "logscan_follow.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "command_name.hpp"
#include "exit_codes.hpp"
#include "hcp/error.hpp"
#include "hcp/json_writer.hpp"
#include "hcp/printable.hpp"
#include "hcp/logscan/follow.hpp"
#include "hcp/logscan/render.hpp"

namespace hcp::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop.store(true); }

std::string event_text(const logscan::LiveEvent& e) {
  using K = logscan::LiveEvent::Kind;
  std::string out = "hcp-logscan: ";
  if (e.kind == K::verdict) {
    out += "verdict " + std::string(logscan::verdict_name(e.verdict));
    if (!e.reasons.empty()) {
      out += ": " + e.reasons.front().first;
      if (!e.reasons.front().second.file.empty()) out += " (" + e.reasons.front().second.text() + ")";
    }
  } else if (e.kind == K::failure) {
    const logscan::Failure& f = e.failure;
    out += "failure " + f.kind;
    if (f.where.rank >= 0) out += " rank " + std::to_string(f.where.rank);
    if (!f.group.empty()) out += " (" + f.group + ")";
    out += " at " + f.where.text() + ": " + f.message;
  } else {
    out += "warning " + e.warning.kind + " at " + e.warning.where.text() + ": " + e.warning.message;
  }
  return printable_line(out);  // a log line's BEL or 8-bit CSI must not reach the terminal
}

std::string event_json(const logscan::LiveEvent& e) {
  using K = logscan::LiveEvent::Kind;
  std::string out;
  JsonWriter w(out, false);
  w.begin_object();
  w.key("event");
  auto where = [&](const logscan::SourceRef& r) {
    w.key("rank");
    if (r.rank >= 0) w.value(r.rank); else w.null();
    w.key("where");
    if (r.file.empty()) w.null(); else w.value(r.text());
  };
  if (e.kind == K::verdict) {
    w.value("verdict");
    w.key("verdict");
    w.value(logscan::verdict_name(e.verdict));
    w.key("reasons");
    w.begin_array();
    for (const auto& [text, ref] : e.reasons) {
      w.begin_object();
      w.key("text");
      w.value(text);
      w.key("where");
      if (ref.file.empty()) w.null(); else w.value(ref.text());
      w.end_object();
    }
    w.end_array();
  } else if (e.kind == K::failure) {
    w.value("failure");
    w.key("kind");
    w.value(e.failure.kind);
    w.key("message");
    w.value(e.failure.message);
    w.key("group");
    if (e.failure.group.empty()) w.null(); else w.value(e.failure.group);
    where(e.failure.where);
  } else {
    w.value("warning");
    w.key("kind");
    w.value(e.warning.kind);
    w.key("message");
    w.value(e.warning.message);
    where(e.warning.where);
  }
  w.end_object();
  return out;
}

bool wanted(const std::vector<std::string>& exit_on, const logscan::LiveEvent& e) {
  using K = logscan::LiveEvent::Kind;
  const std::string name = e.kind == K::verdict ? std::string(logscan::verdict_name(e.verdict))
                                                : (e.kind == K::failure ? "failure" : "");
  return !name.empty() && std::find(exit_on.begin(), exit_on.end(), name) != exit_on.end();
}

}  // namespace

int run_follow(const FollowArgs& a, const logscan::ScanOptions& options) {
  if (a.paths.empty()) throw Error(Errc::invalid_argument, "--follow: give log files or directories to follow");
  if (a.poll_ms < 10 || a.poll_ms > 60000) throw Error(Errc::invalid_argument, "--poll-ms must be in 10..60000");
  if (a.until_idle_s < 0) throw Error(Errc::invalid_argument, "--until-idle must be >= 0 (seconds)");
  g_stop.store(false);
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  logscan::FollowOptions follow;
  follow.poll_ms = a.poll_ms;
  follow.until_idle_s = a.until_idle_s;
  follow.stop = &g_stop;
  int stopped = -1;
  const logscan::ScanReport r = logscan::follow_paths(a.paths, options, follow, [&](const logscan::LiveEvent& e) {
    std::cout << (a.format == "json" ? event_json(e) : event_text(e)) << "\n" << std::flush;
    if (!wanted(a.exit_on, e)) return true;
    stopped = e.kind == logscan::LiveEvent::Kind::failure ? kExitStopFailure : kExitStopCp;
    return false;
  });
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (stopped >= 0) return stopped;
  if (a.format == "json") {
    std::string out;
    JsonWriter w(out, false);
    w.begin_object();
    w.key("event");
    w.value("end");
    w.key("verdict");
    w.value(logscan::verdict_name(r.verdict));
    w.key("failed");
    w.value(r.failed);
    w.key("failures");
    w.value(static_cast<int64_t>(r.failure_count));
    w.end_object();
    std::cout << out << "\n";
  } else {
    std::cout << logscan::render_text(r);
  }
  std::cout << std::flush;
  // A path of which nothing was read (it never appeared, or no file appeared in the directory): as a scan of a
  // missing path or an empty directory, one line on stderr and exit 2 (an "unknown" over nothing read must not
  // pass for a clean run).
  for (const logscan::FileReport& f : r.files) {
    if (f.error) std::cerr << command_name() << ": error: " << printable(f.path + ": " + *f.error) << "\n";
  }
  bool never = false;
  for (const std::string& p : a.paths) {
    std::error_code ec;
    // The path itself, a file in it, or its rotated copies ("x.log (after rotation 1)") - not "x.log.1".
    const bool read = std::any_of(r.files.begin(), r.files.end(), [&](const logscan::FileReport& f) {
      return f.path.rfind(p, 0) == 0 && (f.path.size() == p.size() || f.path[p.size()] == '/' ||
                                         f.path[p.size()] == ' ' || p.back() == '/');
    });
    if (read) continue;
    const char* what = std::filesystem::is_directory(p, ec) ? ": no file appeared in it while it was followed"
                       : std::filesystem::exists(p, ec)     ? ": nothing could be read from it"
                                                            : ": never appeared while it was followed";
    std::cerr << command_name() << ": error: " << printable(p + what) << "\n";
    never = true;
  }
  if (never || r.unreadable_inputs()) return kExitInput;
  const bool bad = r.verdict == logscan::Verdict::cp_silently_off || r.verdict == logscan::Verdict::hcp_not_active;
  return bad || r.failed ? kExitFindings : kExitOk;
}

}  // namespace hcp::cli

#include "logscan_command.hpp"

#include <algorithm>
#include <iostream>
#include <memory>

#include "command_name.hpp"
#include "value_hints.hpp"
#include "exit_codes.hpp"
#include "hcp/error.hpp"
#include "hcp/logscan/render.hpp"
#include "hcp/printable.hpp"
#include "hcp/logscan/scanner.hpp"
#include "logscan_follow.hpp"

namespace hcp::cli {
namespace {

struct LogscanArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string expect;
  std::string gpu;
  unsigned jobs = 0;
  // diff
  std::string base, next;
  double threshold = 5.0;
  CLI::App* diff = nullptr;
  // --follow
  bool follow = false;
  std::string exit_on;
  int poll_ms = 250;
  double until_idle = 0;
};

logscan::ScanOptions options(const LogscanArgs& a) {
  logscan::ScanOptions o;
  if (!a.gpu.empty()) o.gpu = a.gpu;
  if (a.jobs > 1024) throw Error(Errc::invalid_argument, "--jobs must be 0 (every core) to 1024");
  o.jobs = a.jobs;
  o.series = a.format == "html";  // the charts need every iteration line's values
  return o;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// What --follow --exit-on stops on: the verdicts, and failure.
const std::vector<std::string>& follow_events() {
  static const std::vector<std::string> kEvents = {"cp-silently-off", "hcp-not-active", "hcp-active", "dynamic-cp",
                                                   "flat-cp",         "no-cp",          "unknown",    "failure"};
  return kEvents;
}

// GPU models the scanner's peak-throughput table knows (scanner.cpp); another name is taken as given.
const std::vector<std::string>& known_gpus() {
  static const std::vector<std::string> kGpus = {"h100", "h200", "a100", "b200"};
  return kGpus;
}

int run_follow_command(const LogscanArgs& a) {
  FollowArgs f;
  f.paths = a.paths;
  if (a.format == "html" || a.format == "github")
    throw Error(Errc::invalid_argument, "--follow writes events as text or json; --format " + a.format +
                                            " is a report of a finished scan");
  f.format = a.format == "json" ? "json" : "text";
  f.exit_on = split_list(a.exit_on);
  const std::vector<std::string>& kKnown = follow_events();
  for (const std::string& e : f.exit_on) {
    if (std::find(kKnown.begin(), kKnown.end(), e) == kKnown.end()) {
      throw Error(Errc::invalid_argument, "--exit-on: unknown event '" + e +
                                              "' (cp-silently-off, hcp-not-active, hcp-active, dynamic-cp, "
                                              "flat-cp, no-cp, unknown, failure)");
    }
  }
  f.poll_ms = a.poll_ms;
  f.until_idle_s = a.until_idle;
  return run_follow(f, options(a));
}


bool expectation_met(const std::string& expect, logscan::Verdict v) {
  if (expect.empty()) return true;
  if (expect == "hcp") return v == logscan::Verdict::hcp_active;
  if (expect == "flat") return v == logscan::Verdict::flat_cp;
  if (expect == "dynamic") return v == logscan::Verdict::dynamic_cp;
  return v == logscan::Verdict::no_cp;
}

int run_diff(const LogscanArgs& a) {
  // Written so that nan fails too: no regression would ever pass a nan threshold.
  if (!(a.threshold >= 0 && a.threshold <= 1e6))
    throw Error(Errc::invalid_argument, "--threshold must be a percentage in [0, 1e6]");
  const logscan::ScanReport base = logscan::scan_paths({a.base}, options(a));
  const logscan::ScanReport next = logscan::scan_paths({a.next}, options(a));
  const logscan::DiffReport d = logscan::diff_reports(base, next, a.threshold / 100);
  const std::string out = a.format == "json"   ? logscan::render_diff_json(d)
                          : a.format == "html" ? logscan::render_diff_html(d, base, next)
                                               : logscan::render_diff_text(d);
  std::cout << out << std::flush;
  for (const auto* r : {&base, &next}) {
    for (const auto& f : r->files) {
      if (f.error) std::cerr << command_name() << ": error: " << printable(f.path + ": " + *f.error) << "\n";
    }
    if (r->unreadable_inputs()) return kExitInput;
  }
  if (!d.comparable()) return kExitNotComparable;
  return d.regression() ? kExitFindings : kExitOk;
}

int run_scan(const LogscanArgs& a) {
  if (a.paths.empty()) throw Error(Errc::invalid_argument, "nothing to scan: give log files, directories or -");
  const logscan::ScanReport r = logscan::scan_paths(a.paths, options(a));
  std::string out;
  if (a.format == "json") out = logscan::render_json(r);
  else if (a.format == "github") out = logscan::render_github(r);
  else if (a.format == "html") out = logscan::render_html(r);
  else out = logscan::render_text(r);
  std::cout << out << std::flush;
  for (const auto& f : r.files) {
    if (f.error) std::cerr << command_name() << ": error: " << printable(f.path + ": " + *f.error) << "\n";
  }
  if (r.unreadable_inputs()) return kExitInput;
  const bool bad = r.verdict == logscan::Verdict::cp_silently_off || r.verdict == logscan::Verdict::hcp_not_active;
  if (bad || r.failed || !expectation_met(a.expect, r.verdict)) return kExitFindings;
  return kExitOk;
}

}  // namespace

std::function<int()> add_logscan_command(CLI::App& app) {
  auto a = std::make_shared<LogscanArgs>();
  CLI::App* cmd = app.add_subcommand("logscan", "Decide from training logs whether hierarchical CP was active (also: hcp-logscan)");
  cmd->add_option("paths", a->paths, "Log files (plain, .zst, .gz), directories, or - for standard input")
      ->type_name("PATH");
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "github", "html"}))
      ->capture_default_str();
  cmd->add_option("--expect", a->expect, "Exit 1 unless the verdict is hcp-active, dynamic-cp, flat-cp or no-cp")
      ->check(CLI::IsMember({"hcp", "dynamic", "flat", "no-cp"}));
  hint_values(cmd->add_option("--gpu", a->gpu, "GPU model when the log does not name it (h100, h200, a100, b200)"),
              {known_gpus()})
      ->type_name("GPU");
  cmd->add_option("--jobs,-j", a->jobs,
                  "Threads reading files (0: every core); the report is the same for any number")
      ->capture_default_str();
  cmd->add_flag("--follow", a->follow,
                "Read the logs while the job writes them (new files in directories, rotation and truncation "
                "survived); print the verdict once settled and each failure as it appears");
  hint_values(cmd->add_option("--exit-on", a->exit_on,
                              "With --follow: stop at once on these events (comma list of verdicts and 'failure'): "
                              "exit 5 for a verdict, 6 for a failure"),
              {follow_events(), true})
      ->type_name("EVENTS");
  cmd->add_option("--poll-ms", a->poll_ms, "With --follow: how often to look at the files")->capture_default_str();
  cmd->add_option("--until-idle", a->until_idle,
                  "With --follow: stop after this many seconds without new output (0: until interrupted)")
      ->capture_default_str();
  a->diff = cmd->add_subcommand("diff", "Compare two runs: verdict, iteration time, throughput, peak memory, loss");
  a->diff->add_option("base", a->base, "Logs of the base run")->required()->type_name("PATH");
  a->diff->add_option("new", a->next, "Logs of the new run")->required()->type_name("PATH");
  a->diff->add_option("--threshold", a->threshold, "Regression threshold in percent")->capture_default_str();
  a->diff->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"text", "json", "html"}));
  hint_values(a->diff->add_option("--gpu", a->gpu, "GPU model when the logs do not name it"), {known_gpus()})
      ->type_name("GPU");
  return [a] {
    if (a->diff->parsed()) return run_diff(*a);
    // NaN compares false with everything: it would never be reached, and a negative wait means nothing.
    if (!(a->until_idle >= 0 && a->until_idle <= 1e9))
      throw Error(Errc::invalid_argument, "--until-idle must be a number of seconds from 0 to 1e9");
    if (a->poll_ms < 1) throw Error(Errc::invalid_argument, "--poll-ms must be positive");
    if (!a->follow && (!a->exit_on.empty() || a->until_idle != 0)) {
      throw Error(Errc::invalid_argument, "--exit-on and --until-idle need --follow");
    }
    return a->follow ? run_follow_command(*a) : run_scan(*a);
  };
}

}  // namespace hcp::cli

#include "logscan_command.hpp"

#include <iostream>
#include <memory>

#include "exit_codes.hpp"
#include "hcp/error.hpp"
#include "hcp/logscan/render.hpp"
#include "hcp/logscan/scanner.hpp"

namespace hcp::cli {
namespace {

struct LogscanArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string expect;
  std::string gpu;
  // diff
  std::string base, next;
  double threshold = 5.0;
  CLI::App* diff = nullptr;
};

logscan::ScanOptions options(const LogscanArgs& a) {
  logscan::ScanOptions o;
  if (!a.gpu.empty()) o.gpu = a.gpu;
  return o;
}

bool expectation_met(const std::string& expect, logscan::Verdict v) {
  if (expect.empty()) return true;
  if (expect == "hcp") return v == logscan::Verdict::hcp_active;
  if (expect == "flat") return v == logscan::Verdict::flat_cp;
  return v == logscan::Verdict::no_cp;
}

int run_diff(const LogscanArgs& a) {
  if (a.threshold < 0) throw Error(Errc::invalid_argument, "--threshold must be >= 0 (percent)");
  const logscan::ScanReport base = logscan::scan_paths({a.base}, options(a));
  const logscan::ScanReport next = logscan::scan_paths({a.next}, options(a));
  const logscan::DiffReport d = logscan::diff_reports(base, next, a.threshold / 100);
  const std::string out = a.format == "json" ? logscan::render_diff_json(d) : logscan::render_diff_text(d);
  std::cout << out << std::flush;
  for (const auto* r : {&base, &next}) {
    for (const auto& f : r->files) {
      if (f.error) std::cerr << "hcp logscan: error: " << f.path << ": " << *f.error << "\n";
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
  else out = logscan::render_text(r);
  std::cout << out << std::flush;
  for (const auto& f : r.files) {
    if (f.error) std::cerr << "hcp logscan: error: " << f.path << ": " << *f.error << "\n";
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
  cmd->add_option("paths", a->paths, "Log files (plain, .zst, .gz), directories, or - for standard input");
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "github"}))
      ->capture_default_str();
  cmd->add_option("--expect", a->expect, "Exit 1 unless the verdict is hcp-active, flat-cp or no-cp")
      ->check(CLI::IsMember({"hcp", "flat", "no-cp"}));
  cmd->add_option("--gpu", a->gpu, "GPU model when the log does not name it (h100, h200, a100, b200)");
  a->diff = cmd->add_subcommand("diff", "Compare two runs: verdict, iteration time, throughput, peak memory, loss");
  a->diff->add_option("base", a->base, "Logs of the base run")->required();
  a->diff->add_option("new", a->next, "Logs of the new run")->required();
  a->diff->add_option("--threshold", a->threshold, "Regression threshold in percent")->capture_default_str();
  a->diff->add_option("--format", a->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  a->diff->add_option("--gpu", a->gpu, "GPU model when the logs do not name it");
  return [a] { return a->diff->parsed() ? run_diff(*a) : run_scan(*a); };
}

}  // namespace hcp::cli

// One renderer per output format, and the comparison of two runs (`hcp logscan diff`).
#pragma once

#include <string>
#include <vector>

#include "hcp/logscan/report.hpp"

namespace hcp::logscan {

std::string render_text(const ScanReport& report);
std::string render_json(const ScanReport& report);
std::string render_github(const ScanReport& report);
// One self-contained HTML page (no scripts or external resources); charts need ScanOptions::series.
std::string render_html(const ScanReport& report);

struct MetricChange {
  std::string name;                 // "median iteration time (ms)"
  std::optional<double> base, next;
  std::optional<double> change;     // relative, (next - base) / base
  bool higher_is_worse = true;
  bool regression = false;
};

// A configuration value in which the two runs differ.
struct ConfigDifference {
  std::string key;   // "world size", "tp", "cp_comm_type", "gpu", "progress format", ...
  std::string base, next;
  bool cp = false;   // a context-parallel key: the change diff exists to judge
};

struct DiffReport {
  // Whether the runs can be compared: "same" (no known key differs), "cp" (only the CP configuration differs,
  // the comparison diff is for), "unrelated" (the model's scale or the hardware differs: no regression is
  // judged), "unknown" (too little configuration shown to tell; compared, and said so).
  std::string comparability = "unknown";
  std::vector<ConfigDifference> differences;
  std::string base_verdict, next_verdict;
  bool verdict_regression = false;
  std::vector<MetricChange> metrics;
  double threshold = 0.05;
  bool regression() const;
  bool comparable() const { return comparability != "unrelated"; }
};

DiffReport diff_reports(const ScanReport& base, const ScanReport& next, double threshold);
std::string render_diff_text(const DiffReport& diff);
std::string render_diff_json(const DiffReport& diff);
// Both runs' charts overlaid (scanned with ScanOptions::series).
std::string render_diff_html(const DiffReport& diff, const ScanReport& base, const ScanReport& next);

}  // namespace hcp::logscan

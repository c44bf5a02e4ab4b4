// One renderer per output format, and the comparison of two runs (`hcp logscan diff`).
#pragma once

#include <string>
#include <vector>

#include "hcp/logscan/report.hpp"

namespace hcp::logscan {

std::string render_text(const ScanReport& report);
std::string render_json(const ScanReport& report);
std::string render_github(const ScanReport& report);

struct MetricChange {
  std::string name;                 // "median iteration time (ms)"
  std::optional<double> base, next;
  std::optional<double> change;     // relative, (next - base) / base
  bool higher_is_worse = true;
  bool regression = false;
};

struct DiffReport {
  std::string base_verdict, next_verdict;
  bool verdict_regression = false;
  std::vector<MetricChange> metrics;
  double threshold = 0.05;
  bool regression() const;
};

DiffReport diff_reports(const ScanReport& base, const ScanReport& next, double threshold);
std::string render_diff_text(const DiffReport& diff);
std::string render_diff_json(const DiffReport& diff);

}  // namespace hcp::logscan

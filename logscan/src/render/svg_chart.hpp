// Inline SVG charts for the HTML report: line charts of a metric against the iteration (one polyline per series,
// every point of it, restarts as dashed vertical markers, an optional reference line such as the GPU's peak), and
// the per-rank failure timeline. No scripts; hover titles are SVG <title> elements.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hcp::logscan {

struct ChartSeries {
  std::string name;  // legend text
  std::string css_class;  // on the polyline, with "series"
  std::vector<std::pair<double, double>> points;  // finite (x, y)
};

struct ChartMarker {
  double x = 0;
  std::string label;
};

struct ChartOptions {
  std::string id, title, x_label, y_label;
  std::optional<double> reference;  // a horizontal line
  std::string reference_label;
};

std::string svg_line_chart(const std::vector<ChartSeries>& series, const std::vector<ChartMarker>& markers,
                           const ChartOptions& options);

struct TimelineEvent {
  std::string row;  // "rank 3", "file x.log"
  double position = 0;  // 0..1 along its input
  std::string label;    // kind: message (shown on hover)
};

std::string svg_timeline(const std::vector<TimelineEvent>& events, const std::string& id);

}  // namespace hcp::logscan

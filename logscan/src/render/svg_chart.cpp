#include "svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "hcp/html_page.hpp"

// GCC 12 warns wrongly about overlapping copies in `"literal" + std::string` chains (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace hcp::logscan {
namespace {

constexpr double kW = 900, kH = 260, kLeft = 70, kRight = 20, kTop = 30, kBottom = 40;
const char* const kColours[] = {"#1971c2", "#e8590c", "#2b8a3e", "#9c36b5", "#c92a2a", "#0c8599", "#5c940d"};

std::string fmt(double v, const char* f = "%.1f") {
  char buf[48];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A tick label: short, whatever the magnitude.
std::string tick(double v) {
  const double a = std::fabs(v);
  if (a >= 1e6 || (a > 0 && a < 1e-3)) return fmt(v, "%.2g");
  if (a >= 100) return fmt(v, "%.0f");
  if (a >= 10) return fmt(v, "%.1f");
  return fmt(v, "%.3g");
}

// Values are drawn within +-1e300, so that spans stay finite; a flat series gets a span relative to its size.
constexpr double kLimit = 1e300;
double bounded(double v) { return std::clamp(v, -kLimit, kLimit); }

struct Range {
  double lo = INFINITY, hi = -INFINITY;
  void add(double v) {
    lo = std::min(lo, bounded(v));
    hi = std::max(hi, bounded(v));
  }
  void settle(double pad) {
    if (!(lo <= hi)) lo = 0, hi = 1;
    const double size = std::max({std::fabs(lo), std::fabs(hi), 1.0});
    if (hi - lo < 1e-9 * size) lo -= 0.5 * size * 1e-3 + 0.5, hi += 0.5 * size * 1e-3 + 0.5;
    const double p = (hi - lo) * pad;
    lo -= p, hi += p;
  }
};

}  // namespace

std::string svg_line_chart(const std::vector<ChartSeries>& series, const std::vector<ChartMarker>& markers,
                           const ChartOptions& o) {
  Range x, y;
  for (const ChartSeries& s : series)
    for (const auto& [px, py] : s.points) x.add(px), y.add(py);
  for (const ChartMarker& m : markers) x.add(m.x);
  if (o.reference) y.add(*o.reference);
  x.settle(0.0), y.settle(0.06);
  if (x.lo < 0 && x.hi > 0) x.lo = std::min(x.lo, 0.0);
  auto sx = [&](double v) { return kLeft + (bounded(v) - x.lo) / (x.hi - x.lo) * (kW - kLeft - kRight); };
  auto sy = [&](double v) { return kH - kBottom - (bounded(v) - y.lo) / (y.hi - y.lo) * (kH - kTop - kBottom); };
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"" + html_escape(o.id) +
                  "\" width=\"" + fmt(kW, "%.0f") + "\" height=\"" + fmt(kH, "%.0f") + "\" viewBox=\"0 0 " +
                  fmt(kW, "%.0f") + " " + fmt(kH, "%.0f") + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<text x=\"" + fmt(kLeft, "%.0f") + "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" +
       html_escape(o.title) + "</text>\n";
  // Axes and ticks.
  s += "<rect x=\"" + fmt(kLeft) + "\" y=\"" + fmt(kTop) + "\" width=\"" + fmt(kW - kLeft - kRight) +
       "\" height=\"" + fmt(kH - kTop - kBottom) + "\" fill=\"#fff\" stroke=\"#adb5bd\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double vy = y.lo + (y.hi - y.lo) * i / 4, vx = x.lo + (x.hi - x.lo) * i / 4;
    s += "<line x1=\"" + fmt(kLeft) + "\" x2=\"" + fmt(kW - kRight) + "\" y1=\"" + fmt(sy(vy)) + "\" y2=\"" +
         fmt(sy(vy)) + "\" stroke=\"#f1f3f5\"/><text x=\"" + fmt(kLeft - 6) + "\" y=\"" + fmt(sy(vy) + 4) +
         "\" text-anchor=\"end\">" + tick(vy) + "</text>\n";
    s += "<text x=\"" + fmt(sx(vx)) + "\" y=\"" + fmt(kH - kBottom + 16) + "\" text-anchor=\"middle\">" + tick(vx) +
         "</text>\n";
  }
  s += "<text x=\"" + fmt((kLeft + kW - kRight) / 2) + "\" y=\"" + fmt(kH - 6) + "\" text-anchor=\"middle\">" +
       html_escape(o.x_label) + "</text>\n";
  s += "<text x=\"14\" y=\"" + fmt((kTop + kH - kBottom) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
       fmt((kTop + kH - kBottom) / 2) + ")\">" + html_escape(o.y_label) + "</text>\n";
  if (o.reference) {
    s += "<line class=\"reference\" x1=\"" + fmt(kLeft) + "\" x2=\"" + fmt(kW - kRight) + "\" y1=\"" +
         fmt(sy(*o.reference)) + "\" y2=\"" + fmt(sy(*o.reference)) +
         "\" stroke=\"#c92a2a\" stroke-dasharray=\"2 3\"/><text x=\"" + fmt(kW - kRight - 4) + "\" y=\"" +
         fmt(sy(*o.reference) - 4) + "\" text-anchor=\"end\" fill=\"#c92a2a\">" + html_escape(o.reference_label) +
         "</text>\n";
  }
  for (const ChartMarker& m : markers) {
    s += "<g class=\"restart\"><line x1=\"" + fmt(sx(m.x)) + "\" x2=\"" + fmt(sx(m.x)) + "\" y1=\"" + fmt(kTop) +
         "\" y2=\"" + fmt(kH - kBottom) + "\" stroke=\"#868e96\" stroke-dasharray=\"5 4\"/><text x=\"" +
         fmt(sx(m.x) + 3) + "\" y=\"" + fmt(kH - kBottom - 5) + "\" fill=\"#495057\">" + html_escape(m.label) +
         "</text></g>\n";
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const ChartSeries& c = series[i];
    const char* colour = kColours[i % (sizeof kColours / sizeof kColours[0])];
    std::string pts;
    pts.reserve(c.points.size() * 14);
    for (const auto& [px, py] : c.points) {
      if (!pts.empty()) pts += ' ';
      pts += fmt(sx(px)) + "," + fmt(sy(py));
    }
    s += "<polyline class=\"series " + html_escape(c.css_class) + "\" data-points=\"" +
         std::to_string(c.points.size()) + "\" fill=\"none\" stroke=\"" + colour +
         "\" stroke-width=\"1.5\" points=\"" + pts + "\"><title>" + html_escape(c.name) + "</title></polyline>\n";
    s += "<text x=\"" + fmt(kLeft + 10 + 150.0 * static_cast<double>(i)) + "\" y=\"" + fmt(kTop + 14) +
         "\" fill=\"" + colour + "\">" + html_escape(c.name) + "</text>\n";
  }
  return s + "</svg>\n";
}

std::string svg_timeline(const std::vector<TimelineEvent>& events, const std::string& id) {
  std::map<std::string, size_t> rows;
  for (const TimelineEvent& e : events) rows.emplace(e.row, 0);
  size_t i = 0;
  for (auto& [row, index] : rows) index = i++;
  const double row_h = 22, left = 110, width = kW;
  const double height = 40 + row_h * static_cast<double>(rows.size());
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" id=\"" + html_escape(id) +
                  "\" width=\"" + fmt(width, "%.0f") + "\" height=\"" + fmt(height, "%.0f") +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  for (const auto& [row, index] : rows) {
    const double yy = 20 + row_h * static_cast<double>(index);
    // Long row names (file names) are cut to fit left of the line; the whole name is the hover title.
    std::string shown = row;
    if (row.size() > 17) {
      size_t cut = 16;  // at a UTF-8 character boundary
      while (cut > 0 && (static_cast<unsigned char>(row[cut]) & 0xC0) == 0x80) --cut;
      shown = row.substr(0, cut) + "\xE2\x80\xA6";
    }
    s += "<text x=\"4\" y=\"" + fmt(yy + 15) + "\"><title>" + html_escape(row) + "</title>" + html_escape(shown) +
         "</text><line x1=\"" + fmt(left) +
         "\" x2=\"" + fmt(width - 20) + "\" y1=\"" + fmt(yy + 11) + "\" y2=\"" + fmt(yy + 11) +
         "\" stroke=\"#dee2e6\"/>\n";
  }
  for (const TimelineEvent& e : events) {
    const double yy = 20 + row_h * static_cast<double>(rows[e.row]) + 11;
    const double xx = left + std::clamp(e.position, 0.0, 1.0) * (width - 20 - left);
    s += "<circle class=\"failure\" cx=\"" + fmt(xx) + "\" cy=\"" + fmt(yy) +
         "\" r=\"5\" fill=\"#c92a2a\"><title>" + html_escape(e.label) + "</title></circle>\n";
  }
  s += "<text x=\"" + fmt(left) + "\" y=\"" + fmt(height - 6) +
       "\" fill=\"#868e96\">position in the rank's log: start to end</text>\n";
  return s + "</svg>\n";
}

}  // namespace hcp::logscan

// `hcp logscan diff BASE NEW`: did the verdict, iteration time, throughput, peak memory or loss get worse?
#include <cmath>
#include <sstream>

#include "hcp/json_writer.hpp"
#include "hcp/logscan/render.hpp"

namespace hcp::logscan {
namespace {

bool broken(Verdict v) { return v == Verdict::cp_silently_off || v == Verdict::hcp_not_active; }

MetricChange metric(std::string name, std::optional<double> base, std::optional<double> next, bool higher_is_worse,
                    double threshold) {
  MetricChange m{std::move(name), base, next, std::nullopt, higher_is_worse, false};
  if (base && next && *base != 0) {
    m.change = (*next - *base) / std::fabs(*base);
    m.regression = higher_is_worse ? *m.change > threshold : *m.change < -threshold;
  }
  return m;
}

std::optional<double> throughput(const ScanReport& r) { return r.progress.reported_tflops(); }

std::string cell(std::optional<double> v) {
  if (!v) return "-";
  std::ostringstream o;
  o.precision(2);
  o << std::fixed << *v;
  return o.str();
}

}  // namespace

bool DiffReport::regression() const {
  if (verdict_regression) return true;
  for (const MetricChange& m : metrics) {
    if (m.regression) return true;
  }
  return false;
}

DiffReport diff_reports(const ScanReport& base, const ScanReport& next, double threshold) {
  DiffReport d;
  d.threshold = threshold;
  d.base_verdict = std::string(verdict_name(base.verdict));
  d.next_verdict = std::string(verdict_name(next.verdict));
  // Worse: the new run lost hierarchical CP, or turned up broken where the base was not.
  d.verdict_regression = base.verdict != next.verdict &&
                         (broken(next.verdict) || base.verdict == Verdict::hcp_active);
  d.metrics.push_back(metric("median iteration time (ms)", base.progress.iteration_ms(),
                             next.progress.iteration_ms(), true, threshold));
  d.metrics.push_back(metric("median throughput (TFLOP/s/GPU)", throughput(base), throughput(next), false, threshold));
  d.metrics.push_back(metric("peak reserved memory (MB)", base.progress.max_reserved_mb, next.progress.max_reserved_mb,
                             true, threshold));
  d.metrics.push_back(metric("last lm loss", base.progress.last_lm_loss, next.progress.last_lm_loss, true, threshold));
  return d;
}

std::string render_diff_text(const DiffReport& d) {
  std::ostringstream o;
  o << "verdict: " << d.base_verdict << " -> " << d.next_verdict << (d.verdict_regression ? "  REGRESSION" : "") << "\n";
  for (const MetricChange& m : d.metrics) {
    char line[160];
    std::snprintf(line, sizeof line, "%-34s %12s -> %-12s %9s", m.name.c_str(), cell(m.base).c_str(),
                  cell(m.next).c_str(), m.change ? (cell(*m.change * 100) + "%").c_str() : "-");
    o << line << (m.regression ? "  REGRESSION" : "") << "\n";
  }
  o << (d.regression() ? "regressions beyond " : "no regression beyond ") << cell(d.threshold * 100) << "%\n";
  return o.str();
}

std::string render_diff_json(const DiffReport& d) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("base_verdict");
  w.value(d.base_verdict);
  w.key("new_verdict");
  w.value(d.next_verdict);
  w.key("verdict_regression");
  w.value(d.verdict_regression);
  w.key("threshold");
  w.value(d.threshold);
  w.key("metrics");
  w.begin_array();
  for (const MetricChange& m : d.metrics) {
    w.begin_object();
    w.key("name");
    w.value(m.name);
    for (auto [key, v] : {std::pair{"base", m.base}, std::pair{"new", m.next}, std::pair{"change", m.change}}) {
      w.key(key);
      if (v) w.value(*v); else w.null();
    }
    w.key("regression");
    w.value(m.regression);
    w.end_object();
  }
  w.end_array();
  w.key("regression");
  w.value(d.regression());
  w.end_object();
  out += '\n';
  return out;
}

}  // namespace hcp::logscan

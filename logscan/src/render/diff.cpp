// `hcp logscan diff BASE NEW`: did the verdict, iteration time, throughput, peak memory or loss get worse?
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <sstream>

#include "hcp/json_writer.hpp"
#include "hcp/logscan/render.hpp"
#include "hcp/printable.hpp"

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

template <typename T>
std::string text_of(const T& v) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return std::to_string(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
    return out;
  } else {  // hierarchical sizes: None or a list
    if (!v) return "None";
    std::string out = "[";
    for (int64_t x : *v) out += (out.size() > 1 ? "," : "") + std::to_string(x);
    return out + "]";
  }
}

// Adds a difference when both runs show the key and disagree; counts keys both show.
template <typename T>
void compare_key(DiffReport& d, int& known, const char* key, const std::optional<T>& a, const std::optional<T>& b,
                 bool cp) {
  if (!a || !b) return;
  ++known;
  if (*a == *b) return;
  d.differences.push_back({key, text_of(*a), text_of(*b), cp});
}

void comparability(DiffReport& d, const ScanReport& base, const ScanReport& next) {
  const Intent& a = base.intent;
  const Intent& b = next.intent;
  int known = 0;
  compare_key(d, known, "world size", a.world_size.value, b.world_size.value, false);
  compare_key(d, known, "tp", a.tp.value, b.tp.value, false);
  compare_key(d, known, "pp", a.pp.value, b.pp.value, false);
  compare_key(d, known, "gpu", base.gpu, next.gpu, false);
  std::optional<std::string> fa, fb;
  if (base.progress.format != ProgressFormat::none) fa = std::string(progress_format_name(base.progress.format));
  if (next.progress.format != ProgressFormat::none) fb = std::string(progress_format_name(next.progress.format));
  const int scale_keys = known;
  int formats = 0;  // the same format says nothing about the runs' scale
  compare_key(d, formats, "progress format", fa, fb, false);
  compare_key(d, known, "context_parallel_size", a.cp.value, b.cp.value, true);
  compare_key(d, known, "cp_comm_type", a.cp_comm_type.value, b.cp_comm_type.value, true);
  compare_key(d, known, "hierarchical_context_parallel_sizes", a.hcp_sizes.value, b.hcp_sizes.value, true);
  // Data parallelism follows from the rest when the world size is the same; alone it says little.
  const bool unrelated = std::any_of(d.differences.begin(), d.differences.end(),
                                     [](const ConfigDifference& c) { return !c.cp; });
  if (unrelated) {
    d.comparability = "unrelated";
  } else if (!d.differences.empty()) {
    d.comparability = "cp";
  } else {
    // "same" needs the scale of both runs; CP keys alone do not say it is the same model on the same machines.
    d.comparability = scale_keys > 0 ? "same" : "unknown";
  }
}

}  // namespace

bool DiffReport::regression() const {
  if (!comparable()) return false;  // an unrelated pair is reported as such, not as a regression
  if (verdict_regression) return true;
  for (const MetricChange& m : metrics) {
    if (m.regression) return true;
  }
  return false;
}

DiffReport diff_reports(const ScanReport& base, const ScanReport& next, double threshold) {
  DiffReport d;
  d.threshold = threshold;
  comparability(d, base, next);
  d.base_verdict = std::string(verdict_name(base.verdict));
  d.next_verdict = std::string(verdict_name(next.verdict));
  // Worse: the new run lost hierarchical CP, or turned up broken where the base was not.
  d.verdict_regression = base.verdict != next.verdict &&
                         (broken(next.verdict) || base.verdict == Verdict::hcp_active);
  const double t = d.comparable() ? threshold : INFINITY;  // unrelated runs: changes shown, none judged
  d.metrics.push_back(metric("median iteration time (ms)", base.progress.iteration_ms(),
                             next.progress.iteration_ms(), true, t));
  d.metrics.push_back(metric("median throughput (TFLOP/s/GPU)", throughput(base), throughput(next), false, t));
  d.metrics.push_back(metric("peak reserved memory (MB)", base.progress.max_reserved_mb, next.progress.max_reserved_mb,
                             true, t));
  d.metrics.push_back(metric("last lm loss", base.progress.last_lm_loss, next.progress.last_lm_loss, true, t));
  return d;
}

std::string render_diff_text(const DiffReport& d) {
  std::ostringstream o;
  if (d.comparability == "unrelated") {
    o << "NOT COMPARABLE: the runs differ in more than their CP configuration; changes are shown, none is judged\n";
  } else if (d.comparability == "cp") {
    o << "comparable: the runs differ only in their CP configuration\n";
  } else if (d.comparability == "same") {
    o << "comparable: same parallel layout and GPU as far as the logs show\n";
  } else {
    o << "comparability unknown: the logs show too little configuration to tell; compared as if alike\n";
  }
  for (const ConfigDifference& c : d.differences) o << "  " << c.key << ": " << c.base << " -> " << c.next << "\n";
  o << "verdict: " << d.base_verdict << " -> " << d.next_verdict
    << (d.verdict_regression && d.comparable() ? "  REGRESSION" : "") << "\n";
  for (const MetricChange& m : d.metrics) {
    char line[160];
    std::snprintf(line, sizeof line, "%-34s %12s -> %-12s %9s", m.name.c_str(), cell(m.base).c_str(),
                  cell(m.next).c_str(), m.change ? (cell(*m.change * 100) + "%").c_str() : "-");
    o << line << (m.regression ? "  REGRESSION" : "") << "\n";
  }
  if (d.comparable()) {
    o << (d.regression() ? "regressions beyond " : "no regression beyond ") << cell(d.threshold * 100) << "%\n";
  }
  return printable(o.str());  // control characters from the logs shown as escapes
}

std::string render_diff_json(const DiffReport& d) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("comparability");
  w.value(d.comparability);
  w.key("differences");
  w.begin_array();
  for (const ConfigDifference& c : d.differences) {
    w.begin_object();
    w.key("key");
    w.value(c.key);
    w.key("base");
    w.value(c.base);
    w.key("new");
    w.value(c.next);
    w.key("cp");
    w.value(c.cp);
    w.end_object();
  }
  w.end_array();
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

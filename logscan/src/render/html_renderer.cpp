// The HTML report: one self-contained page (html_page.hpp) with the verdict, its reasons and their evidence, the
// configuration of each run, loss, iteration time and TFLOP/s against the iteration (every iteration line a point,
// one line per run, restarts marked, the GPU's peak drawn), the failures on a per-rank timeline, the warnings and
// the inputs. `diff` overlays the two runs' charts.
#include <cmath>
#include <cstdio>
#include <map>

#include "hcp/html_page.hpp"
#include "hcp/logscan/render.hpp"
#include "svg_chart.hpp"

// GCC 12 warns wrongly about overlapping copies in `"literal" + std::string` chains (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace hcp::logscan {
namespace {

std::string num(double v, const char* f = "%.1f") {
  char buf[48];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string td(const std::string& text, bool right = false) {
  return (right ? "<td class=\"num\">" : "<td>") + html_escape(text) + "</td>";
}

const char* verdict_class(Verdict v) {
  switch (v) {
    case Verdict::hcp_active: return "good";
    case Verdict::cp_silently_off:
    case Verdict::hcp_not_active: return "bad";
    default: return "warn";
  }
}

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

template <typename T>
std::string opt(const std::optional<T>& v, const char* f = "%.1f") {
  if (!v) return "-";
  if constexpr (std::is_floating_point_v<T>) return num(*v, f);
  else return std::to_string(*v);
}

std::string comm_types(const Intent& in) {
  if (!in.cp_comm_type.value) return "-";
  std::string t;
  for (const auto& x : *in.cp_comm_type.value) t += (t.empty() ? "" : ",") + x;
  return t;
}

std::string sizes(const Intent& in) {
  if (!in.hcp_sizes.value) return "-";
  return *in.hcp_sizes.value ? list(**in.hcp_sizes.value) : "None";
}

// One metric of the series, split by run: finite values only, x the iteration (the line's index when the
// iteration could not be read).
std::vector<ChartSeries> by_run(const ScanReport& r, double SeriesPoint::*field, const std::string& prefix) {
  std::map<int, ChartSeries> runs;
  for (size_t i = 0; i < r.series.size(); ++i) {
    const SeriesPoint& p = r.series[i];
    const double y = p.*field;
    if (!std::isfinite(y)) continue;
    ChartSeries& c = runs[p.run];
    if (c.name.empty()) {
      c.name = prefix + "run " + std::to_string(p.run + 1);
      c.css_class = "run-" + std::to_string(p.run + 1);
    }
    c.points.emplace_back(p.iteration >= 0 ? static_cast<double>(p.iteration) : static_cast<double>(i), y);
  }
  std::vector<ChartSeries> out;
  for (auto& [run, c] : runs) out.push_back(std::move(c));
  return out;
}

// Where each run after the first starts (its first iteration line): the restarts.
std::vector<ChartMarker> restarts(const ScanReport& r) {
  std::vector<ChartMarker> m;
  int last = -1;
  for (const SeriesPoint& p : r.series) {
    if (p.run != last && last >= 0 && p.iteration >= 0)
      m.push_back({static_cast<double>(p.iteration), "run " + std::to_string(p.run + 1)});
    last = p.run;
  }
  return m;
}

struct Metric {
  double SeriesPoint::*field;
  const char* id;
  const char* title;
  const char* unit;
};
const Metric kMetrics[] = {{&SeriesPoint::loss, "chart-loss", "Loss", "lm loss"},
                           {&SeriesPoint::elapsed_ms, "chart-time", "Iteration time", "ms"},
                           {&SeriesPoint::tflops, "chart-tflops", "Throughput", "TFLOP/s per GPU"}};

std::string charts(const std::vector<std::pair<const ScanReport*, std::string>>& reports) {
  std::string s = "<h2>Training progress</h2>\n";
  size_t points = 0;
  for (const auto& [r, prefix] : reports) points += r->series.size();
  if (points == 0) {
    uint64_t lines = 0;
    for (const auto& [r, prefix] : reports) lines += r->progress.iteration_lines;
    return s + (lines > 0 ? "<p class=\"muted\">The scan did not keep the iteration lines' values (ScanOptions::series, "
                            "hcp_logscan_options.series): no charts.</p>\n"
                          : "<p class=\"muted\">No Megatron or NeMo 2 iteration lines: nothing to chart.</p>\n");
  }
  for (const auto& [r, prefix] : reports)
    if (r->series_stride > 1)
      s += "<p class=\"muted\">" + html_escape(prefix) + "every " + std::to_string(r->series_stride) +
           "th iteration line is drawn (the log has more than " + std::to_string(ScanReport::kMaxSeries) +
           ").</p>\n";
  for (const Metric& m : kMetrics) {
    std::vector<ChartSeries> all;
    std::vector<ChartMarker> marks;
    std::optional<double> peak;
    for (const auto& [r, prefix] : reports) {
      for (ChartSeries& c : by_run(*r, m.field, prefix)) all.push_back(std::move(c));
      if (reports.size() == 1) marks = restarts(*r);
      if (r->gpu_peak_tflops) peak = r->gpu_peak_tflops;
    }
    if (all.empty()) continue;
    ChartOptions o;
    o.id = m.id, o.title = m.title, o.x_label = "iteration", o.y_label = m.unit;
    if (m.field == &SeriesPoint::tflops && peak) {
      o.reference = *peak;
      o.reference_label = "GPU dense bf16 peak " + num(*peak, "%.0f");
    }
    s += "<div class=\"chart\">" + svg_line_chart(all, marks, o) + "</div>\n";
  }
  return s;
}

std::string verdict_section(const ScanReport& r) {
  std::string s = std::string("<div class=\"verdict ") + verdict_class(r.verdict) + "\" id=\"verdict\"><b>" +
                  html_escape(verdict_name(r.verdict)) + "</b>";
  if (!r.reasons.empty()) {
    s += "<ul id=\"reasons\">";
    for (const auto& [why, where] : r.reasons)
      s += "<li>" + html_escape(why) + (where.file.empty() ? "" : " <code>" + html_escape(where.text()) + "</code>") +
           "</li>";
    s += "</ul>";
  }
  s += "</div>\n";
  if (!r.advice.empty()) s += "<p>" + html_escape(r.advice) + "</p>\n";
  if (r.gpu) s += "<p class=\"muted\">GPU: " + html_escape(*r.gpu) + (r.gpu_peak_tflops ? ", dense bf16 peak " + num(*r.gpu_peak_tflops, "%.0f") + " TFLOP/s" : "") + "</p>\n";
  return s;
}

// Transformer Engine's attention records and Megatron's dynamic CP, as rows of the evidence table.
std::string attention_rows(const Evidence& ev) {
  const AttentionEvidence& a = ev.attention;
  std::string s;
  std::string comm;
  for (const std::string& t : a.comm_types) comm += (comm.empty() ? ", cp_comm_type " : "/") + t;
  if (a.cp_on) {
    s += "<tr>" + td("attention with CP on" + comm) + td("transformer-engine") + td(std::to_string(a.cp_on_lines), true) +
         td("-") + td(a.cp_sizes.empty() ? "-" : list({a.cp_sizes.begin(), a.cp_sizes.end()})) + td(a.cp_on->text()) +
         "</tr>\n";
  }
  if (a.cp_off) {
    s += "<tr>" + td("attention with CP off") + td("transformer-engine") + td(std::to_string(a.cp_off_lines), true) +
         td("-") + td("-") + td(a.cp_off->text()) + "</tr>\n";
  }
  const DynamicCpEvidence& d = ev.dynamic_cp;
  if (d.first) {
    s += "<tr>" + td("dynamic CP: " + d.how) + td("megatron") + td("-") + td("-") +
         td(d.group_sizes.empty() ? "-" : list({d.group_sizes.begin(), d.group_sizes.end()})) + td(d.first->text()) +
         "</tr>\n";
  }
  return s;
}

std::string evidence_section(const Evidence& ev) {
  std::string s = "<h2>Evidence</h2>\n";
  const std::string attention = attention_rows(ev);
  if (ev.groups.empty() && ev.nccl_comm_sizes.empty() && attention.empty()) {
    return s + "<p class=\"muted\">No process-group lines.</p>\n";
  }
  s += "<table id=\"evidence\"><tr><th>group</th><th>source</th><th>lines</th><th>ranks</th><th>sizes</th>"
       "<th>first</th></tr>\n";
  for (const auto& [key, g] : ev.groups) {
    std::vector<int64_t> sz(g.sizes.begin(), g.sizes.end());
    s += "<tr>" + td(g.group) + td(g.source) + td(std::to_string(g.lines), true) +
         td(std::to_string(g.ranks.size()), true) + td(sz.empty() ? "-" : list(sz)) + td(g.first.text()) + "</tr>\n";
  }
  for (const auto& [size, lines] : ev.nccl_comm_sizes)
    s += "<tr>" + td("NCCL communicator") + td("nccl") + td(std::to_string(lines), true) + td("-") +
         td(std::to_string(size)) + td(ev.nccl_first ? ev.nccl_first->text() : "-") + "</tr>\n";
  return s + attention + "</table>\n";
}

std::string runs_section(const ScanReport& r) {
  std::string s = "<h2>Runs</h2>\n<table id=\"runs\"><tr><th>run</th><th>starts at</th><th>verdict</th><th>world</th>"
                  "<th>tp</th><th>pp</th><th>cp</th><th>cp_comm_type</th><th>hierarchical sizes</th>"
                  "<th>iteration lines</th><th>last iteration</th><th>last loss</th><th>ms / iteration</th>"
                  "<th>TFLOP/s/GPU</th><th>failures</th></tr>\n";
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const RunReport& run = r.runs[i];
    std::string last = opt(run.last_iteration);
    if (run.total_iterations) last += " / " + std::to_string(*run.total_iterations);
    s += "<tr class=\"run\">" + td(std::to_string(i + 1), true) +
         td(run.start.file.empty() ? "the start" : run.start.text()) + td(std::string(verdict_name(run.verdict))) +
         td(opt(run.intent.world_size.value)) + td(opt(run.intent.tp.value)) + td(opt(run.intent.pp.value)) +
         td(opt(run.intent.cp.value)) + td(comm_types(run.intent)) + td(sizes(run.intent)) +
         td(std::to_string(run.iteration_lines), true) + td(last, true) + td(opt(run.last_lm_loss, "%.4g"), true) +
         td(opt(run.iteration_ms), true) + td(opt(run.tflops), true) + td(std::to_string(run.failure_count), true) +
         "</tr>\n";
  }
  return s + "</table>\n";
}

std::string failures_section(const ScanReport& r) {
  std::string s = "<h2>Failures</h2>\n";
  if (r.failures.empty()) return s + "<p class=\"muted\">None.</p>\n";
  std::map<std::string, uint64_t> lines_of;
  for (const FileReport& f : r.files) lines_of[f.path] = f.lines;
  std::vector<TimelineEvent> events;
  for (const Failure& f : r.failures) {
    const uint64_t total = lines_of.count(f.where.file) ? lines_of[f.where.file] : 0;
    const size_t slash = f.where.file.find_last_of('/');
    const std::string file = slash == std::string::npos ? f.where.file : f.where.file.substr(slash + 1);
    events.push_back({f.where.rank >= 0 ? "rank " + std::to_string(f.where.rank) : file,
                      total ? static_cast<double>(f.where.line) / static_cast<double>(total) : 1.0,
                      f.kind + ": " + f.message});
  }
  s += svg_timeline(events, "failure-timeline");
  if (r.failure_count > r.failures.size())
    s += "<p class=\"muted\">" + std::to_string(r.failure_count) + " failures; the first " +
         std::to_string(r.failures.size()) + " are shown.</p>\n";
  s += "<table id=\"failures\"><tr><th>kind</th><th>run</th><th>rank</th><th>where</th><th>message</th><th>caught by"
       "</th></tr>\n";
  for (const Failure& f : r.failures)
    s += "<tr class=\"failure\">" + td(f.kind) + td(std::to_string(f.run + 1), true) +
         td(f.where.rank >= 0 ? std::to_string(f.where.rank) : "-") + td(f.where.text()) + td(f.message) +
         td(f.lint_code.empty() ? "-" : "hcp-lint " + f.lint_code) + "</tr>\n";
  return s + "</table>\n";
}

std::string notices_section(const ScanReport& r) {
  if (r.warnings.empty()) return {};
  std::string s = "<h2>Warnings</h2>\n<ul id=\"warnings\">";
  for (const Notice& n : r.warnings)
    s += "<li><b>" + html_escape(n.kind) + "</b>: " + html_escape(n.message) + " <code>" +
         html_escape(n.where.text()) + "</code></li>";
  return s + "</ul>\n";
}

std::string files_section(const ScanReport& r) {
  std::string s = "<h2>Inputs</h2>\n<table id=\"inputs\"><tr><th>file</th><th>compression</th><th>rank</th>"
                  "<th>lines</th><th>problem</th></tr>\n";
  for (const FileReport& f : r.files)
    s += "<tr>" + td(f.path) + td(f.compression) + td(f.rank_from_name >= 0 ? std::to_string(f.rank_from_name) : "-") +
         td(std::to_string(f.lines), true) + td(f.error ? *f.error : f.damage ? *f.damage : "-") + "</tr>\n";
  return s + "</table>\n";
}

}  // namespace

std::string render_html(const ScanReport& r) {
  std::string s = html_begin("hcp-logscan: " + std::string(verdict_name(r.verdict)));
  s += verdict_section(r) + runs_section(r) + charts({{&r, ""}}) + failures_section(r) + evidence_section(r.evidence) +
       notices_section(r) + files_section(r);
  return s + html_end();
}

std::string render_diff_html(const DiffReport& d, const ScanReport& base, const ScanReport& next) {
  std::string s = html_begin("hcp-logscan diff: " + d.base_verdict + " -> " + d.next_verdict);
  const bool bad = d.regression() || !d.comparable();
  s += std::string("<div class=\"verdict ") + (bad ? "bad" : "good") + "\" id=\"verdict\">Runs: " +
       html_escape(d.comparability) + (d.regression() ? "; regression" : "; no regression") + " (threshold " +
       num(100 * d.threshold, "%.0f") + "%)</div>\n";
  s += "<h2>Metrics</h2>\n<table id=\"metrics\"><tr><th>metric</th><th>base</th><th>new</th><th>change</th>"
       "<th></th></tr>\n";
  for (const MetricChange& m : d.metrics)
    s += "<tr>" + td(m.name) + td(opt(m.base, "%.4g"), true) + td(opt(m.next, "%.4g"), true) +
         td(m.change ? num(100 * *m.change, "%+.1f") + "%" : "-", true) + td(m.regression ? "regression" : "") +
         "</tr>\n";
  s += "</table>\n";
  if (!d.differences.empty()) {
    s += "<h2>Configuration differences</h2>\n<table id=\"differences\"><tr><th>key</th><th>base</th><th>new</th>"
         "</tr>\n";
    for (const ConfigDifference& c : d.differences) s += "<tr>" + td(c.key) + td(c.base) + td(c.next) + "</tr>\n";
    s += "</table>\n";
  }
  s += charts({{&base, "base "}, {&next, "new "}});
  return s + html_end();
}

}  // namespace hcp::logscan

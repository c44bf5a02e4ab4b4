// The plan as one self-contained HTML page: the inputs and assumptions, the verdict, the winner's layout as a
// picture (topology_svg.hpp), the ranked table with each candidate's reason, and the rejected layouts by rule.
#include <cstdio>
#include <map>

#include "explain.hpp"
#include "hcp/html_page.hpp"
#include "hcp/plan/plan.hpp"
#include "hcp/topology_svg.hpp"

namespace hcp::plan {
namespace {

std::string f1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string cell(const std::string& text, bool num = false) {
  return (num ? "<td class=\"num\">" : "<td>") + html_escape(text) + "</td>";
}

std::string winner_picture(const PlanInput& in, const Layout& l) {
  ParallelConfig c;
  c.world_size = in.cluster.nodes * in.cluster.gpus_per_node;
  c.tp = l.tp, c.pp = l.pp, c.cp = l.cp, c.order = parse_order(in.fixed.order);
  c.gpus_per_node = in.cluster.gpus_per_node;
  if (l.comm == CpComm::a2a_p2p) c.hcp_sizes = std::vector<int64_t>{l.a2a, l.ring};
  SvgOptions o;
  o.standalone = false;
  o.max_nodes = 8;
  return render_layout_svg(Topology(c), o);
}

}  // namespace

std::string render_html(const PlanResult& r, size_t top) {
  const PlanInput& in = r.input;
  const ModelSpec& m = in.model;
  const GpuSpec& g = in.cluster.gpu;
  std::string s = html_begin("hcp plan: " + (m.name.empty() ? std::string("model") : m.name) + " at " +
                             std::to_string(m.seq) + " tokens on " + std::to_string(in.cluster.nodes) + " x " +
                             std::to_string(in.cluster.gpus_per_node) + " " + g.name);
  s += "<p class=\"muted\">" +
       html_escape(std::to_string(m.layers) + " layers, hidden " + std::to_string(m.hidden) + ", " +
                   std::to_string(m.heads) + " heads, " + std::to_string(m.kv_heads) + " KV heads; " + g.name + ": " +
                   f1(g.peak_tflops) + " TFLOP/s bf16, " + f1(g.memory_gib) + " GiB, NVLink " + f1(g.nvlink_gbs) +
                   " GB/s, network " + f1(g.network_gbs) + " GB/s a GPU. Assumed: GEMMs at " +
                   f1(100 * in.efficiency.gemm) + "% and attention at " + f1(100 * in.efficiency.attention) +
                   "% of peak; " + (in.fixed.full_recompute ? "full" : "selective") + " recompute; global batch " +
                   std::to_string(global_batch(m)) + " sequences. The cost model: docs/plan.md.") +
       "</p>\n";
  const bool good = !r.ranked.empty() && r.ranked.front().estimate.fits;
  s += std::string("<p class=\"verdict ") + (good ? "good" : "bad") + "\" id=\"verdict\">" + html_escape(r.verdict) +
       "</p>\n";
  if (!r.ranked.empty()) {
    const Candidate& best = r.ranked.front();
    s += "<h2>Layout of " + html_escape(best.layout.describe()) + "</h2>\n<div id=\"layout\">" +
         winner_picture(in, best.layout) + "</div>\n";
  }
  s += "<h2>Ranked layouts</h2>\n<table id=\"ranked\">\n<tr><th>#</th><th>layout</th><th>a2a</th><th>ring</th>"
       "<th>layer</th><th>bubble</th><th>memory GiB</th><th>MFU</th><th>tokens/s a GPU</th><th>why</th></tr>\n";
  const size_t n = std::min(top, r.ranked.size());
  for (size_t i = 0; i < n; ++i) {
    const Candidate& c = r.ranked[i];
    const Estimate& e = c.estimate;
    const bool has_ring = c.layout.cp > 1 && c.layout.comm != CpComm::a2a;
    std::string why = c.why;
    for (const Finding& w : c.warnings) why += "; warning " + w.code + ": " + w.message;
    s += "<tr class=\"candidate\">" + cell(std::to_string(i + 1), true) + cell(c.layout.describe()) +
         cell(c.layout.a2a > 1 ? (e.a2a_in_node ? "NVLink" : "network") : "-") +
         cell(has_ring ? (e.ring_in_node ? "NVLink" : "network") : "-") + cell(ms(e.layer_s), true) +
         cell(pct(e.bubble), true) + cell(f1(e.memory_gib) + (e.fits ? "" : " (OOM)"), true) +
         cell(f1(100 * e.mfu) + "%", true) + cell(f1(e.tokens_per_s), true) + cell(why) + "</tr>\n";
  }
  s += "</table>\n";
  if (n < r.ranked.size())
    s += "<p class=\"muted\">" + std::to_string(r.ranked.size() - n) + " more layouts (--top).</p>\n";
  if (!r.rejected.empty()) {
    std::map<std::string, std::vector<const Rejected*>> by_rule;
    for (const Rejected& x : r.rejected) by_rule[x.errors.front().code].push_back(&x);
    s += "<h2>Rejected layouts</h2>\n<table id=\"rejected\">\n<tr><th>rule</th><th>layouts</th><th>example</th>"
         "<th>message</th></tr>\n";
    for (const auto& [code, list] : by_rule)
      s += "<tr>" + cell(code) + cell(std::to_string(list.size()), true) + cell(list.front()->layout.describe()) +
           cell(list.front()->errors.front().message) + "</tr>\n";
    s += "</table>\n";
  }
  return s + html_end();
}

}  // namespace hcp::plan

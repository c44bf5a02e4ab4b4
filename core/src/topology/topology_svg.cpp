#include "hcp/topology_svg.hpp"

#include "hcp/error.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

// GCC 12 warns wrongly about overlapping copies in `"literal" + std::string` chains (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace hcp {
namespace {

constexpr int kCellW = 70, kCellH = 46, kPad = 10, kTitle = 20, kGap = 18;
constexpr const char* kIntra = "#2b8a3e";  // stays in its node
constexpr const char* kInter = "#c92a2a";  // crosses to another node

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Geometry {
  int64_t gpn, cols, rows, node_w, node_h, nodes_per_row, nodes_shown;
  // The centre of a rank's cell, when its node is shown.
  bool centre(int64_t rank, double* x, double* y) const {
    const int64_t node = rank / gpn, slot = rank % gpn;
    if (node >= nodes_shown) return false;
    const int64_t nx = node % nodes_per_row, ny = node / nodes_per_row;
    *x = static_cast<double>(kGap + nx * (node_w + kGap) + kPad + (slot % cols) * kCellW) + kCellW / 2.0;
    *y = static_cast<double>(kGap + ny * (node_h + kGap) + kTitle + kPad + (slot / cols) * kCellH) + kCellH / 2.0;
    return true;
  }
};

// One CP group kind to draw: the a2a level, or a ring level.
struct DrawnKind {
  GroupKind kind;
  int level;
  bool ring;
  const char* label;
};

}  // namespace

std::string render_layout_svg(const Topology& t, const SvgOptions& o, SvgSummary* summary) {
  const ParallelConfig& c = t.config();
  // A picture is for reading: nodes of up to 1024 GPUs, and at most 4096 GPU cells (whole nodes) in all.
  constexpr int64_t kMaxNodeGpus = 1024, kMaxCells = 4096;
  if (c.gpus_per_node > kMaxNodeGpus)
    throw Error(Errc::invalid_argument, "the layout picture draws nodes of up to " + std::to_string(kMaxNodeGpus) +
                                            " GPUs, not " + std::to_string(c.gpus_per_node));
  Geometry g{};
  g.gpn = c.gpus_per_node;
  g.cols = std::min<int64_t>(g.gpn, 8);
  g.rows = (g.gpn + g.cols - 1) / g.cols;
  g.node_w = 2 * kPad + g.cols * kCellW;
  g.node_h = kTitle + 2 * kPad + g.rows * kCellH;
  const int64_t nodes = (c.world_size + g.gpn - 1) / g.gpn;
  g.nodes_shown = std::min({nodes, std::max<int64_t>(1, o.max_nodes), std::max<int64_t>(1, kMaxCells / g.gpn)});
  g.nodes_per_row = std::max<int64_t>(1, std::min<int64_t>(g.nodes_shown, 1400 / (g.node_w + kGap)));
  const int64_t node_rows = (g.nodes_shown + g.nodes_per_row - 1) / g.nodes_per_row;
  const int64_t width = kGap + g.nodes_per_row * (g.node_w + kGap);
  const int64_t legend_y = kGap + node_rows * (g.node_h + kGap);
  const int64_t height = legend_y + 70;

  std::vector<DrawnKind> kinds;
  if (t.num_levels() >= 2) {
    kinds.push_back({GroupKind::hcp, 0, false, "a2a (level 0)"});
    for (int l = 1; l < t.num_levels(); ++l) kinds.push_back({GroupKind::hcp, l, true, "ring (level 1+)"});
  } else if (c.cp > 1) {
    kinds.push_back({GroupKind::cp, 0, true, "cp ring"});
  }

  std::string s;
  if (o.standalone) s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"hcp-layout\" width=\"" + std::to_string(width) +
       "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
       std::to_string(height) + "\" font-family=\"sans-serif\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  // Nodes and their GPUs.
  for (int64_t n = 0; n < g.nodes_shown; ++n) {
    const int64_t nx = n % g.nodes_per_row, ny = n / g.nodes_per_row;
    const int64_t x0 = kGap + nx * (g.node_w + kGap), y0 = kGap + ny * (g.node_h + kGap);
    const int64_t first = n * g.gpn, last = std::min(c.world_size, first + g.gpn) - 1;
    s += "<g class=\"node\" data-node=\"" + std::to_string(n) + "\">\n";
    s += "<rect x=\"" + std::to_string(x0) + "\" y=\"" + std::to_string(y0) + "\" width=\"" +
         std::to_string(g.node_w) + "\" height=\"" + std::to_string(g.node_h) +
         "\" rx=\"8\" fill=\"#f1f3f5\" stroke=\"#495057\"/>\n";
    s += "<text x=\"" + std::to_string(x0 + kPad) + "\" y=\"" + std::to_string(y0 + 15) +
         "\" font-size=\"12\" font-weight=\"bold\">node " + std::to_string(n) + " (ranks " + std::to_string(first) +
         "-" + std::to_string(last) + ")</text>\n";
    for (int64_t r = first; r <= last; ++r) {
      const int64_t slot = r - first;
      const int64_t cx = x0 + kPad + (slot % g.cols) * kCellW, cy = y0 + kTitle + kPad + (slot / g.cols) * kCellH;
      const RankCoords rc = t.coords(r);
      s += "<g class=\"gpu\" data-rank=\"" + std::to_string(r) + "\"><rect x=\"" + std::to_string(cx + 2) +
           "\" y=\"" + std::to_string(cy + 2) + "\" width=\"" + std::to_string(kCellW - 4) + "\" height=\"" +
           std::to_string(kCellH - 4) + "\" rx=\"4\" fill=\"#ffffff\" stroke=\"#adb5bd\"/>";
      s += "<text x=\"" + std::to_string(cx + 6) + "\" y=\"" + std::to_string(cy + 15) +
           "\" font-size=\"11\" font-weight=\"bold\">" + std::to_string(r) + "</text>";
      s += "<text x=\"" + std::to_string(cx + 6) + "\" y=\"" + std::to_string(cy + 27) + "\" font-size=\"8\">tp" +
           std::to_string(rc.tp) + " cp" + std::to_string(rc.cp) + "</text>";
      s += "<text x=\"" + std::to_string(cx + 6) + "\" y=\"" + std::to_string(cy + 37) + "\" font-size=\"8\">dp" +
           std::to_string(rc.dp) + " pp" + std::to_string(rc.pp) + "</text></g>\n";
    }
    s += "</g>\n";
  }
  // The groups with a member among the nodes shown, each once; members beyond them are left out of its path,
  // which is then drawn open and dashed.
  SvgSummary sum;
  sum.nodes_shown = g.nodes_shown, sum.nodes_total = nodes;
  const int64_t shown_ranks = std::min(c.world_size, g.nodes_shown * g.gpn);
  for (size_t ki = 0; ki < kinds.size(); ++ki) {
    const DrawnKind& k = kinds[ki];
    // a2a hops bow up from the cells' top edge, ring hops down from their bottom edge; the bow grows with the
    // group's index so that groups over the same cells stay apart.
    const double edge = k.ring ? kCellH / 2.0 - 4.0 : -(kCellH / 2.0 - 4.0);
    std::map<int64_t, bool> drawn;
    for (int64_t r = 0; r < shown_ranks; ++r) {
      const Membership m = t.membership(r, k.kind, k.level);
      if (drawn.count(m.group_index)) continue;
      drawn[m.group_index] = true;
      const std::vector<int64_t> members = t.group_of(r, k.kind, k.level);
      const int64_t node0 = members.front() / g.gpn;
      const bool intra = std::all_of(members.begin(), members.end(), [&](int64_t x) { return x / g.gpn == node0; });
      const double bow = (k.ring ? 1.0 : -1.0) * (8.0 + 5.0 * static_cast<double>(m.group_index % 4));
      std::string d;
      size_t points = 0;
      double fx = 0, fy = 0, px = 0, py = 0;
      auto hop = [&](double x, double y) {
        d += " Q" + num((px + x) / 2.0) + " " + num((py + y) / 2.0 + bow) + " " + num(x) + " " + num(y);
      };
      for (int64_t x : members) {
        double cx, cy;
        if (!g.centre(x, &cx, &cy)) continue;
        cy += edge;
        if (points++ == 0) {
          d += "M" + num(cx) + " " + num(cy);
          fx = cx, fy = cy;
        } else {
          hop(cx, cy);
        }
        px = cx, py = cy;
      }
      const bool complete = points == members.size();
      if (k.ring && complete && points > 1) hop(fx, fy);  // back to the first member: the ring closes
      std::string members_attr;
      for (int64_t x : members) members_attr += (members_attr.empty() ? "" : ",") + std::to_string(x);
      s += std::string("<path class=\"") + (k.ring ? "ring" : "a2a") + " level-" + std::to_string(k.level) +
           (intra ? " intra-node" : " inter-node") + "\" data-members=\"" + members_attr + "\" d=\"" + d +
           "\" fill=\"none\" stroke=\"" + (intra ? kIntra : kInter) + "\" stroke-width=\"" +
           (k.ring ? "2" : "3.5") + "\" stroke-opacity=\"0.75\"" +
           (k.ring ? "" : " stroke-linecap=\"round\"") + (complete ? "" : " stroke-dasharray=\"6 4\"") + "/>\n";
      (k.ring ? sum.rings : sum.a2a_groups)++;
    }
  }
  // Legend and caption.
  const std::string ly = std::to_string(legend_y + 14);
  s += "<g class=\"legend\" font-size=\"12\">";
  s += "<line x1=\"" + std::to_string(kGap) + "\" y1=\"" + ly + "\" x2=\"" + std::to_string(kGap + 30) + "\" y2=\"" +
       ly + "\" stroke=\"" + kIntra + "\" stroke-width=\"3\"/><text x=\"" + std::to_string(kGap + 36) + "\" y=\"" +
       std::to_string(legend_y + 18) + "\">stays in its node</text>";
  s += "<line x1=\"" + std::to_string(kGap + 170) + "\" y1=\"" + ly + "\" x2=\"" + std::to_string(kGap + 200) +
       "\" y2=\"" + ly + "\" stroke=\"" + kInter + "\" stroke-width=\"3\"/><text x=\"" + std::to_string(kGap + 206) +
       "\" y=\"" + std::to_string(legend_y + 18) + "\">crosses nodes</text>";
  std::string what = "thick lines: a2a groups (level 0); thin closed paths: rings";
  if (kinds.empty()) what = "no CP groups (cp 1)";
  s += "<text x=\"" + std::to_string(kGap + 330) + "\" y=\"" + std::to_string(legend_y + 18) + "\">" + what +
       "</text>";
  std::string caption = "world " + std::to_string(c.world_size) + ", tp " + std::to_string(c.tp) + ", pp " +
                        std::to_string(c.pp) + ", cp " + std::to_string(c.cp) + ", dp " + std::to_string(t.dp());
  if (c.hcp_sizes) {
    caption += ", hierarchical sizes [";
    for (size_t i = 0; i < c.hcp_sizes->size(); ++i) caption += (i ? ", " : "") + std::to_string((*c.hcp_sizes)[i]);
    caption += "]";
  }
  caption += ", " + std::to_string(g.gpn) + " GPUs per node";
  if (g.nodes_shown < nodes)
    caption += "; showing " + std::to_string(g.nodes_shown) + " of " + std::to_string(nodes) +
               " nodes (the others repeat the pattern; dashed groups continue into them)";
  s += "<text class=\"caption\" x=\"" + std::to_string(kGap) + "\" y=\"" + std::to_string(legend_y + 44) + "\">" +
       caption + "</text></g>\n</svg>\n";
  if (summary) *summary = sum;
  return s;
}

}  // namespace hcp

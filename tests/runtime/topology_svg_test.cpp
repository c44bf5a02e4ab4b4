// The layout picture: one box per node shown, one path per group drawn, coloured by whether it leaves its node,
// and large layouts collapsed to the first nodes with the rest counted.
#include <gtest/gtest.h>

#include <string>

#include "hcp/error.hpp"
#include "hcp/topology_svg.hpp"

namespace hcp {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

Topology layout(int64_t world, int64_t tp, int64_t cp, std::optional<std::vector<int64_t>> sizes, int64_t gpn = 8) {
  ParallelConfig c;
  c.world_size = world, c.tp = tp, c.cp = cp, c.hcp_sizes = std::move(sizes), c.gpus_per_node = gpn;
  return Topology(c);
}

TEST(TopologySvg, DrawsEveryNodeGpuAndGroup) {
  SvgSummary sum;
  const std::string svg = render_layout_svg(layout(32, 2, 8, std::vector<int64_t>{4, 2}), {}, &sum);
  EXPECT_EQ(sum.nodes_shown, 4);
  EXPECT_EQ(sum.nodes_total, 4);
  EXPECT_EQ(sum.a2a_groups, 8);  // 32 ranks in groups of 4
  EXPECT_EQ(sum.rings, 16);      // and in rings of 2
  EXPECT_EQ(count(svg, "<g class=\"node\""), 4u);
  EXPECT_EQ(count(svg, "<g class=\"gpu\""), 32u);
  EXPECT_EQ(count(svg, "class=\"a2a level-0 intra-node\""), 8u);  // tp 2 * a2a 4 = 8: inside the node
  EXPECT_EQ(count(svg, "class=\"ring level-1 inter-node\""), 16u);  // the ring's peers are 8 ranks apart
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("http://www.w3.org/2000/svg"), svg.find("http"));  // no other link
}

TEST(TopologySvg, FlatCpIsDrawnAsRings) {
  SvgSummary sum;
  const std::string svg = render_layout_svg(layout(16, 1, 8, std::nullopt), {}, &sum);
  EXPECT_EQ(sum.a2a_groups, 0);
  EXPECT_EQ(sum.rings, 2);
  EXPECT_EQ(count(svg, "class=\"ring level-0 intra-node\""), 2u);
}

TEST(TopologySvg, CollapsesLargeLayoutsAndSaysSo) {
  SvgSummary sum;
  SvgOptions o;
  o.max_nodes = 4;
  const std::string svg = render_layout_svg(layout(1024, 8, 16, std::vector<int64_t>{2, 8}), o, &sum);
  EXPECT_EQ(sum.nodes_shown, 4);
  EXPECT_EQ(sum.nodes_total, 128);
  EXPECT_EQ(count(svg, "<g class=\"node\""), 4u);
  EXPECT_NE(svg.find("showing 4 of 128 nodes"), std::string::npos);
  EXPECT_GT(count(svg, "stroke-dasharray"), 0u);  // groups that continue into nodes not shown
}

TEST(TopologySvg, DrawsAtMost4096Gpus) {
  SvgSummary sum;
  SvgOptions o;
  o.max_nodes = 1000000;
  const std::string svg = render_layout_svg(layout(131072, 8, 16, std::vector<int64_t>{2, 8}, 512), o, &sum);
  EXPECT_EQ(sum.nodes_shown, 8);  // 8 nodes of 512 GPUs
  EXPECT_EQ(count(svg, "<g class=\"gpu\""), 4096u);
  EXPECT_THROW(render_layout_svg(layout(4096, 1, 1, std::nullopt, 2048)), Error);
}

}  // namespace
}  // namespace hcp

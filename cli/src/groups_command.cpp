#include "groups_command.hpp"

#include <iostream>
#include <memory>

#include "cli_options.hpp"
#include "exit_codes.hpp"
#include "groups_text.hpp"
#include "hcp/error.hpp"
#include "hcp/topology_json.hpp"
#include "hcp/topology_svg.hpp"
#include "int_list.hpp"

namespace hcp::cli {
namespace {

struct GroupsOptions {
  int64_t world_size = 0;
  int64_t tp = 1, pp = 1, cp = 1;
  std::optional<std::string> hcp_sizes;  // given but empty is an error, not "unset"
  std::string order = "tp-cp-ep-dp-pp";
  int64_t gpus_per_node = 8;
  std::optional<int64_t> rank;
  std::string format = "text";
  bool svg = false;
  int64_t max_nodes = 16;
};

int run_groups(const GroupsOptions& o) {
  ParallelConfig config;
  config.world_size = o.world_size;
  config.tp = o.tp;
  config.pp = o.pp;
  config.cp = o.cp;
  config.order = parse_order(o.order);
  if (o.hcp_sizes) config.hcp_sizes = parse_int_list(*o.hcp_sizes, "--hcp-sizes");
  config.gpus_per_node = o.gpus_per_node;
  const Topology topology(config);
  // Render completely before writing, so an error never leaves partial output behind.
  std::string out;
  if (o.svg || o.format == "svg") {
    if (o.rank) throw Error(Errc::invalid_argument, "--rank and the SVG picture do not go together: the picture shows every rank");
    if (o.max_nodes < 1) throw Error(Errc::invalid_argument, "--max-nodes must be positive");
    SvgOptions svg;
    svg.max_nodes = o.max_nodes;
    out = render_layout_svg(topology, svg);
  } else if (o.format == "json" && !o.rank) {
    // Streamed: the whole layout of a large world does not fit in memory as a JSON tree. Nothing after the
    // topology's construction can fail but the writes themselves.
    write_layout_json(topology, std::cout);
    std::cout << "\n" << std::flush;
    if (!std::cout) throw Error(Errc::io, "cannot write the layout to standard output");
    return kExitOk;
  } else if (o.format == "json") {
    out = rank_json(topology, *o.rank).dump() + "\n";
  } else {
    out = o.rank ? render_rank_text(topology, *o.rank) : render_layout_text(topology);
  }
  std::cout << out << std::flush;
  return kExitOk;
}

}  // namespace

std::function<int()> add_groups_command(CLI::App& app) {
  auto opts = std::make_shared<GroupsOptions>();
  CLI::App* cmd = app.add_subcommand("groups", "Print the Megatron rank layout with hierarchical CP groups");
  add_int_option(cmd, "--world-size", opts->world_size, "Total number of ranks")->required();
  add_int_option(cmd, "--tp", opts->tp, "Tensor-model-parallel size (default 1)");
  add_int_option(cmd, "--pp", opts->pp, "Pipeline-model-parallel size (default 1)");
  add_int_option(cmd, "--cp", opts->cp, "Context-parallel size (default 1)");
  cmd->add_option("--hcp-sizes", opts->hcp_sizes, "Hierarchical context-parallel sizes, e.g. 2,4 (level 0 first)");
  cmd->add_option("--order", opts->order, "Rank order")
      ->check(CLI::IsMember({"tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp"}))
      ->capture_default_str();
  add_int_option(cmd, "--gpus-per-node", opts->gpus_per_node, "Ranks per NVLink domain (default 8)");
  add_int_option(cmd, "--rank", opts->rank, "Show only this rank's coordinates and groups");
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "svg"}))
      ->capture_default_str();
  cmd->add_flag("--svg", opts->svg, "Draw the layout as a self-contained SVG picture (same as --format svg)");
  add_int_option(cmd, "--max-nodes", opts->max_nodes, "Nodes drawn in the picture (default 16; the rest are counted)");
  return [opts] { return run_groups(*opts); };
}

}  // namespace hcp::cli

// C ABI over hcp::plan (`hcp plan`).
#include <string>

#include "guard.hpp"
#include "hcp/plan/plan.hpp"
#include "strings.hpp"
#include "struct_versions.hpp"

namespace hcp::capi {
namespace {

[[noreturn]] void bad(const char* fn, const std::string& why) {
  throw Error(Errc::invalid_argument, std::string(fn) + ": " + why);
}

// The options as the CLI builds them: a preset first, then every non-zero field over it.
plan::PlanInput to_input(const hcp_plan_options* in, const char* fn) {
  require(in, fn, "options");
  const hcp_plan_options c = read_versioned(in, hcp_plan_options HCP_PLAN_OPTIONS_INIT, fn, "options");
  plan::PlanInput p;
  if (c.model) {
    const auto m = plan::model_preset(c.model);
    if (!m) bad(fn, "unknown model preset '" + std::string(c.model) + "'");
    p.model = *m;
  }
  plan::ModelSpec& m = p.model;
  for (auto [field, value] : {std::pair{&m.layers, c.layers}, {&m.hidden, c.hidden}, {&m.ffn_hidden, c.ffn_hidden},
                              {&m.heads, c.heads}, {&m.kv_heads, c.kv_heads}, {&m.head_dim, c.head_dim},
                              {&m.vocab, c.vocab}, {&m.seq, c.seq}, {&m.micro_batch, c.micro_batch},
                              {&m.global_batch, c.global_batch}})
    if (value != 0) *field = value;
  if (m.head_dim == 0 && m.heads > 0 && m.hidden % m.heads == 0) m.head_dim = m.hidden / m.heads;
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  m.window = c.window;
  if (c.packed != 0 && c.packed != 1) bad(fn, "options.packed must be 0 or 1");
  m.packed = c.packed == 1;
  if (c.dtype_bytes != 0 && c.dtype_bytes != 2 && c.dtype_bytes != 4) bad(fn, "options.dtype_bytes must be 0, 2 or 4");
  if (c.dtype_bytes) m.dtype_bytes = c.dtype_bytes;
  if (m.seq == 0) bad(fn, "options.seq is required");
  if (c.nodes == 0) bad(fn, "options.nodes is required");
  p.cluster.nodes = c.nodes;
  p.cluster.gpus_per_node = c.gpus_per_node ? c.gpus_per_node : 8;
  if (c.gpu) {
    const auto g = plan::gpu_preset(c.gpu);
    if (!g) bad(fn, "unknown GPU preset '" + std::string(c.gpu) + "'");
    p.cluster.gpu = *g;
  } else {
    p.cluster.gpu.name = "custom", p.cluster.gpu.source = "the caller";
  }
  plan::GpuSpec& g = p.cluster.gpu;
  for (auto [field, value] : {std::pair{&g.peak_tflops, c.peak_tflops}, {&g.memory_gib, c.memory_gib},
                              {&g.nvlink_gbs, c.nvlink_gbs}, {&g.network_gbs, c.network_gbs}})
    if (value != 0) *field = value;
  if (c.tp) p.fixed.tp = c.tp;
  if (c.pp) p.fixed.pp = c.pp;
  if (c.order) {
    const std::string order = c.order;
    if (order != "tp-cp-ep-dp-pp" && order != "tp-cp-ep-pp-dp")
      bad(fn, "options.order must be tp-cp-ep-dp-pp or tp-cp-ep-pp-dp, not '" + order + "'");
    p.fixed.order = order;
  }
  if (c.te_version) p.fixed.te_version = c.te_version;
  if (c.full_recompute != 0 && c.full_recompute != 1) bad(fn, "options.full_recompute must be 0 or 1");
  p.fixed.full_recompute = c.full_recompute == 1;
  if (c.gemm_efficiency != 0) p.efficiency.gemm = c.gemm_efficiency;
  if (c.attention_efficiency != 0) p.efficiency.attention = c.attention_efficiency;
  if (c.memory_fraction != 0) p.efficiency.memory = c.memory_fraction;
  return p;
}

}  // namespace
}  // namespace hcp::capi

using namespace hcp::capi;

extern "C" {

HCP_API hcp_status hcp_plan(char** out_text, const hcp_plan_options* options, const char* format, size_t top) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out_text, fn, "out_text");
    *out_text = nullptr;
    require(format, fn, "format");
    const std::string f = format;
    if (f != "text" && f != "json" && f != "html") bad(fn, "unknown format '" + f + "' (text, json, html)");
    const hcp::plan::PlanResult r = hcp::plan::plan(to_input(options, fn));
    const size_t rows = top ? top : 10;
    const std::string text = f == "json"   ? hcp::plan::render_json(r)
                             : f == "html" ? hcp::plan::render_html(r, rows)
                                           : hcp::plan::render_text(r, rows);
    *out_text = dup_for_caller(text);
  });
}

}  // extern "C"

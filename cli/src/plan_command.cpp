#include "plan_command.hpp"

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "cli_options.hpp"
#include "exit_codes.hpp"
#include "value_hints.hpp"
#include "hcp/error.hpp"
#include "hcp/plan/plan.hpp"

namespace hcp::cli {
namespace {

// Everything optional so that a preset's value is replaced only by what was given.
struct PlanOptions {
  std::string model, gpu;
  std::optional<int64_t> layers, hidden, ffn_hidden, heads, kv_heads, head_dim, vocab, seq, micro_batch, window,
      global_batch;
  std::optional<int64_t> nodes, gpus_per_node, tp, pp;
  std::optional<double> peak_tflops, memory_gib, nvlink_gbs, network_gbs, gemm_eff, attn_eff, memory_fraction;
  std::optional<std::string> te_version;
  std::string recompute = "selective";
  std::string dtype = "bf16", order = "tp-cp-ep-dp-pp", format = "text";
  bool packed = false, html = false;
  int64_t top = 10;
};

[[noreturn]] void usage(const std::string& why) { throw Error(Errc::invalid_argument, why); }

plan::PlanInput build_input(const PlanOptions& o) {
  plan::PlanInput in;
  if (!o.model.empty()) {
    const auto preset = plan::model_preset(o.model);
    if (!preset) {
      std::string names;
      for (const std::string& n : plan::model_preset_names()) names += (names.empty() ? "" : ", ") + n;
      usage("unknown --model '" + o.model + "': expected one of " + names + ", or give the shape with --layers ...");
    }
    in.model = *preset;
  }
  plan::ModelSpec& m = in.model;
  for (auto [field, value] : {std::pair{&m.layers, o.layers}, {&m.hidden, o.hidden}, {&m.ffn_hidden, o.ffn_hidden},
                              {&m.heads, o.heads}, {&m.kv_heads, o.kv_heads}, {&m.head_dim, o.head_dim},
                              {&m.vocab, o.vocab}, {&m.seq, o.seq}, {&m.micro_batch, o.micro_batch},
                              {&m.window, o.window}, {&m.global_batch, o.global_batch}})
    if (value) *field = *value;
  // What is missing, named by its option (the plan's own check would only say which values are not positive).
  std::string missing;
  for (auto [name, value] : {std::pair{"--layers", m.layers}, {"--hidden", m.hidden}, {"--ffn-hidden", m.ffn_hidden},
                             {"--heads", m.heads}})
    if (value == 0) missing += std::string(missing.empty() ? "" : ", ") + name;
  if (!missing.empty()) {
    std::string names;
    for (const std::string& n : plan::model_preset_names()) names += (names.empty() ? "" : ", ") + n;
    usage("the model is not given: --model NAME (" + names + "), or its shape; missing " + missing);
  }
  if (!o.head_dim && m.head_dim == 0 && m.heads > 0) {
    if (m.hidden % m.heads)
      usage("--hidden " + std::to_string(m.hidden) + " is not a multiple of --heads " + std::to_string(m.heads) +
            ": give --head-dim");
    m.head_dim = m.hidden / m.heads;
  }
  if (!o.kv_heads && m.kv_heads == 0) m.kv_heads = m.heads;
  m.packed = o.packed;
  m.dtype_bytes = o.dtype == "fp32" ? 4 : 2;
  if (m.seq == 0) usage("--seq is required");
  if (!o.nodes) usage("--nodes is required");
  in.cluster.nodes = *o.nodes;
  in.cluster.gpus_per_node = o.gpus_per_node.value_or(8);
  if (!o.gpu.empty()) {
    const auto g = plan::gpu_preset(o.gpu);
    if (!g) {
      std::string names;
      for (const std::string& n : plan::gpu_preset_names()) names += (names.empty() ? "" : ", ") + n;
      usage("unknown --gpu '" + o.gpu + "': expected one of " + names +
            ", or give --peak-tflops, --memory-gib, --nvlink-gbs and --network-gbs");
    }
    in.cluster.gpu = *g;
  } else {
    in.cluster.gpu.name = "custom";
    in.cluster.gpu.source = "command line";
  }
  plan::GpuSpec& g = in.cluster.gpu;
  missing.clear();
  for (auto [field, value, name] :
       {std::tuple{&g.peak_tflops, o.peak_tflops, "--peak-tflops"}, {&g.memory_gib, o.memory_gib, "--memory-gib"},
        {&g.nvlink_gbs, o.nvlink_gbs, "--nvlink-gbs"}, {&g.network_gbs, o.network_gbs, "--network-gbs"}}) {
    if (value) *field = *value;
    if (o.gpu.empty() && !value) missing += std::string(missing.empty() ? "" : ", ") + name;
  }
  if (!missing.empty()) {
    std::string names;
    for (const std::string& n : plan::gpu_preset_names()) names += (names.empty() ? "" : ", ") + n;
    usage("the GPU is not given: --gpu NAME (" + names + "), or all of its figures; missing " + missing);
  }
  in.fixed.tp = o.tp;
  in.fixed.pp = o.pp;
  in.fixed.full_recompute = o.recompute == "full";
  in.fixed.order = o.order;
  in.fixed.te_version = o.te_version;
  if (o.gemm_eff) in.efficiency.gemm = *o.gemm_eff;
  if (o.attn_eff) in.efficiency.attention = *o.attn_eff;
  if (o.memory_fraction) in.efficiency.memory = *o.memory_fraction;
  return in;
}

int run_plan(const PlanOptions& o) {
  if (o.top < 1) usage("--top must be positive");
  const plan::PlanResult r = plan::plan(build_input(o));
  // Rendered completely before writing, so an error never leaves partial output behind.
  const auto top = static_cast<size_t>(o.top);
  const std::string out = o.html || o.format == "html" ? plan::render_html(r, top)
                          : o.format == "json"         ? plan::render_json(r)
                                                       : plan::render_text(r, top);
  std::cout << out << std::flush;
  return kExitOk;
}

}  // namespace

std::function<int()> add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "Rank the context-parallel layouts of a model on a cluster");
  hint_values(cmd->add_option("--model", o->model, "A built-in model shape (llama3-8b, llama3-70b, llama3-405b, qwen2.5-72b)"),
              {plan::model_preset_names()})
      ->type_name("MODEL");
  add_int_option(cmd, "--layers", o->layers, "Transformer layers");
  add_int_option(cmd, "--hidden", o->hidden, "Hidden size");
  add_int_option(cmd, "--ffn-hidden", o->ffn_hidden, "MLP hidden size (gated MLP: three matrices)");
  add_int_option(cmd, "--heads", o->heads, "Attention heads");
  add_int_option(cmd, "--kv-heads", o->kv_heads, "Key/value heads (query groups; default: heads)");
  add_int_option(cmd, "--head-dim", o->head_dim, "Head dimension (default: hidden / heads)");
  add_int_option(cmd, "--vocab", o->vocab, "Vocabulary size (model memory only)");
  add_int_option(cmd, "--seq", o->seq, "Sequence length in tokens");
  add_int_option(cmd, "--micro-batch", o->micro_batch, "Micro-batch size (default 1)");
  add_int_option(cmd, "--global-batch", o->global_batch, "Sequences per optimizer step (default: 16M tokens' worth)");
  add_int_option(cmd, "--window", o->window, "Sliding window (left) in tokens");
  cmd->add_flag("--packed", o->packed, "Packed sequences (thd)");
  cmd->add_option("--dtype", o->dtype, "Activation dtype")->check(CLI::IsMember({"bf16", "fp16", "fp32"}))->capture_default_str();
  add_int_option(cmd, "--nodes", o->nodes, "Nodes (NVLink domains)");
  add_int_option(cmd, "--gpus-per-node", o->gpus_per_node, "GPUs per node / NVLink domain (default 8)");
  hint_values(cmd->add_option("--gpu", o->gpu, "GPU model: a100, h100, h200, b200, gb200"), {plan::gpu_preset_names()})
      ->type_name("GPU");
  cmd->add_option("--peak-tflops", o->peak_tflops, "Dense bf16 TFLOP/s a GPU (overrides --gpu)");
  cmd->add_option("--memory-gib", o->memory_gib, "GPU memory in GiB (overrides --gpu)");
  cmd->add_option("--nvlink-gbs", o->nvlink_gbs, "NVLink GB/s a GPU and direction (overrides --gpu)");
  cmd->add_option("--network-gbs", o->network_gbs, "Network GB/s a GPU and direction (overrides --gpu)");
  add_int_option(cmd, "--tp", o->tp, "Fix tensor parallelism (default: every divisor of the node)");
  add_int_option(cmd, "--pp", o->pp, "Fix pipeline parallelism (default: every divisor of the layers up to 16)");
  cmd->add_option("--recompute", o->recompute, "Activation recompute")
      ->check(CLI::IsMember({"selective", "full"}))
      ->capture_default_str();
  cmd->add_option("--order", o->order, "Rank order")
      ->check(CLI::IsMember({"tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp"}))
      ->capture_default_str();
  cmd->add_option("--te-version", o->te_version, "Transformer Engine version (its limits reject layouts)");
  cmd->add_option("--gemm-efficiency", o->gemm_eff, "Fraction of peak the GEMMs reach (default 0.7)");
  cmd->add_option("--attention-efficiency", o->attn_eff, "Fraction of peak attention reaches (default 0.5)");
  cmd->add_option("--memory-fraction", o->memory_fraction, "Fraction of GPU memory a run may fill (default 0.9)");
  add_int_option(cmd, "--top", o->top, "Candidates shown in text (default 10)");
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  cmd->add_flag("--html", o->html, "A self-contained HTML page with the winner's layout drawn (same as --format html)");
  return [o] { return run_plan(*o); };
}

}  // namespace hcp::cli

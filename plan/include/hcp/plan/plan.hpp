// hcp plan: which context-parallel layout for a model on a cluster. Every layout Megatron and Transformer Engine
// could be given is enumerated; the lint rules run on each (a layout with an error is rejected, naming the rule);
// the groups are placed with the exact Megatron layout (Topology), so each level is known to stay inside a node
// or to cross the network; and a stated cost model (docs/plan.md) estimates per layer the attention FLOPs, the
// bytes of every exchange (cp_cost.hpp, the runtime's own volumes), each ring step as max(compute, transfer),
// each all-to-all as not overlapped, the memory per GPU, and the resulting time and MFU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hcp/cp_scheme.hpp"

namespace hcp::plan {

struct ModelSpec {
  std::string name;  // a preset's name, or empty
  int64_t layers = 0, hidden = 0, ffn_hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, vocab = 0;
  int64_t seq = 0, micro_batch = 1;
  int64_t global_batch = 0;  // sequences per optimizer step; 0: 16M tokens' worth (Llama 3's batch), at least 1
  int64_t dtype_bytes = 2;  // bf16
  bool packed = false;        // packed sequences (thd)
  int64_t window = -1;        // sliding window (left), -1: none
};

struct GpuSpec {
  std::string name;
  double peak_tflops = 0;  // dense bf16
  double memory_gib = 0;
  double nvlink_gbs = 0;   // GB/s per GPU and direction inside the NVLink domain
  double network_gbs = 0;  // GB/s per GPU and direction between NVLink domains
  std::string source;      // where the figures come from
};

struct ClusterSpec {
  int64_t nodes = 0, gpus_per_node = 0;  // a node: one NVLink domain
  GpuSpec gpu;
};

// What the user fixes; unset values are enumerated (tp over the divisors of gpus_per_node that divide the heads
// and KV heads, pp over the divisors of the layers up to 16).
struct FixedSpec {
  std::optional<int64_t> tp, pp;
  bool full_recompute = false;  // --recompute-granularity full: each layer's input kept, the layer run again
  std::string order = "tp-cp-ep-dp-pp";
  std::optional<std::string> te_version;
};

// The fractions of peak the kernels reach and of the memory a run may fill: assumptions, stated in the output.
struct Efficiency {
  double gemm = 0.7, attention = 0.5, memory = 0.9;
};

struct PlanInput {
  ModelSpec model;
  ClusterSpec cluster;
  FixedSpec fixed;
  Efficiency efficiency;
};

struct Layout {
  int64_t tp = 1, pp = 1, cp = 1, dp = 1;
  CpComm comm = CpComm::p2p;
  int64_t a2a = 1, ring = 1;  // a2a: the all-to-all size (a2a, a2a+p2p); ring: the ring size (p2p, a2a+p2p) or
                              // the gather group (all_gather)
  std::string describe() const;  // "tp 8, cp 16 a2a+p2p [2, 8]"
};

// One layer, one micro-batch, forward and backward, per GPU.
struct Estimate {
  double attention_flops = 0, gemm_flops = 0;  // useful work
  double attention_s = 0, gemm_s = 0;          // compute at the assumed efficiency
  double tp_bytes = 0, tp_s = 0;               // tensor-parallel all-gathers / reduce-scatters (sequence parallel)
  double a2a_bytes = 0, a2a_s = 0;             // not overlapped
  double ring_bytes = 0, ring_exposed_s = 0;   // ring transfers; the part no step's compute hides
  double ring_step_bytes = 0;                  // one step's K/V message
  double ring_step_compute_s = 0, ring_step_transfer_s = 0;  // forward step
  double ring_hidden = 1;                      // fraction of the ring's transfer time hidden behind compute
  double gather_bytes = 0, gather_s = 0;       // all_gather scheme, not overlapped
  bool a2a_in_node = true, ring_in_node = true;
  int64_t kv_replication = 1;
  double layer_s = 0;  // everything above
  // The step: each pipeline stage runs L/pp layers for m micro-batches plus pp-1 bubble slots (1F1B).
  int64_t microbatches = 0;
  double bubble = 0;  // (pp-1) / m
  double step_s = 0;
  double activation_gib = 0, model_state_gib = 0, cp_buffer_gib = 0, memory_gib = 0;
  bool fits = true;
  double mfu = 0;           // the step's useful FLOPs per GPU over (step_s * peak)
  double tokens_per_s = 0;  // per GPU
};

struct Finding {
  std::string code, message;
};

struct Candidate {
  Layout layout;
  Estimate estimate;
  std::vector<Finding> warnings;  // lint warnings that do not reject it
  std::string why;                // one line: what the time goes to
};

struct Rejected {
  Layout layout;
  std::vector<Finding> errors;
};

struct PlanResult {
  PlanInput input;
  std::vector<Candidate> ranked;  // those that fit first, then by time per token
  std::vector<Rejected> rejected;
  std::string verdict;            // why the first one wins
};

// Throws Error{invalid_argument} for inputs that describe no problem (zero sizes, heads % kv_heads, ...).
PlanResult plan(const PlanInput& input);

// Built-in GPU figures by name (a100, h100, h200, b200, gb200; case-insensitive); nullopt when unknown.
std::optional<GpuSpec> gpu_preset(const std::string& name);
std::vector<std::string> gpu_preset_names();
// Built-in model shapes by name (llama3-8b, llama3-70b, llama3-405b, ...); nullopt when unknown.
std::optional<ModelSpec> model_preset(const std::string& name);
std::vector<std::string> model_preset_names();

// Sequences per optimizer step: the model's, or 16M tokens' worth.
int64_t global_batch(const ModelSpec& m);
// One layout's estimate (the plan's cost model), for the tests and the C ABI.
Estimate estimate(const PlanInput& input, const Layout& layout);

std::string render_text(const PlanResult& r, size_t top);
std::string render_json(const PlanResult& r);
// One self-contained HTML page (no scripts or external resources), with the winner's layout drawn.
std::string render_html(const PlanResult& r, size_t top);

}  // namespace hcp::plan

// The built-in GPU and model figures. GPUs: vendor datasheet figures (dense bf16 without sparsity; NVLink per
// direction = half the datasheet's bidirectional total; network = the reference system's NICs per GPU). Models:
// the published config.json of each checkpoint. Every value can be overridden on the command line.
#include <algorithm>
#include <cctype>

#include "hcp/plan/plan.hpp"

namespace hcp::plan {
namespace {

constexpr double kGiBPerGB = 1e9 / 1073741824.0;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const GpuSpec kGpus[] = {
    {"a100", 312, 80 * kGiBPerGB, 300, 25,
     "NVIDIA A100 datasheet (SXM 80GB: 312 TFLOP/s bf16, NVLink 600 GB/s); DGX A100: 8x 200 Gb/s HDR"},
    {"h100", 989, 80 * kGiBPerGB, 450, 50,
     "NVIDIA H100 datasheet (SXM: 989 TFLOP/s bf16 dense, NVLink 900 GB/s); DGX H100: 8x 400 Gb/s ConnectX-7"},
    {"h200", 989, 141 * kGiBPerGB, 450, 50,
     "NVIDIA H200 datasheet (SXM: 989 TFLOP/s bf16 dense, 141 GB, NVLink 900 GB/s); 400 Gb/s per GPU"},
    {"b200", 2250, 180 * kGiBPerGB, 900, 50,
     "NVIDIA DGX B200 datasheet (2.25 PFLOP/s bf16 dense a GPU, 1440 GB over 8, NVLink 1.8 TB/s); 8x 400 Gb/s"},
    {"gb200", 2500, 186 * kGiBPerGB, 900, 50,
     "NVIDIA GB200 NVL72 datasheet (180 PFLOP/s bf16 dense and 13.4 TB HBM3e over 72 GPUs, NVLink 1.8 TB/s); "
     "400 Gb/s per GPU"},
};

ModelSpec llama(const char* name, int64_t layers, int64_t hidden, int64_t ffn, int64_t heads, int64_t kv,
                int64_t vocab) {
  ModelSpec m;
  m.name = name, m.layers = layers, m.hidden = hidden, m.ffn_hidden = ffn, m.heads = heads, m.kv_heads = kv;
  m.head_dim = hidden / heads, m.vocab = vocab;
  return m;
}

}  // namespace

std::optional<GpuSpec> gpu_preset(const std::string& name) {
  const std::string n = lower(name);
  for (const GpuSpec& g : kGpus)
    if (g.name == n) return g;
  return std::nullopt;
}

std::vector<std::string> gpu_preset_names() {
  std::vector<std::string> names;
  for (const GpuSpec& g : kGpus) names.push_back(g.name);
  return names;
}

std::optional<ModelSpec> model_preset(const std::string& name) {
  const std::string n = lower(name);
  // meta-llama/Meta-Llama-3-8B, -70B, Llama-3.1-405B and Qwen/Qwen2.5-72B config.json (SwiGLU, GQA with 8 KV heads).
  const ModelSpec presets[] = {
      llama("llama3-8b", 32, 4096, 14336, 32, 8, 128256),
      llama("llama3-70b", 80, 8192, 28672, 64, 8, 128256),
      llama("llama3-405b", 126, 16384, 53248, 128, 8, 128256),
      llama("qwen2.5-72b", 80, 8192, 29568, 64, 8, 152064),
  };
  for (const ModelSpec& m : presets)
    if (m.name == n) return m;
  return std::nullopt;
}

std::vector<std::string> model_preset_names() { return {"llama3-8b", "llama3-70b", "llama3-405b", "qwen2.5-72b"}; }

}  // namespace hcp::plan

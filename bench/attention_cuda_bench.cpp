// The CUDA flash kernels' speed on the current GPU: forward (out + lse) and backward (delta + dq, dk, dv) TFLOP/s
// for B 1, H 32, D 128 (or --head-dim), causal, bf16 at each --seq (default 8192 and 16384), timed with CUDA events
// over --repeat runs after one warm-up. FLOP as FlashAttention counts them: forward 4 B H S^2 D (halved when
// causal), backward 2.5 times that. In the same run, cuBLAS's bf16 GEMM rate on the same GPU (cublas_gemm.hpp) and the ratio of the
// forward to it. Prints one line per pass and, with --json, a JSON object for scripts/gpu-check.sh.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../runtime/src/attention/cpu/bf16.hpp"
#include "cublas_gemm.hpp"
#include "hcp/attention_cuda.hpp"

namespace {

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "attention_cuda_bench: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

struct Result {
  int64_t seq;
  double fwd_ms, bwd_ms, fwd_tflops, bwd_tflops;
};

bool run(int64_t seq, int64_t dim, int repeat, bool causal, Result* r) {
  const int64_t heads = 32;
  const size_t n = static_cast<size_t>(seq * heads * dim), rows = static_cast<size_t>(heads * seq);
  std::vector<uint16_t> host(n);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  void *q, *k, *v, *dout, *out, *lse, *delta, *dq, *dk, *dv;
  for (void** p : {&q, &k, &v, &dout}) {
    for (uint16_t& x : host) x = hcp::cpu::float_to_bf16(dist(gen));
    if (!ok(cudaMalloc(p, n * 2), "cudaMalloc") || !ok(cudaMemcpy(*p, host.data(), n * 2, cudaMemcpyHostToDevice), "copy"))
      return false;
  }
  for (void** p : {&out, &dq, &dk, &dv})
    if (!ok(cudaMalloc(p, n * 4), "cudaMalloc")) return false;
  for (void** p : {&lse, &delta})
    if (!ok(cudaMalloc(p, rows * 4), "cudaMalloc")) return false;
  const int64_t row = heads * dim;
  auto t = [&](void* data) { return hcp::AttnTensor{data, seq * row, row, dim}; };
  hcp::AttnParams p;
  p.dtype = hcp::DType::bf16;
  p.batch = 1, p.sq = p.sk = seq, p.heads = p.kv_heads = heads, p.head_dim = dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(dim)), p.causal = causal;
  p.q = t(q), p.k = t(k), p.v = t(v), p.dout = t(dout), p.out = t(out), p.dq = t(dq), p.dk = t(dk), p.dv = t(dv);
  p.lse = {static_cast<float*>(lse), heads * seq, seq};
  p.delta = {static_cast<float*>(delta), heads * seq, seq};

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  auto time_ms = [&](auto&& pass) -> double {
    if (!pass()) return -1;  // warm-up
    cudaEventRecord(start);
    for (int i = 0; i < repeat; ++i)
      if (!pass()) return -1;
    cudaEventRecord(stop);
    if (!ok(cudaEventSynchronize(stop), "kernel")) return -1;
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    return static_cast<double>(ms) / repeat;
  };
  auto report = [](const hcp::Status& s) {
    if (!s.ok()) std::fprintf(stderr, "attention_cuda_bench: %s\n", s.message().c_str());
    return s.ok();
  };
  r->seq = seq;
  r->fwd_ms = time_ms([&] { return report(hcp::attention_forward_cuda(p, nullptr)); });
  r->bwd_ms = time_ms([&] {
    return report(hcp::attention_delta_cuda(p, nullptr)) && report(hcp::attention_backward_cuda(p, nullptr));
  });
  for (void* ptr : {q, k, v, dout, out, lse, delta, dq, dk, dv}) cudaFree(ptr);
  if (r->fwd_ms < 0 || r->bwd_ms < 0) return false;
  const double s = static_cast<double>(seq);
  const double flop = 4.0 * static_cast<double>(heads * dim) * s * s * (causal ? 0.5 : 1.0);
  r->fwd_tflops = flop / (r->fwd_ms * 1e-3) / 1e12;
  r->bwd_tflops = 2.5 * flop / (r->bwd_ms * 1e-3) / 1e12;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> seqs;
  int repeat = 5;
  int gemm_n = 8192;
  int64_t dim = 128;
  bool json = false, causal = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seq" && i + 1 < argc) {
      seqs.push_back(std::atoll(argv[++i]));
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--json") {
      json = true;
    } else if (a == "--gemm" && i + 1 < argc) {
      gemm_n = std::atoi(argv[++i]);
    } else if (a == "--no-mask") {
      causal = false;
    } else if (a == "--head-dim" && i + 1 < argc && hcp::cuda_head_dim_supported(std::atoll(argv[i + 1]))) {
      dim = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: attention_cuda_bench [--seq S]... [--repeat N] [--no-mask] [--head-dim D] [--gemm N] "
                   "[--json]\n(D: %s; --gemm 0 skips the cuBLAS reference)\n",
                   hcp::kCudaHeadDims);
      return 2;
    }
  }
  if (seqs.empty()) seqs = {8192, 16384};
  const hcp::Status device = hcp::cuda_device_status();
  if (!device.ok()) {
    std::fprintf(stderr, "attention_cuda_bench: %s\n", device.message().c_str());
    return 2;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const double gemm_tflops = gemm_n > 0 ? cublas_bf16_gemm_tflops(gemm_n, repeat) : -1;
  if (gemm_n > 0 && gemm_tflops < 0) return 1;
  if (!json && gemm_tflops > 0)
    std::printf("%s cuBLAS bf16 GEMM %d^3: %.1f TFLOP/s (the reference below)\n", prop.name, gemm_n, gemm_tflops);
  auto vs_gemm = [&](double tflops) { return gemm_tflops > 0 ? tflops / gemm_tflops : 0.0; };
  std::vector<Result> results;
  for (int64_t seq : seqs) {
    Result r{};
    if (seq < 1 || !run(seq, dim, repeat, causal, &r)) return 1;
    results.push_back(r);
    if (!json)
      std::printf("%s B 1 S %lld H 32 D %lld %s bf16: forward %.3f ms %.1f TFLOP/s (%.2f x GEMM), backward %.3f ms "
                  "%.1f TFLOP/s\n",
                  prop.name, static_cast<long long>(seq), static_cast<long long>(dim), causal ? "causal" : "no mask",
                  r.fwd_ms, r.fwd_tflops, vs_gemm(r.fwd_tflops), r.bwd_ms, r.bwd_tflops);
  }
  if (json) {
    std::printf("{\"device\": \"%s\", \"head_dim\": %lld, \"causal\": %s, \"gemm_n\": %d, \"gemm_tflops\": %.2f, "
                "\"runs\": [",
                prop.name, static_cast<long long>(dim), causal ? "true" : "false", gemm_n,
                gemm_tflops > 0 ? gemm_tflops : 0.0);
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("%s{\"seq\": %lld, \"forward_ms\": %.4f, \"forward_tflops\": %.2f, \"forward_vs_gemm\": %.3f, "
                  "\"backward_ms\": %.4f, \"backward_tflops\": %.2f}",
                  i ? ", " : "", static_cast<long long>(results[i].seq), results[i].fwd_ms, results[i].fwd_tflops,
                  vs_gemm(results[i].fwd_tflops), results[i].bwd_ms, results[i].bwd_tflops);
    std::printf("]}\n");
  }
  return 0;
}

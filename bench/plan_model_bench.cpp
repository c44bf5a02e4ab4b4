// The plan's cost model against measured runs of the runtime on this machine (docs/plan.md, "Model against
// measurement"). The model's inputs are measured here, not assumed: the kernels' FLOP rate (one rank's forward and
// backward over the whole problem on one thread) and the copy rate (the in-process communicator moves every byte
// with one memcpy by the receiving thread). The prediction for a CP forward + backward, summed over the 8 ranks'
// CPU time, is then compute (the model's FLOPs over the measured rates) plus bytes (the model's volumes, cp_cost.hpp)
// over the copy rate; the ranks' measured CPU time is set beside it. On threads the copies take CPU time and hide
// nothing, so nothing is overlapped; what the model leaves out (a2a re-layout copies, ring merges, tile waste)
// shows as the ratio.
//   plan_model_bench [--seq N] [--heads N] [--head-dim N] [--repeat N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hcp/attention_cpu.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/cp_cost.hpp"
#include "hcp/inprocess_world.hpp"
#include "thread_clock.hpp"

namespace {

using hcp::bench::thread_seconds;
constexpr int kRanks = 8;

void require_ok(const hcp::Status& s) {
  if (s.ok()) return;
  std::fprintf(stderr, "plan_model_bench: %s\n", s.message().c_str());
  std::exit(1);
}

struct Rates {
  double forward_flops = 0, backward_flops = 0, copy_bytes = 0;  // per second, one thread
};

Rates measure_rates(const hcp::CpProblem& p, int repeat) {
  const int64_t row = p.heads * p.head_dim, n = p.seq * row;
  std::vector<float> q(static_cast<size_t>(n), 0.25f), k(q), v(q), out(q.size()), dq(q.size()), dk(q.size()),
      dv(q.size());
  std::vector<float> lse(static_cast<size_t>(p.seq * p.heads)), delta(lse.size());
  auto t = [&](std::vector<float>& x) { return hcp::AttnTensor{x.data(), n, row, p.head_dim}; };
  hcp::AttnParams a;
  a.batch = 1, a.sq = a.sk = p.seq, a.heads = a.kv_heads = p.heads, a.head_dim = p.head_dim;
  a.scale = 1.0f / std::sqrt(static_cast<float>(p.head_dim)), a.causal = true;
  a.q = t(q), a.k = t(k), a.v = t(v), a.out = t(out), a.lse = {lse.data(), p.seq * p.heads, p.seq};
  a.dout = t(v), a.dq = t(dq), a.dk = t(dk), a.dv = t(dv), a.delta = {delta.data(), p.seq * p.heads, p.seq};
  double fwd = 1e30, bwd = 1e30;
  for (int i = 0; i < repeat; ++i) {
    double s = thread_seconds();
    require_ok(hcp::attention_forward_cpu(a));
    fwd = std::min(fwd, thread_seconds() - s);
    hcp::attention_delta_cpu(a.dtype, 1, p.seq, p.heads, p.head_dim, a.dout, a.out, a.delta);
    s = thread_seconds();
    require_ok(hcp::attention_backward_cpu(a));
    bwd = std::min(bwd, thread_seconds() - s);
  }
  std::vector<char> src(size_t{64} << 20, 1), dst(src.size());
  double copy = 1e30;
  for (int i = 0; i < repeat; ++i) {
    const double s = thread_seconds();
    std::memcpy(dst.data(), src.data(), src.size());
    copy = std::min(copy, thread_seconds() - s);
  }
  return {hcp::attention_flops(p, false) / fwd, hcp::attention_flops(p, true) / bwd,
          static_cast<double>(src.size()) / copy};
}

// The 8 ranks' summed CPU seconds of one CP forward + backward (median of `repeat`, after a warm-up).
double measure_cp(const hcp::CpProblem& p, hcp::CpComm comm, int64_t a2a, int repeat) {
  hcp::ParallelConfig config;
  config.world_size = kRanks, config.cp = kRanks;
  if (comm == hcp::CpComm::a2a_p2p) config.hcp_sizes = std::vector<int64_t>{a2a, kRanks / a2a};
  std::vector<std::vector<double>> seconds(kRanks);
  hcp::InProcessWorld world(kRanks, std::chrono::minutes(10));
  require_ok(world.run([&](hcp::Communicator& c) -> hcp::Status {
    std::unique_ptr<hcp::CpContext> ctx;
    HCP_TRY(hcp::CpContext::create(c, config, comm, &ctx, hcp::LogLevel::debug));
    hcp::CpShape shape;
    shape.seq_local = p.seq / kRanks, shape.heads = p.heads, shape.kv_heads = p.kv_heads, shape.head_dim = p.head_dim;
    const size_t n = static_cast<size_t>(shape.seq_local * p.heads * p.head_dim);
    std::vector<float> q(n, 0.25f), k(n, 0.5f), v(n, 0.75f), out(n), dq(n), dk(n), dv(n);
    std::vector<float> lse(static_cast<size_t>(shape.seq_local * p.heads));
    for (int i = 0; i <= repeat; ++i) {
      HCP_TRY(c.barrier());
      const double s = thread_seconds();
      HCP_TRY(ctx->forward(shape, q.data(), k.data(), v.data(), out.data(), lse.data()));
      HCP_TRY(ctx->backward(shape, q.data(), k.data(), v.data(), out.data(), lse.data(), v.data(), dq.data(),
                            dk.data(), dv.data()));
      if (i > 0) seconds[static_cast<size_t>(c.rank())].push_back(thread_seconds() - s);
    }
    return {};
  }));
  std::vector<double> sums;
  for (int i = 0; i < repeat; ++i) {
    double sum = 0;
    for (const auto& r : seconds) sum += r[static_cast<size_t>(i)];
    sums.push_back(sum);
  }
  std::sort(sums.begin(), sums.end());
  return sums[sums.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  hcp::CpProblem p;
  p.seq = 4096, p.heads = 8, p.kv_heads = 8, p.head_dim = 128, p.dtype_bytes = 4;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "plan_model_bench: %s needs a value\n", a.c_str());
      return 2;
    }
    const long long v = std::atoll(argv[++i]);
    if (a == "--seq") p.seq = v;
    else if (a == "--heads") p.heads = p.kv_heads = v;
    else if (a == "--head-dim") p.head_dim = v;
    else if (a == "--repeat") repeat = static_cast<int>(v);
    else {
      std::fprintf(stderr, "plan_model_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const Rates r = measure_rates(p, repeat);
  std::printf("measured on one thread: forward %.1f GFLOP/s, backward %.1f GFLOP/s, memcpy %.1f GB/s\n",
              r.forward_flops / 1e9, r.backward_flops / 1e9, r.copy_bytes / 1e9);
  std::printf("causal fp32, S %lld, H %lld, D %lld, 8 in-process ranks, forward + backward, ranks' summed CPU time:\n",
              static_cast<long long>(p.seq), static_cast<long long>(p.heads), static_cast<long long>(p.head_dim));
  std::printf("%-22s %10s %10s %12s %12s %8s\n", "scheme", "compute s", "copies s", "predicted s", "measured s",
              "ratio");
  struct Scheme {
    const char* name;
    hcp::CpComm comm;
    int64_t a2a, ring;
  };
  const Scheme schemes[] = {{"p2p 8", hcp::CpComm::p2p, 1, 8},
                            {"a2a 8", hcp::CpComm::a2a, 8, 1},
                            {"a2a+p2p [2, 4]", hcp::CpComm::a2a_p2p, 2, 4},
                            {"a2a+p2p [4, 2]", hcp::CpComm::a2a_p2p, 4, 2},
                            {"all_gather 8", hcp::CpComm::all_gather, 1, 8}};
  for (const Scheme& s : schemes) {
    const hcp::CpTraffic f = hcp::cp_traffic(p, s.comm, s.a2a, s.ring, false);
    const hcp::CpTraffic b = hcp::cp_traffic(p, s.comm, s.a2a, s.ring, true);
    const double compute = hcp::attention_flops(p, false) / r.forward_flops +
                           hcp::attention_flops(p, true) / r.backward_flops;
    const double copies = kRanks * static_cast<double>(f.total() + b.total()) / r.copy_bytes;
    const double measured = measure_cp(p, s.comm, s.a2a, repeat);
    std::printf("%-22s %10.3f %10.3f %12.3f %12.3f %8.2f\n", s.name, compute, copies, compute + copies, measured,
                measured / (compute + copies));
  }
  return 0;
}

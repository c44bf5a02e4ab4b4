// The plan's cost model against measured runs of the runtime on this machine (docs/plan.md, "Model against
// measurement"), over in-process threads or MPI processes. The model's inputs are measured here, not assumed:
// the kernels' FLOP rate (one rank's forward and backward over the whole problem on one thread) and the
// backend's transfer rate (bytes a rank sends per CPU second in a ring exchange of 16 MiB messages: the
// in-process communicator copies each byte once on the receiving thread; Open MPI's shared-memory transport
// copies on both sides). The prediction for one CP forward + backward, summed over the 8 ranks' CPU time, is
// compute (the model's FLOPs over the measured rates) plus bytes (the model's volumes, cp_cost.hpp) over the
// transfer rate; the ranks' measured CPU time is set beside it. CPU time counts the copies and hides nothing, so
// nothing is overlapped; what the model leaves out (a2a re-layout copies, ring merges, tile waste) shows as the
// ratio. Every rank also counts the bytes it sends (CountingCommunicator) and the run fails (exit 1) when any
// rank's count differs from the model's: the ctests mpi.plan_model_bytes and plan_model_bytes run it so.
//   plan_model_bench [--seq N] [--heads N] [--head-dim N] [--repeat N]          (8 threads)
//   mpirun -np 8 plan_model_bench --mpi [...]                                  (8 processes)
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
#include "hcp/counting_communicator.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/cp_cost.hpp"
#include "hcp/inprocess_world.hpp"
#include "hcp/mpi_communicator.hpp"
#include "thread_clock.hpp"

namespace {

using hcp::bench::thread_seconds;
constexpr int kRanks = 8;

void require_ok(const hcp::Status& s) {
  if (s.ok()) return;
  std::fprintf(stderr, "plan_model_bench: %s\n", s.message().c_str());
  std::exit(1);
}

struct Scheme {
  const char* name;
  hcp::CpComm comm;
  int64_t a2a, ring;
};
const Scheme kSchemes[] = {{"p2p 8", hcp::CpComm::p2p, 1, 8},
                           {"a2a 8", hcp::CpComm::a2a, 8, 1},
                           {"a2a+p2p [2, 4]", hcp::CpComm::a2a_p2p, 2, 4},
                           {"a2a+p2p [4, 2]", hcp::CpComm::a2a_p2p, 4, 2},
                           {"all_gather 8", hcp::CpComm::all_gather, 1, 8}};
constexpr size_t kNumSchemes = sizeof kSchemes / sizeof kSchemes[0];

// FLOP/s of the single-rank kernels on one thread, forward and backward.
std::pair<double, double> kernel_rates(const hcp::CpProblem& p, int repeat) {
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
  return {hcp::attention_flops(p, false) / fwd, hcp::attention_flops(p, true) / bwd};
}

// What one rank measures: the ring exchange's bytes per CPU second, and its CPU seconds of each scheme's
// forward + backward in each round.
struct RankMeasure {
  double transfer_rate = 0;
  double seconds[kNumSchemes][16] = {};
  int64_t bytes[kNumSchemes] = {};  // sent in one forward + backward (data exchanges; control all-gathers apart)
};

int64_t data_bytes(const hcp::TrafficTally& t) { return t.send_recv + t.all_to_all + t.all_gather + t.reduce_scatter; }

hcp::Status measure_rank(hcp::Communicator& base, const hcp::CpProblem& p, int repeat, RankMeasure* m) {
  hcp::CountingCommunicator world(base, std::make_shared<hcp::TrafficTally>());
  const int r = world.rank(), w = world.size();
  std::vector<char> send(size_t{16} << 20, 1), recv(send.size());
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    HCP_TRY(world.barrier());
    const double s = thread_seconds();
    HCP_TRY(world.send_recv(send.data(), send.size(), (r + 1) % w, recv.data(), recv.size(), (r - 1 + w) % w));
    best = std::min(best, thread_seconds() - s);
  }
  m->transfer_rate = static_cast<double>(send.size()) / best;
  for (size_t si = 0; si < kNumSchemes; ++si) {
    const Scheme& sc = kSchemes[si];
    hcp::ParallelConfig config;
    config.world_size = kRanks, config.cp = kRanks;
    if (sc.comm == hcp::CpComm::a2a_p2p) config.hcp_sizes = std::vector<int64_t>{sc.a2a, sc.ring};
    std::unique_ptr<hcp::CpContext> ctx;
    HCP_TRY(hcp::CpContext::create(world, config, sc.comm, &ctx, hcp::LogLevel::debug));
    hcp::CpShape shape;
    shape.seq_local = p.seq / kRanks, shape.heads = p.heads, shape.kv_heads = p.kv_heads, shape.head_dim = p.head_dim;
    const size_t n = static_cast<size_t>(shape.seq_local * p.heads * p.head_dim);
    std::vector<float> q(n, 0.25f), k(n, 0.5f), v(n, 0.75f), out(n), dq(n), dk(n), dv(n);
    std::vector<float> lse(static_cast<size_t>(shape.seq_local * p.heads));
    for (int i = 0; i <= repeat; ++i) {  // round 0 warms up
      HCP_TRY(world.barrier());
      const int64_t sent = data_bytes(world.tally());
      const double s = thread_seconds();
      HCP_TRY(ctx->forward(shape, q.data(), k.data(), v.data(), out.data(), lse.data()));
      HCP_TRY(ctx->backward(shape, q.data(), k.data(), v.data(), out.data(), lse.data(), v.data(), dq.data(),
                            dk.data(), dv.data()));
      if (i > 0) m->seconds[si][i - 1] = thread_seconds() - s;
      if (i == 0) m->bytes[si] = data_bytes(world.tally()) - sent;
    }
  }
  return {};
}

// Returns whether every rank sent exactly the model's bytes in every scheme.
bool report(const hcp::CpProblem& p, int repeat, const char* backend, const std::vector<RankMeasure>& ranks) {
  const auto [fwd_rate, bwd_rate] = kernel_rates(p, repeat);
  double transfer = 0;
  for (const RankMeasure& m : ranks) transfer += m.transfer_rate / static_cast<double>(ranks.size());
  std::printf("measured: kernels on one thread forward %.1f GFLOP/s, backward %.1f GFLOP/s; %s ring exchange "
              "%.2f GB per CPU second\n",
              fwd_rate / 1e9, bwd_rate / 1e9, backend, transfer / 1e9);
  std::printf("causal fp32, S %lld, H %lld, D %lld, 8 %s, forward + backward, ranks' summed CPU time:\n",
              static_cast<long long>(p.seq), static_cast<long long>(p.heads), static_cast<long long>(p.head_dim),
              backend);
  std::printf("%-18s %10s %11s %12s %12s %8s %16s\n", "scheme", "compute s", "transfer s", "predicted s",
              "measured s", "ratio", "bytes a rank");
  bool all_match = true;
  for (size_t si = 0; si < kNumSchemes; ++si) {
    const Scheme& s = kSchemes[si];
    const hcp::CpTraffic f = hcp::cp_traffic(p, s.comm, s.a2a, s.ring, false);
    const hcp::CpTraffic b = hcp::cp_traffic(p, s.comm, s.a2a, s.ring, true);
    const double compute = hcp::attention_flops(p, false) / fwd_rate + hcp::attention_flops(p, true) / bwd_rate;
    const double bytes = kRanks * static_cast<double>(f.total() + b.total()) / transfer;
    std::vector<double> sums;
    for (int i = 0; i < repeat; ++i) {
      double sum = 0;
      for (const RankMeasure& m : ranks) sum += m.seconds[si][i];
      sums.push_back(sum);
    }
    std::sort(sums.begin(), sums.end());
    const double measured = sums[sums.size() / 2];
    const int64_t model = f.total() + b.total();
    bool match = true;
    for (const RankMeasure& m : ranks) match = match && m.bytes[si] == model;
    all_match = all_match && match;
    std::printf("%-18s %10.3f %11.3f %12.3f %12.3f %8.2f %16lld%s\n", s.name, compute, bytes, compute + bytes,
                measured, measured / (compute + bytes), static_cast<long long>(model),
                match ? " = counted" : " != counted");
    if (!match)
      for (size_t r = 0; r < ranks.size(); ++r)
        std::printf("  rank %zu sent %lld bytes\n", r, static_cast<long long>(ranks[r].bytes[si]));
  }
  return all_match;
}

}  // namespace

int main(int argc, char** argv) {
  hcp::CpProblem p;
  p.seq = 4096, p.heads = 8, p.kv_heads = 8, p.head_dim = 128, p.dtype_bytes = 4;
  int repeat = 3;
  bool mpi = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mpi") {
      mpi = true;
      continue;
    }
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
      std::fprintf(stderr, "usage: plan_model_bench [--mpi] [--seq N] [--heads N] [--head-dim N] [--repeat N]\n");
      return 2;
    }
  }
  if (repeat < 1 || repeat > 16) {
    std::fprintf(stderr, "plan_model_bench: --repeat must be 1 to 16\n");
    return 2;
  }
  int status = 0;
  if (mpi) {
    bool here = false;
    require_ok(hcp::mpi_init(&here));
    {
      std::unique_ptr<hcp::Communicator> world;
      require_ok(hcp::make_mpi_communicator(hcp::kMpiCommWorld, std::chrono::minutes(10), &world));
      if (world->size() != kRanks) {
        std::fprintf(stderr, "plan_model_bench: run with mpirun -np %d\n", kRanks);
        return 2;
      }
      RankMeasure mine;
      require_ok(measure_rank(*world, p, repeat, &mine));
      std::vector<RankMeasure> all(kRanks);
      require_ok(world->all_gather(&mine, all.data(), sizeof mine));
      bool ok = true;
      if (world->rank() == 0) ok = report(p, repeat, "MPI processes", all);
      int32_t verdict = ok ? 1 : 0;
      std::vector<int32_t> verdicts(kRanks);
      require_ok(world->all_gather(&verdict, verdicts.data(), sizeof verdict));
      if (verdicts[0] != 1) status = 1;
    }
    require_ok(hcp::mpi_finalize());
    return status;
  }
  std::vector<RankMeasure> all(kRanks);
  hcp::InProcessWorld world(kRanks, std::chrono::minutes(10));
  require_ok(world.run([&](hcp::Communicator& c) { return measure_rank(c, p, repeat, &all[static_cast<size_t>(c.rank())]); }));
  return report(p, repeat, "in-process threads", all) ? 0 : 1;
}

// CPU attention speed (issue 5): single-rank forward and backward at B 1, S 4096, H 8, D 128, causal, fp32, one
// thread, against the core's FMA peak probed in the same run (target: forward >= 30% of peak); the same with all
// cores; and the CP overhead - the summed CPU time of the 8 in-process ranks' forward under each scheme
// over the single-rank forward of the same full problem (target <= 1.25).
// Packed sequences and windows (issue 22), on 4 x S real tokens of a realistic document length mix:
// - the varlen kernels' useful FLOP rate against the fixed-length kernels' at the same useful FLOPs (target >= 90%);
// - the CP overhead of packed batches (target <= 1.25; the backward's too, without a target), the p2p and all_gather
//   forwards' with K and V exchanged instead of shared in place, and on p2p how it falls with longer documents;
// - what the ring's skipping saves: the packed CP forward against the dense causal CP forward of the same tokens;
// - a window of 4096 on a 131072-token sequence (H 1, D 64) against full causal attention, both on cp 8 p2p.
//   attention_bench [--seq N] [--heads N] [--head-dim N] [--repeat N] [--window-seq N] [--no-window]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "cp_workload.hpp"
#include "fma_peak.hpp"
#include "hcp/attention_cpu.hpp"
#include "hcp/cp_attention.hpp"

namespace {

struct Options {
  int64_t seq = 4096, heads = 8, head_dim = 128;
  int repeat = 3;
  int64_t window_seq = 131072;
  bool window = true;
};

double wall_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Problem {
  Options o;
  std::vector<float> q, k, v, dout, out, lse, delta, dq, dk, dv;
  hcp::AttnParams p;

  explicit Problem(const Options& opt) : o(opt) {
    const size_t n = static_cast<size_t>(o.seq * o.heads * o.head_dim);
    for (auto* t : {&q, &k, &v, &dout, &out, &dq, &dk, &dv}) t->assign(n, 0.0f);
    lse.assign(static_cast<size_t>(o.seq * o.heads), 0.0f);
    delta = lse;
    unsigned state = 12345;
    for (auto* t : {&q, &k, &v, &dout})
      for (auto& x : *t) x = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    const int64_t sh = o.heads * o.head_dim;
    auto bshd = [&](std::vector<float>& t) { return hcp::AttnTensor{t.data(), o.seq * sh, sh, o.head_dim}; };
    p.batch = 1, p.sq = p.sk = o.seq, p.heads = p.kv_heads = o.heads, p.head_dim = o.head_dim;
    p.scale = 1.0f / std::sqrt(static_cast<float>(o.head_dim));
    p.causal = true;
    p.q = bshd(q), p.k = bshd(k), p.v = bshd(v), p.dout = bshd(dout), p.out = bshd(out);
    p.dq = bshd(dq), p.dk = bshd(dk), p.dv = bshd(dv);
    p.lse = {lse.data(), o.seq * o.heads, o.seq};
    p.delta = {delta.data(), o.seq * o.heads, o.seq};
  }
  // Causal attention does half of the S x S work: 2 GEMMs of S*S/2*D multiply-adds per head.
  double forward_flop() const {
    return 4.0 * static_cast<double>(o.heads) * static_cast<double>(o.seq) * static_cast<double>(o.seq) / 2.0 *
           static_cast<double>(o.head_dim);
  }
};

template <class F>
double best_seconds(int repeat, F run) {
  double best = 1e30;
  for (int i = 0; i < repeat; ++i) {
    const double start = wall_seconds();
    run();
    best = std::min(best, wall_seconds() - start);
  }
  return best;
}

void require_ok(const hcp::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "attention_bench: %s\n", s.message().c_str());
    std::exit(2);
  }
}

int64_t median_length(const hcp::PackedBatch& b) {
  std::vector<int64_t> lengths;
  for (size_t d = 0; d + 1 < b.cu_seqlens.size(); ++d) lengths.push_back(b.cu_seqlens[d + 1] - b.cu_seqlens[d]);
  std::sort(lengths.begin(), lengths.end());
  return lengths.empty() ? 0 : lengths[lengths.size() / 2];
}

}  // namespace

using hcp::bench::Pass;

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "attention_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seq") o.seq = std::atoll(next());
    else if (a == "--heads") o.heads = std::atoll(next());
    else if (a == "--head-dim") o.head_dim = std::atoll(next());
    else if (a == "--repeat") o.repeat = std::atoi(next());
    else if (a == "--window-seq") o.window_seq = std::atoll(next());
    else if (a == "--no-window") o.window = false;
    else {
      std::fprintf(stderr, "attention_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const hcp::bench::Peak peak = hcp::bench::measure_fma_peak();
  Problem pr(o);
  const double fwd = best_seconds(o.repeat, [&] { require_ok(hcp::attention_forward_cpu(pr.p)); });
  hcp::attention_delta_cpu(pr.p.dtype, 1, o.seq, o.heads, o.head_dim, pr.p.dout, pr.p.out, pr.p.delta);
  const double bwd = best_seconds(o.repeat, [&] { require_ok(hcp::attention_backward_cpu(pr.p)); });
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pr.p.num_threads = cores;
  const double fwd_mt = best_seconds(o.repeat, [&] { require_ok(hcp::attention_forward_cpu(pr.p)); });
  const double bwd_mt = best_seconds(o.repeat, [&] { require_ok(hcp::attention_backward_cpu(pr.p)); });
  const double f = pr.forward_flop() / 1e9;
  std::printf("peak fp32 FMA, one core (%s): %.1f GFLOP/s\n", peak.isa.c_str(), peak.gflops);
  std::printf("kernels: %s\n", hcp::attention_cpu_isa());
  std::printf("forward  B1 S%lld H%lld D%lld causal fp32, 1 thread: %.3f s, %.1f GFLOP/s = %.0f%% of peak\n",
              static_cast<long long>(o.seq), static_cast<long long>(o.heads), static_cast<long long>(o.head_dim), fwd,
              f / fwd, 100.0 * f / fwd / peak.gflops);
  std::printf("backward 1 thread: %.3f s, %.1f GFLOP/s (2.5x forward flop) = %.0f%% of peak\n", bwd, 2.5 * f / bwd,
              100.0 * 2.5 * f / bwd / peak.gflops);
  std::printf("%d threads: forward %.3f s (%.2fx), backward %.3f s (%.2fx)\n", cores, fwd_mt, fwd / fwd_mt, bwd_mt,
              bwd / bwd_mt);
  // CP overhead: the 8 ranks' summed CPU time of one CP forward over the single-rank, one-thread forward, in steady
  // state (forwards repeated on the same contexts, as a training loop calls them), paired round by round.
  const hcp::bench::Workload plain = hcp::bench::plain_workload(o.seq, o.heads, o.head_dim);
  const hcp::bench::Workload packed = hcp::bench::packed_workload(4 * o.seq, o.heads, o.head_dim, 7);
  const std::pair<hcp::CpComm, std::vector<int64_t>> schemes[] = {
      {hcp::CpComm::p2p, {}}, {hcp::CpComm::a2a, {}}, {hcp::CpComm::a2a_p2p, {2, 4}}, {hcp::CpComm::all_gather, {}}};
  for (const auto& [comm, sizes] : schemes) {
    const hcp::bench::Overhead ov = hcp::bench::cp_overhead(plain, comm, sizes, o.repeat);
    std::printf("CP overhead %-10s cp 8%s: median of %d rounds: ranks' CPU time %.3f s / single-rank %.3f s = %.2f "
                "(target <= 1.25)\n",
                std::string(hcp::cp_comm_name(comm)).c_str(), sizes.empty() ? "" : " [2,4]", o.repeat,
                ov.cp_seconds, ov.single_seconds, ov.ratio);
  }

  // Varlen against fixed length at the same useful work: the fixed causal sequence whose S^2/2 pairs match.
  const double pairs = packed.forward_flop() / (4.0 * static_cast<double>(o.heads * o.head_dim));
  const int64_t fixed_seq = std::max<int64_t>(64, static_cast<int64_t>(std::sqrt(2.0 * pairs)) / 64 * 64);
  const hcp::bench::Workload fixed = hcp::bench::plain_workload(fixed_seq, o.heads, o.head_dim);
  hcp::bench::Workload::SingleSeconds tp{1e30, 1e30}, tf{1e30, 1e30};
  for (int i = 0; i < o.repeat; ++i) {
    const auto a = packed.single_seconds(true), b = fixed.single_seconds(true);
    tp.forward = std::min(tp.forward, a.forward), tp.backward = std::min(tp.backward, a.backward);
    tf.forward = std::min(tf.forward, b.forward), tf.backward = std::min(tf.backward, b.backward);
  }
  const double gp = packed.forward_flop() / 1e9, gf = fixed.forward_flop() / 1e9;
  std::printf("packed batch: %lld documents, %lld tokens (padded %lld for cp 8), median length %lld; useful "
              "forward %.1f GFLOP\n",
              static_cast<long long>(packed.packed.documents()), static_cast<long long>(packed.packed.cu_seqlens.back()),
              static_cast<long long>(packed.seq), static_cast<long long>(median_length(packed.packed)), gp);
  std::printf("varlen kernels, 1 thread: forward %.1f GFLOP/s, backward %.1f GFLOP/s; fixed length S %lld (%.1f "
              "GFLOP): forward %.1f, backward %.1f; varlen/fixed forward %.0f%%, backward %.0f%% (target >= 90%%)\n",
              gp / tp.forward, 2.5 * gp / tp.backward, static_cast<long long>(fixed_seq), gf, gf / tf.forward,
              2.5 * gf / tf.backward, 100.0 * (gp / tp.forward) / (gf / tf.forward),
              100.0 * (gp / tp.backward) / (gf / tf.backward));
  for (const auto& [comm, sizes] : schemes) {
    const hcp::bench::Overhead ov = hcp::bench::cp_overhead(packed, comm, sizes, o.repeat);
    std::printf("CP overhead packed %-10s cp 8%s: ranks' CPU time %.3f s / single-rank %.3f s = %.2f (target <= "
                "1.25)\n",
                std::string(hcp::cp_comm_name(comm)).c_str(), sizes.empty() ? "" : " [2,4]", ov.cp_seconds,
                ov.single_seconds, ov.ratio);
  }
  // The backward of the same packed batch (no target in the issue; the forward's ratio is the one it sets).
  for (const auto& [comm, sizes] : schemes) {
    const hcp::bench::Overhead ov = hcp::bench::cp_overhead(packed, comm, sizes, o.repeat, Pass::backward);
    std::printf("CP overhead packed backward %-10s cp 8%s: ranks' CPU time %.3f s / single-rank %.3f s = %.2f\n",
                std::string(hcp::cp_comm_name(comm)).c_str(), sizes.empty() ? "" : " [2,4]", ov.cp_seconds,
                ov.single_seconds, ov.ratio);
  }
  // What sharing K and V in place saves the in-process ranks (and what a transport that copies would add): the
  // forwards that share them, with the blocks exchanged instead, as between ranks that share no memory.
  for (const hcp::CpComm comm : {hcp::CpComm::p2p, hcp::CpComm::all_gather}) {
    const hcp::bench::Overhead ov =
        hcp::bench::cp_overhead(packed, comm, {}, o.repeat, Pass::forward, true, hcp::bench::Transport::exchanged);
    std::printf("CP overhead packed %-10s cp 8, K and V exchanged (not shared in place): ranks' CPU time %.3f s / "
                "single-rank %.3f s = %.2f\n",
                std::string(hcp::cp_comm_name(comm)).c_str(), ov.cp_seconds, ov.single_seconds, ov.ratio);
  }
  // The same overhead against document length, on packed batches of equal documents: the ring moves and merges every
  // block whatever the documents (a cost per token), while the useful work per token grows with their length.
  std::printf("CP overhead packed p2p cp 8 by document length (%lld tokens of equal documents):",
              static_cast<long long>(4 * o.seq));
  const char* separator = " ";
  for (const int64_t length : {512, 1024, 2048, 4096}) {
    const hcp::bench::Workload equal = hcp::bench::equal_documents_workload(4 * o.seq, length, o.heads, o.head_dim);
    const double ratio = hcp::bench::cp_overhead(equal, hcp::CpComm::p2p, {}, o.repeat).ratio;
    std::printf("%s%lld: %.2f", separator, static_cast<long long>(length), ratio);
    std::fflush(stdout);
    separator = ", ";
  }
  std::printf("\n");
  // What skipping saves: the same tokens as one dense causal sequence, on the same ranks.
  const hcp::bench::Workload dense = hcp::bench::plain_workload(packed.seq, o.heads, o.head_dim);
  const double dense_s = hcp::bench::cp_overhead(dense, hcp::CpComm::p2p, {}, 1, Pass::forward, false).cp_seconds;
  const double packed_s = hcp::bench::cp_overhead(packed, hcp::CpComm::p2p, {}, 1, Pass::forward, false).cp_seconds;
  std::printf("ring skipping, p2p cp 8: packed %.3f s against dense causal %.3f s of the same %lld tokens = %.1f%% "
              "of the time (useful work %.1f%%)\n",
              packed_s, dense_s, static_cast<long long>(packed.seq), 100.0 * packed_s / dense_s,
              100.0 * packed.forward_flop() / dense.forward_flop());
  if (o.window) {
    const hcp::bench::Workload full = hcp::bench::plain_workload(o.window_seq, 1, 64);
    const hcp::bench::Workload windowed = hcp::bench::plain_workload(o.window_seq, 1, 64, 4096);
    const double full_s = hcp::bench::cp_overhead(full, hcp::CpComm::p2p, {}, 1, Pass::forward, false).cp_seconds;
    const double window_s = hcp::bench::cp_overhead(windowed, hcp::CpComm::p2p, {}, 1, Pass::forward, false).cp_seconds;
    std::printf("window (4096, 0) on S %lld, H 1, D 64, p2p cp 8: ranks' CPU time %.2f s against full causal "
                "%.2f s = %.1f%% (useful work %.1f%%)\n",
                static_cast<long long>(o.window_seq), window_s, full_s, 100.0 * window_s / full_s,
                100.0 * windowed.forward_flop() / full.forward_flop());
  }
  return 0;
}

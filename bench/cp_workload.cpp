#include "cp_workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <utility>

#include "hcp/attention_cpu.hpp"
#include "hcp/counting_communicator.hpp"
#include "hcp/inprocess_world.hpp"
#include "thread_clock.hpp"

namespace hcp::bench {
namespace {

constexpr int kRanks = 8;

void require_ok(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "attention_bench: %s\n", s.message().c_str());
    std::exit(2);
  }
}

void fill(Workload* w) {
  const size_t n = static_cast<size_t>(w->seq * w->heads * w->head_dim);
  unsigned state = 12345;
  for (auto* t : {&w->q, &w->k, &w->v}) {
    t->resize(n);
    for (auto& x : *t) x = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
  }
  if (!w->packed.empty() || w->window_left >= 0) packed_row_labels(w->packed, w->seq, &w->seg, &w->pos);
}

}  // namespace

double Workload::forward_flop() const {
  return 4.0 * static_cast<double>(heads * head_dim) * visible_pairs(packed, seq, true, window_left, window_right);
}

Workload::SingleSeconds Workload::single_seconds(bool backward) const {
  std::vector<float>&out = outputs_.out, &lse = outputs_.lse, &delta = outputs_.delta;
  std::vector<float>&dq = outputs_.dq, &dk = outputs_.dk, &dv = outputs_.dv;
  out.resize(q.size()), lse.resize(static_cast<size_t>(seq * heads)), delta.resize(lse.size());
  if (backward) dq.resize(q.size()), dk.resize(q.size()), dv.resize(q.size());
  const int64_t row = heads * head_dim;
  auto bshd = [&](const std::vector<float>& t) { return AttnTensor{const_cast<float*>(t.data()), seq * row, row, head_dim}; };
  AttnParams p;
  p.batch = 1, p.sq = p.sk = seq, p.heads = p.kv_heads = heads, p.head_dim = head_dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(head_dim)), p.causal = true;
  p.q = bshd(q), p.k = bshd(k), p.v = bshd(v), p.out = bshd(out);
  p.lse = {lse.data(), seq * heads, seq};
  if (!seg.empty()) p.q_labels = p.k_labels = {seg.data(), pos.data()};
  p.window_left = window_left, p.window_right = window_left >= 0 ? 0 : -1;
  SingleSeconds t;
  double start = thread_seconds();
  require_ok(attention_forward_cpu(p));
  t.forward = thread_seconds() - start;
  if (!backward) return t;
  p.dout = bshd(v), p.dq = bshd(dq), p.dk = bshd(dk), p.dv = bshd(dv);  // dout: any values
  p.delta = {delta.data(), seq * heads, seq};
  attention_delta_cpu(p.dtype, 1, seq, heads, head_dim, p.dout, p.out, p.delta);
  start = thread_seconds();
  require_ok(attention_backward_cpu(p));
  t.backward = thread_seconds() - start;
  return t;
}

namespace {

// Documents of the lengths `next_length()` draws until `tokens` real tokens (the last one cut to fit), padded for
// cp 8 and filled.
template <class NextLength>
Workload packed_documents(int64_t tokens, int64_t heads, int64_t head_dim, NextLength next_length) {
  Workload w;
  w.heads = heads, w.head_dim = head_dim;
  w.packed.cu_seqlens = {0};
  while (w.packed.cu_seqlens.back() < tokens)
    w.packed.cu_seqlens.push_back(std::min(tokens, w.packed.cu_seqlens.back() + next_length()));
  w.packed.cu_seqlens_padded = pad_for_cp(w.packed.cu_seqlens, kRanks);
  w.seq = w.packed.total_padded();
  fill(&w);
  return w;
}

}  // namespace

Workload packed_workload(int64_t tokens, int64_t heads, int64_t head_dim, uint32_t seed) {
  std::mt19937 gen(seed);
  std::lognormal_distribution<double> length(6.5, 1.0);  // median e^6.5 = 665
  return packed_documents(tokens, heads, head_dim,
                          [&] { return std::clamp<int64_t>(static_cast<int64_t>(length(gen)), 16, 8192); });
}

Workload equal_documents_workload(int64_t tokens, int64_t length, int64_t heads, int64_t head_dim) {
  if (length < 1) {
    std::fprintf(stderr, "attention_bench: document length must be positive, got %lld\n",
                 static_cast<long long>(length));
    std::exit(2);
  }
  return packed_documents(tokens, heads, head_dim, [&] { return length; });
}

Workload plain_workload(int64_t seq, int64_t heads, int64_t head_dim, int64_t window_left) {
  Workload w;
  w.seq = seq, w.heads = heads, w.head_dim = head_dim, w.window_left = window_left;
  w.window_right = window_left >= 0 ? 0 : -1;
  fill(&w);
  return w;
}

Overhead cp_overhead(const Workload& w, CpComm scheme, const std::vector<int64_t>& sizes, int rounds_wanted,
                     Pass pass, bool with_single, Transport transport) {
  ParallelConfig config;
  config.world_size = kRanks, config.cp = kRanks;
  if (!sizes.empty()) config.hcp_sizes = sizes;
  const int64_t local = w.seq / kRanks, row = w.heads * w.head_dim;
  const auto rounds = static_cast<size_t>(std::max(rounds_wanted, 1));
  std::vector<std::vector<double>> seconds(kRanks, std::vector<double>(rounds));
  std::vector<double> single(rounds, 0.0);
  InProcessWorld world(kRanks, std::chrono::minutes(30));
  require_ok(world.run([&](Communicator& comm) -> Status {
    CountingCommunicator counted(comm, std::make_shared<TrafficTally>());
    Communicator& cp_world = transport == Transport::exchanged ? static_cast<Communicator&>(counted) : comm;
    std::unique_ptr<CpContext> ctx;
    // The group lines at debug level: below the default threshold, so the output is the figures.
    HCP_TRY(CpContext::create(cp_world, config, scheme, &ctx, LogLevel::debug));
    const int r = ctx->cp_rank();
    std::vector<float> q(static_cast<size_t>(local * row)), k(q.size()), v(q.size()), out(q.size());
    std::vector<float> lse(static_cast<size_t>(w.heads * local));
    for (auto [full, mine] : {std::pair{&w.q, &q}, {&w.k, &k}, {&w.v, &v}}) {
      if (w.packed.empty())
        HCP_TRY(shard_sequence(full->data(), mine->data(), 1, w.seq, row, 4, kRanks, r));
      else
        HCP_TRY(shard_packed(full->data(), mine->data(), w.packed, row, 4, kRanks, r));
    }
    CpShape shape;
    shape.seq_local = local, shape.heads = shape.kv_heads = w.heads, shape.head_dim = w.head_dim;
    shape.packed = w.packed, shape.window_left = w.window_left, shape.window_right = w.window_right;
    const bool backward = pass == Pass::backward;
    std::vector<float> dq, dk, dv;
    if (backward) dq.resize(q.size()), dk.resize(q.size()), dv.resize(q.size());
    // dout: any values (the single-rank backward uses v too).
    auto run = [&] {
      if (!backward) return ctx->forward(shape, q.data(), k.data(), v.data(), out.data(), lse.data());
      return ctx->backward(shape, q.data(), k.data(), v.data(), out.data(), lse.data(), v.data(), dq.data(),
                           dk.data(), dv.data());
    };
    HCP_TRY(ctx->forward(shape, q.data(), k.data(), v.data(), out.data(), lse.data()));  // warm-up, backward's inputs
    if (backward) HCP_TRY(run());
    if (comm.rank() == 0 && with_single) (void)w.single_seconds(backward);  // its buffers' first touch
    for (size_t i = 0; i < rounds; ++i) {
      HCP_TRY(comm.barrier());
      if (comm.rank() == 0 && with_single) {
        const Workload::SingleSeconds t = w.single_seconds(backward);
        single[i] = backward ? t.backward : t.forward;
      }
      HCP_TRY(comm.barrier());
      const double start = thread_seconds();
      HCP_TRY(run());
      seconds[static_cast<size_t>(r)][i] = thread_seconds() - start;
    }
    return {};
  }));
  std::vector<std::pair<double, size_t>> ratios;
  for (size_t i = 0; i < rounds; ++i) {
    double sum = 0;
    for (const auto& rank : seconds) sum += rank[i];
    ratios.emplace_back(with_single ? sum / single[i] : sum, i);
  }
  std::sort(ratios.begin(), ratios.end());
  const size_t mid = ratios[rounds / 2].second;
  double sum = 0;
  for (const auto& rank : seconds) sum += rank[mid];
  return {sum, single[mid], with_single ? ratios[rounds / 2].first : 0.0};
}

}  // namespace hcp::bench

// The cost model's terms (cp_cost.hpp) against what the runtime does: the bytes every rank sends, counted on the
// live communicator, and the query-key pairs every kernel call is given, counted from the calls' parameters. Exact
// equality: a change to an algorithm that moves different bytes or computes different pairs fails here until the
// model follows.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "forwarding_engine.hpp"
#include "hcp/counting_communicator.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/cp_cost.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/inprocess_world.hpp"

namespace hcp {
namespace {

// Whether key j is visible to query i under a call's mask (attention_params.hpp), labels read from host memory.
bool visible(const AttnParams& p, int64_t i, int64_t j) {
  int64_t qs = 0, qp = i + p.causal_offset, ks = 0, kp = j;
  if (p.q_labels.seg) qs = p.q_labels.seg[i], qp = p.q_labels.pos[i];
  if (p.k_labels.seg) ks = p.k_labels.seg[j], kp = p.k_labels.pos[j];
  if (qs < 0 || ks != qs) return false;
  if (p.causal && kp > qp) return false;
  if (p.window_left >= 0 && kp < qp - p.window_left) return false;
  if (p.window_right >= 0 && kp > qp + p.window_right) return false;
  return true;
}

// The CPU engine, counting the visible pairs of every forward and backward call (times batch and heads).
class PairCountingEngine final : public testing::ForwardingEngine {
 public:
  PairCountingEngine(std::shared_ptr<std::atomic<int64_t>> forward, std::shared_ptr<std::atomic<int64_t>> backward)
      : ForwardingEngine(make_cpu_engine()), forward_(std::move(forward)), backward_(std::move(backward)) {}
  Status forward(const AttnParams& p) override {
    *forward_ += pairs(p);
    return ForwardingEngine::forward(p);
  }
  Status backward(const AttnParams& p) override {
    *backward_ += pairs(p);
    return ForwardingEngine::backward(p);
  }

 private:
  static int64_t pairs(const AttnParams& p) {
    int64_t n = 0;
    for (int64_t i = 0; i < p.sq; ++i)
      for (int64_t j = 0; j < p.sk; ++j) n += visible(p, i, j);
    return n * p.batch * p.heads;
  }
  std::shared_ptr<std::atomic<int64_t>> forward_, backward_;
};

struct CostCase {
  std::string name;
  CpComm comm;
  int64_t a2a, ring;  // a2a: the a2a level (1 for p2p and all_gather); ring: the p2p level or the flat group
  int64_t heads, kv_heads;
  DType dtype;
  std::vector<int64_t> documents;  // empty: one sequence of 64 * cp tokens
  int64_t window_left = -1;
};

std::vector<CostCase> cost_cases() {
  return {
      {"p2p_4", CpComm::p2p, 1, 4, 4, 2, DType::bf16, {}},
      {"a2a_4", CpComm::a2a, 4, 1, 8, 4, DType::f32, {}},
      {"a2a_p2p_2x2", CpComm::a2a_p2p, 2, 2, 4, 2, DType::bf16, {}},
      {"a2a_p2p_2x4", CpComm::a2a_p2p, 2, 4, 4, 4, DType::f16, {}},
      {"all_gather_4", CpComm::all_gather, 1, 4, 4, 1, DType::bf16, {}},
      {"a2a_replicated_kv", CpComm::a2a, 4, 1, 8, 2, DType::bf16, {}},
      {"a2a_p2p_replicated_kv", CpComm::a2a_p2p, 4, 2, 8, 1, DType::f32, {}},
      {"p2p_packed", CpComm::p2p, 1, 4, 2, 2, DType::bf16, {40, 200, 9, 130}},
      {"a2a_p2p_packed_window", CpComm::a2a_p2p, 2, 2, 2, 2, DType::f32, {300, 17, 60}, 24},
      {"all_gather_window", CpComm::all_gather, 1, 4, 2, 2, DType::f32, {}, 40},
  };
}

class CpCost : public ::testing::TestWithParam<CostCase> {};

TEST_P(CpCost, ModelEqualsTheRuntime) {
  const CostCase& c = GetParam();
  const int64_t w = c.a2a * c.ring, head_dim = 32;
  CpProblem prob;
  prob.heads = c.heads, prob.kv_heads = c.kv_heads, prob.head_dim = head_dim;
  prob.dtype_bytes = static_cast<int64_t>(dtype_size(c.dtype));
  prob.window_left = c.window_left, prob.window_right = c.window_left >= 0 ? 0 : -1;
  if (c.documents.empty()) {
    prob.seq = 64 * w;
  } else {
    prob.packed.cu_seqlens = {0};
    for (int64_t d : c.documents) prob.packed.cu_seqlens.push_back(prob.packed.cu_seqlens.back() + d);
    prob.packed.cu_seqlens_padded = pad_for_cp(prob.packed.cu_seqlens, static_cast<int>(w));
    prob.seq = prob.packed.total_padded();
  }
  ParallelConfig config;
  config.world_size = w, config.cp = w;
  if (c.comm == CpComm::a2a_p2p) config.hcp_sizes = std::vector<int64_t>{c.a2a, c.ring};
  CpShape shape;
  shape.seq_local = prob.seq / w, shape.heads = c.heads, shape.kv_heads = c.kv_heads, shape.head_dim = head_dim;
  shape.dtype = c.dtype, shape.packed = prob.packed;
  shape.window_left = prob.window_left, shape.window_right = prob.window_right;

  auto fwd_pairs = std::make_shared<std::atomic<int64_t>>(0), bwd_pairs = std::make_shared<std::atomic<int64_t>>(0);
  std::vector<TrafficTally> forward(static_cast<size_t>(w)), backward(forward.size());
  InProcessWorld world(static_cast<int>(w), std::chrono::minutes(1));
  const Status st = world.run([&](Communicator& base) -> Status {
    CountingCommunicator comm(base, std::make_shared<TrafficTally>());
    std::unique_ptr<CpContext> ctx;
    HCP_TRY(CpContext::create(comm, config, c.comm, std::make_unique<PairCountingEngine>(fwd_pairs, bwd_pairs), &ctx,
                              LogLevel::debug));
    const size_t e = dtype_size(c.dtype), qn = static_cast<size_t>(shape.seq_local * c.heads * head_dim);
    const size_t kvn = static_cast<size_t>(shape.seq_local * c.kv_heads * head_dim);
    std::vector<unsigned char> q(qn * e, 0), k(kvn * e, 0), v(kvn * e, 0), out(qn * e), dq(qn * e), dk(kvn * e),
        dv(kvn * e);
    std::vector<float> lse(static_cast<size_t>(shape.seq_local * c.heads));
    const TrafficTally before = comm.tally();
    HCP_TRY(ctx->forward(shape, q.data(), k.data(), v.data(), out.data(), lse.data()));
    TrafficTally f = comm.tally();
    HCP_TRY(ctx->backward(shape, q.data(), k.data(), v.data(), out.data(), lse.data(), out.data(), dq.data(),
                          dk.data(), dv.data()));
    TrafficTally b = comm.tally();
    auto minus = [](TrafficTally x, const TrafficTally& y) {
      x.send_recv -= y.send_recv, x.all_to_all -= y.all_to_all, x.all_gather -= y.all_gather;
      x.reduce_scatter -= y.reduce_scatter;
      return x;
    };
    const auto r = static_cast<size_t>(comm.rank());
    backward[r] = minus(b, f);
    forward[r] = minus(f, before);
    return {};
  });
  ASSERT_TRUE(st.ok()) << st.message();

  for (bool bwd : {false, true}) {
    const CpTraffic model = cp_traffic(prob, c.comm, c.a2a, c.ring, bwd);
    for (const TrafficTally& t : bwd ? backward : forward) {
      SCOPED_TRACE(bwd ? "backward" : "forward");
      EXPECT_EQ(t.all_to_all, model.a2a);
      EXPECT_EQ(t.send_recv, model.ring);
      EXPECT_EQ(t.all_gather + t.reduce_scatter, model.gather);
    }
  }
  // Every visible pair computed once over all ranks and steps: the model's FLOPs are the kernels' work.
  const double pairs = cp_visible_pairs(prob) * static_cast<double>(c.heads);
  EXPECT_EQ(static_cast<double>(fwd_pairs->load()), pairs);
  EXPECT_EQ(static_cast<double>(bwd_pairs->load()), pairs);
  EXPECT_DOUBLE_EQ(attention_flops(prob, false), 4.0 * head_dim * pairs);
}

INSTANTIATE_TEST_SUITE_P(Schemes, CpCost, ::testing::ValuesIn(cost_cases()),
                         [](const ::testing::TestParamInfo<CostCase>& i) { return i.param.name; });

TEST(CpCost, RefusesProblemsTheRuntimeRefuses) {
  CpProblem p;
  p.seq = 100, p.heads = 6, p.kv_heads = 3, p.head_dim = 8;
  EXPECT_THROW(cp_traffic(p, CpComm::p2p, 1, 4, false), Error);  // 100 tokens are not 8 equal chunks
  p.seq = 96;
  EXPECT_NO_THROW(cp_traffic(p, CpComm::p2p, 1, 4, false));
  EXPECT_THROW(cp_traffic(p, CpComm::a2a, 4, 1, false), Error);      // 6 heads over 4
  EXPECT_THROW(cp_traffic(p, CpComm::a2a_p2p, 2, 2, false), Error);  // 3 KV heads and 2 divide neither way
  p.heads = 0;
  EXPECT_THROW(cp_traffic(p, CpComm::p2p, 1, 4, false), Error);
}

}  // namespace
}  // namespace hcp

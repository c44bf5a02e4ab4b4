// hcp plan: the estimate's terms against the cost model and the layout they come from, the enumeration and its
// rejections (by lint rule), the ranking, and the three cluster questions of docs/plan.md.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hcp/cp_cost.hpp"
#include "hcp/error.hpp"
#include "hcp/plan/plan.hpp"

namespace hcp::plan {
namespace {

PlanInput llama70b_h100(int64_t nodes) {
  PlanInput in;
  in.model = *model_preset("llama3-70b");
  in.model.seq = 131072;
  in.cluster.nodes = nodes, in.cluster.gpus_per_node = 8, in.cluster.gpu = *gpu_preset("h100");
  in.fixed.te_version = "2.4.0";
  return in;
}

const Candidate* find(const PlanResult& r, const std::string& describe) {
  for (const Candidate& c : r.ranked)
    if (c.layout.describe() == describe) return &c;
  return nullptr;
}

TEST(PlanEstimate, TermsAreTheCostModelsAndTheLayouts) {
  const PlanInput in = llama70b_h100(16);
  Layout l;
  l.tp = 8, l.cp = 16, l.dp = 1, l.comm = CpComm::a2a_p2p, l.a2a = 2, l.ring = 8;
  const Estimate e = estimate(in, l);
  CpProblem p;
  p.seq = 131072, p.heads = 64 / 8, p.kv_heads = 8 / 8, p.head_dim = 128;
  const CpTraffic f = cp_traffic(p, CpComm::a2a_p2p, 2, 8, false), b = cp_traffic(p, CpComm::a2a_p2p, 2, 8, true);
  EXPECT_EQ(e.a2a_bytes, static_cast<double>(f.a2a + b.a2a));
  EXPECT_EQ(e.ring_bytes, static_cast<double>(f.ring + b.ring));
  EXPECT_EQ(e.ring_step_bytes, static_cast<double>(f.kv_message));
  EXPECT_EQ(e.kv_replication, 2);  // one KV head a TP rank, a2a 2
  EXPECT_DOUBLE_EQ(e.attention_flops, 3.5 * attention_flops(p, false) / 16);
  // GEMMs: 6 FLOPs a weight and token over the TP group; the layer's weights (GQA projections, gated MLP).
  const double weights = 8192.0 * (8192 + 2 * 1024) + 8192.0 * 8192 + 3.0 * 8192 * 28672;
  EXPECT_DOUBLE_EQ(e.gemm_flops, 6.0 * 8192 * weights / 8);
  EXPECT_DOUBLE_EQ(e.gemm_s, e.gemm_flops / (989e12 * 0.7));
  // tp 8 fills the node: the a2a pairs and the ring both leave it.
  EXPECT_FALSE(e.a2a_in_node);
  EXPECT_FALSE(e.ring_in_node);
  EXPECT_DOUBLE_EQ(e.a2a_s, e.a2a_bytes / 50e9);
  EXPECT_DOUBLE_EQ(e.layer_s, e.gemm_s + e.attention_s + e.tp_s + e.a2a_s + e.ring_exposed_s + e.gather_s);
  EXPECT_GT(e.ring_hidden, 0.0);
  EXPECT_LE(e.ring_hidden, 1.0);
}

TEST(PlanEstimate, PlacementFollowsTheMegatronLayout) {
  const PlanInput in = llama70b_h100(4);
  Layout l;
  l.tp = 1, l.cp = 8, l.dp = 4, l.comm = CpComm::p2p, l.ring = 8;
  EXPECT_TRUE(estimate(in, l).ring_in_node);  // cp 8 on tp 1: the eight GPUs of a node
  l.tp = 2, l.dp = 2;
  EXPECT_FALSE(estimate(in, l).ring_in_node);  // 16 ranks apart: two nodes
  l.comm = CpComm::a2a_p2p, l.a2a = 4, l.ring = 2;
  const Estimate e = estimate(in, l);
  EXPECT_TRUE(e.a2a_in_node);  // tp 2 * a2a 4 = 8
  EXPECT_FALSE(e.ring_in_node);
}

TEST(PlanEstimate, WindowAndFullRecomputeChangeWhatTheyShould) {
  PlanInput in = llama70b_h100(16);
  Layout l;
  l.tp = 8, l.cp = 16, l.comm = CpComm::p2p, l.ring = 16;
  const Estimate full = estimate(in, l);
  in.model.window = 4096;
  const Estimate windowed = estimate(in, l);
  EXPECT_LT(windowed.attention_flops, 0.07 * full.attention_flops);  // 4k of 128k: about 6%
  EXPECT_EQ(windowed.ring_bytes, full.ring_bytes);                  // the ring still carries every block
  in.model.window = -1, in.fixed.full_recompute = true;
  const Estimate recomputed = estimate(in, l);
  EXPECT_LT(recomputed.activation_gib, full.activation_gib / 5);
  EXPECT_GT(recomputed.layer_s, full.layer_s);
  EXPECT_EQ(recomputed.gemm_flops, full.gemm_flops);  // useful work is the same
}

// The plan counts causal (windowed) pairs in closed form: equal to the runtime's row-by-row count.
TEST(PlanEstimate, ClosedFormPairsEqualTheRuntimes) {
  PlanInput in = llama70b_h100(1);
  Layout l;  // tp 1, no CP: the whole problem on one GPU
  l.dp = 8;
  for (int64_t seq : {2, 3, 100, 4096, 4097}) {
    for (int64_t window : {-1, 0, 1, 50, 4095, 5000}) {
      in.model.seq = seq, in.model.window = window;
      CpProblem p;
      p.seq = seq, p.heads = 64, p.kv_heads = 8, p.head_dim = 128, p.window_left = window;
      p.window_right = window >= 0 ? 0 : -1;
      EXPECT_DOUBLE_EQ(estimate(in, l).attention_flops, attention_flops(p, false) + attention_flops(p, true))
          << seq << " " << window;
    }
  }
}

TEST(PlanEstimate, FullRecomputeRepeatsTheForwardExchanges) {
  PlanInput in = llama70b_h100(16);
  Layout l;
  l.tp = 8, l.cp = 16, l.comm = CpComm::a2a_p2p, l.a2a = 2, l.ring = 8;
  const Estimate once = estimate(in, l);
  in.fixed.full_recompute = true;
  const Estimate twice = estimate(in, l);
  CpProblem p;
  p.seq = 131072, p.heads = 8, p.kv_heads = 1, p.head_dim = 128;
  const CpTraffic f = cp_traffic(p, CpComm::a2a_p2p, 2, 8, false);
  EXPECT_EQ(twice.a2a_bytes - once.a2a_bytes, static_cast<double>(f.a2a));
  EXPECT_EQ(twice.ring_bytes - once.ring_bytes, static_cast<double>(f.ring));
  EXPECT_DOUBLE_EQ(twice.tp_bytes, 1.5 * once.tp_bytes);
}

TEST(Plan, RejectsByRuleAndRanksWhatFitsFirst) {
  PlanInput in = llama70b_h100(16);
  in.fixed.full_recompute = true;
  const PlanResult r = plan(in);
  ASSERT_FALSE(r.ranked.empty());
  bool saw_hcp009 = false;
  for (const Rejected& x : r.rejected) {
    ASSERT_FALSE(x.errors.empty());
    if (x.errors.front().code == "HCP009") saw_hcp009 = true;
    if (x.layout.describe() == "tp 1, cp 16 a2a") {
      EXPECT_EQ(x.errors.front().code, "HCP009");
    }
  }
  EXPECT_TRUE(saw_hcp009);  // a2a beyond the 8 KV heads (per TP rank) is refused by Transformer Engine
  for (size_t i = 1; i < r.ranked.size(); ++i) {
    const Estimate &a = r.ranked[i - 1].estimate, &b = r.ranked[i].estimate;
    ASSERT_TRUE(a.fits || !b.fits);
    if (a.fits && b.fits) {
      EXPECT_GE(a.mfu, b.mfu);
    }
  }
  EXPECT_TRUE(r.ranked.front().estimate.fits);
  EXPECT_NE(r.verdict.find(" wins: estimated MFU "), std::string::npos) << r.verdict;
}

TEST(Plan, SaysWhenNothingFits) {
  PlanInput in = llama70b_h100(1);
  in.fixed.tp = 8;
  const PlanResult r = plan(in);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_FALSE(r.ranked.front().estimate.fits);
  EXPECT_NE(r.verdict.find("no layout fits in memory"), std::string::npos);
  EXPECT_NE(r.verdict.find("--recompute full"), std::string::npos);
}

// The GQA model with 8 KV heads at 1M tokens on 64 nodes of 8 H200: CP goes far beyond the KV heads, so pure a2a
// is refused above 8 and the winner is a ring (or a2a+p2p) over the network.
TEST(Plan, OneMillionTokensGoesBeyondTheKvHeads) {
  PlanInput in;
  in.model = *model_preset("llama3-8b");
  in.model.seq = 1 << 20;
  in.cluster.nodes = 64, in.cluster.gpus_per_node = 8, in.cluster.gpu = *gpu_preset("h200");
  in.fixed.te_version = "2.4.0";
  const PlanResult r = plan(in);
  ASSERT_FALSE(r.ranked.empty());
  const Candidate& best = r.ranked.front();
  EXPECT_TRUE(best.estimate.fits);
  EXPECT_GT(best.layout.cp / best.layout.tp, 8);
  EXPECT_NE(best.layout.comm, CpComm::a2a);
  EXPECT_NE(best.layout.comm, CpComm::all_gather);
  EXPECT_EQ(find(r, "tp 1, cp 64 a2a"), nullptr);  // rejected: 64 > 8 KV heads
}

TEST(Plan, Nvl72KeepsEveryGroupOnNvlink) {
  PlanInput in;
  in.model = *model_preset("llama3-70b");
  in.model.seq = 131072;
  in.cluster.nodes = 1, in.cluster.gpus_per_node = 72, in.cluster.gpu = *gpu_preset("gb200");
  in.fixed.full_recompute = true;
  in.model.global_batch = 144;  // dp takes the factor 9 of 72: the default 128 sequences would fit no layout
  const PlanResult r = plan(in);
  ASSERT_FALSE(r.ranked.empty());
  for (const Candidate& c : r.ranked) {
    EXPECT_TRUE(c.estimate.a2a_in_node);
    EXPECT_TRUE(c.estimate.ring_in_node);
  }
  // 72 = 8 * 9 and the sequence is a power of two: cp can only take the factors of two.
  for (const Candidate& c : r.ranked) EXPECT_EQ(c.layout.cp & (c.layout.cp - 1), 0) << c.layout.describe();
}

TEST(Plan, JsonHasEveryCandidateAndRejection) {
  PlanInput in = llama70b_h100(2);
  in.fixed.tp = 8;
  in.fixed.full_recompute = true;
  const PlanResult r = plan(in);
  const nlohmann::json j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["ranked"].size(), r.ranked.size());
  EXPECT_EQ(j["rejected"].size(), r.rejected.size());
  EXPECT_EQ(j["verdict"], r.verdict);
  EXPECT_EQ(j["cluster"]["gpu"]["peak_tflops"], 989);
  const std::string text = render_text(r, 3);
  EXPECT_NE(text.find("verdict: "), std::string::npos);
}

TEST(Plan, RejectsReplicasThatDoNotDivideTheGlobalBatch) {
  PlanInput in;
  in.model = *model_preset("llama3-8b");
  in.model.seq = 1 << 20;  // 16 sequences a step by default
  in.cluster.nodes = 64, in.cluster.gpus_per_node = 8, in.cluster.gpu = *gpu_preset("h200");
  in.fixed.tp = 8;
  const PlanResult r = plan(in);
  bool saw = false;
  for (const Rejected& x : r.rejected)
    if (x.errors.front().code == "global-batch") {
      saw = true;
      EXPECT_GT(x.layout.dp, 16);
    }
  EXPECT_TRUE(saw);
  for (const Candidate& c : r.ranked) EXPECT_EQ(16 % c.layout.dp, 0) << c.layout.describe();
}

TEST(Plan, RefusesInputsThatDescribeNoProblem) {
  PlanInput in = llama70b_h100(1);
  in.model.kv_heads = 7;
  EXPECT_THROW(plan(in), Error);
  in = llama70b_h100(1);
  in.fixed.tp = 3;
  EXPECT_THROW(plan(in), Error);
  in = llama70b_h100(0);
  EXPECT_THROW(plan(in), Error);
  in = llama70b_h100(1);
  in.fixed.pp = int64_t{1} << 62;  // beyond the layers (and tp * pp would overflow)
  EXPECT_THROW(plan(in), Error);
  in = llama70b_h100(1);
  in.efficiency.gemm = 1.5;
  EXPECT_THROW(plan(in), Error);
  in = llama70b_h100(1);
  in.cluster.gpu.network_gbs = 0;
  EXPECT_THROW(plan(in), Error);
  EXPECT_FALSE(gpu_preset("h900"));
  EXPECT_FALSE(model_preset("llama9"));
}

}  // namespace
}  // namespace hcp::plan

// Packed sequences (thd) and sliding windows under every CP scheme, against single-rank attention over the whole
// batch (the CPU kernel with the same labels, itself checked against the naive reference in attention_kernel_test):
// random document lengths with TE's padding, causal and not, MHA and GQA, fp32 and bf16, cp up to 16, forward and
// backward; plus the rank indices (TE's thd_get_partitioned_indices) and the input checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../../runtime/src/attention/cpu/bf16.hpp"
#include "attention_reference.hpp"
#include "dtype_values.hpp"
#include "emulated_engine.hpp"
#include "hcp/attention_cpu.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/packed_sequences.hpp"
#include "test_names.hpp"

namespace hcp {
namespace {

struct PackedCase {
  CpComm comm;
  int cp;
  std::vector<int64_t> sizes;  // a2a+p2p only
  bool packed;                 // false: one bshd sequence (batch 2) with a window
  bool causal;
  bool gqa;
  DType dtype;
  int64_t window_left, window_right;
  int64_t max_len;  // packed: documents of 1..max_len tokens
  uint32_t seed;
  int64_t heads = 0, kv_heads = 0;  // 0: 2 x a2a KV heads, twice as many query heads under GQA
  bool emulated_gpu = false;        // the CUDA engine's kernels on the block emulator, every rank on one device
  int documents = 5;
  bool nan_padding = false;  // the padding tokens of every input hold NaN (uninitialised memory may)
  bool empty_documents = false;  // documents of no tokens first, last and two together in the middle (TE draws them)
};

int a2a_size(const PackedCase& c) {
  if (c.comm == CpComm::a2a) return c.cp;
  if (c.comm == CpComm::a2a_p2p) return static_cast<int>(c.sizes[0]);
  return 1;
}

std::string case_name(const ::testing::TestParamInfo<PackedCase>& info) {
  const PackedCase& c = info.param;
  std::string sizes;
  for (int64_t s : c.sizes) {
    sizes += '_';  // piece by piece: GCC 12's -Wrestrict false positive on "_" + std::string
    sizes += std::to_string(s);
  }
  auto side = [](int64_t w) { return w < 0 ? std::string("inf") : std::to_string(w); };
  std::string heads;
  if (c.kv_heads) {
    heads += "_h";
    heads += std::to_string(c.heads);
    heads += 'x';
    heads += std::to_string(c.kv_heads);
  }
  return testing::name_of(c.comm == CpComm::a2a_p2p ? "a2a_p2p" : std::string(cp_comm_name(c.comm)), "_cp", c.cp,
                          sizes, c.packed ? "_thd" : "_bshd", c.causal ? "_causal" : "_full",
                          c.gqa ? "_gqa" : "_mha", heads, "_", dtype_name(c.dtype), "_w", side(c.window_left), "x",
                          side(c.window_right), "_s", c.seed, c.emulated_gpu ? "_emulated_gpu" : "",
                          c.max_len >= 10000 ? "_long_documents" : "", c.nan_padding ? "_nan_padding" : "",
                          c.empty_documents ? "_empty_documents" : "");
}

struct Tensors {
  std::vector<float> q, k, v, dout;
};

// The whole batch on one rank with the labels of the documents (padding: segment -1).
struct Reference {
  std::vector<float> out, lse, dq, dk, dv;
};
Reference single_rank(const PackedCase& c, const PackedBatch& batch, int64_t b, int64_t seq, int64_t heads,
                      int64_t kv_heads, int64_t head_dim, const Tensors& in) {
  std::vector<int32_t> seg, pos;
  packed_row_labels(batch, seq, &seg, &pos);
  Reference r;
  const size_t nq = in.q.size(), nk = in.k.size();
  r.out.assign(nq, 0), r.dq.assign(nq, 0), r.dk.assign(nk, 0), r.dv.assign(nk, 0);
  r.lse.assign(static_cast<size_t>(b * heads * seq), 0);
  std::vector<float> delta(r.lse.size());
  const int64_t qrow = heads * head_dim, kvrow = kv_heads * head_dim;
  AttnParams p;
  p.batch = b, p.sq = p.sk = seq, p.heads = heads, p.kv_heads = kv_heads, p.head_dim = head_dim;
  p.scale = 1.0f / std::sqrt(static_cast<float>(head_dim)), p.causal = c.causal;
  p.q_labels = p.k_labels = {seg.data(), pos.data()};
  p.window_left = c.window_left, p.window_right = c.window_right;
  auto qt = [&](const std::vector<float>& t) { return AttnTensor{const_cast<float*>(t.data()), seq * qrow, qrow, head_dim}; };
  auto kt = [&](const std::vector<float>& t) { return AttnTensor{const_cast<float*>(t.data()), seq * kvrow, kvrow, head_dim}; };
  p.q = qt(in.q), p.k = kt(in.k), p.v = kt(in.v), p.out = qt(r.out), p.dout = qt(in.dout);
  p.dq = qt(r.dq), p.dk = kt(r.dk), p.dv = kt(r.dv);
  p.lse = {r.lse.data(), heads * seq, seq};
  p.delta = {delta.data(), heads * seq, seq};
  EXPECT_TRUE(attention_forward_cpu(p).ok());
  attention_delta_cpu(DType::f32, b, seq, heads, head_dim, p.dout, p.out, p.delta);
  EXPECT_TRUE(attention_backward_cpu(p).ok());
  return r;
}

class CpPacked : public ::testing::TestWithParam<PackedCase> {};

TEST_P(CpPacked, EqualsSingleRankAttention) {
  const PackedCase& c = GetParam();
  const int a = a2a_size(c);
  const int64_t kv_heads = c.kv_heads ? c.kv_heads : 2 * a;
  const int64_t heads = c.heads ? c.heads : c.gqa ? 2 * kv_heads : kv_heads, head_dim = 64;
  PackedBatch batch;
  int64_t b = 1, seq = 0;
  if (c.packed) {
    std::mt19937 gen(c.seed);
    std::uniform_int_distribution<int64_t> len(1, c.max_len);
    batch.cu_seqlens = {0};
    for (int d = 0; d < c.documents; ++d) {
      if (c.empty_documents && (d == 0 || d == c.documents / 2)) batch.cu_seqlens.push_back(batch.cu_seqlens.back());
      if (c.empty_documents && d == c.documents / 2) batch.cu_seqlens.push_back(batch.cu_seqlens.back());
      batch.cu_seqlens.push_back(batch.cu_seqlens.back() + len(gen));
    }
    if (c.empty_documents) batch.cu_seqlens.push_back(batch.cu_seqlens.back());
    batch.cu_seqlens_padded = pad_for_cp(batch.cu_seqlens, c.cp);
    seq = batch.total_padded();
  } else {
    b = 2, seq = 2 * c.cp * 24;
  }
  const size_t nq = static_cast<size_t>(b * seq * heads * head_dim), nk = static_cast<size_t>(b * seq * kv_heads * head_dim);
  Tensors in{testing::random_floats(nq, c.seed + 1, -2, 2), testing::random_floats(nk, c.seed + 2, -2, 2),
             testing::random_floats(nk, c.seed + 3), testing::random_floats(nq, c.seed + 4)};
  std::vector<uint16_t> bits[4];
  std::vector<float>* tensors[4] = {&in.q, &in.k, &in.v, &in.dout};
  if (c.nan_padding)  // single batch row: a padding token's row is heads x head_dim values
    for (size_t d = 0; d + 1 < batch.cu_seqlens.size(); ++d) {
      const int64_t first = batch.cu_seqlens_padded[d] + batch.cu_seqlens[d + 1] - batch.cu_seqlens[d];
      for (int i = 0; i < 4; ++i) {
        const int64_t row = (i == 1 || i == 2 ? kv_heads : heads) * head_dim;
        std::fill(tensors[i]->begin() + first * row, tensors[i]->begin() + batch.cu_seqlens_padded[d + 1] * row, NAN);
      }
    }
  if (c.dtype == DType::bf16)
    for (int i = 0; i < 4; ++i) {
      for (float& x : *tensors[i]) {
        bits[i].push_back(cpu::float_to_bf16(x));
        x = cpu::bf16_to_float(bits[i].back());
      }
    }
  const Reference want = single_rank(c, batch, b, seq, heads, kv_heads, head_dim, in);

  SimulateOptions o;
  o.comm = c.comm, o.cp = c.cp, o.hcp_sizes = c.sizes, o.packed = batch;
  o.batch = b, o.seq = seq, o.heads = heads, o.kv_heads = kv_heads, o.head_dim = head_dim;
  o.dtype = c.dtype, o.causal = c.causal, o.window_left = c.window_left, o.window_right = c.window_right;
  if (c.emulated_gpu) o.make_engine = [] { return std::make_unique<testing::EmulatedGpuEngine>(0); };
  const size_t e = dtype_size(c.dtype);
  std::vector<unsigned char> out(nq * e), dq(nq * e), dk(nk * e), dv(nk * e);
  std::vector<float> lse(want.lse.size());
  SimulateTensors t;
  auto data = [&](int i) -> const void* {
    return c.dtype == DType::f32 ? static_cast<const void*>(tensors[i]->data()) : bits[i].data();
  };
  t.q = data(0), t.k = data(1), t.v = data(2), t.dout = data(3);
  t.out = out.data(), t.lse = lse.data(), t.dq = dq.data(), t.dk = dk.data(), t.dv = dv.data();
  const Status s = attention_simulate(o, t);
  ASSERT_TRUE(s.ok()) << s.message();
  // bf16: the output rounding alone is 2^-9 relative; the GPU kernels also round P and dS to bf16.
  const double tol = c.dtype == DType::f32 ? 1e-5 : c.emulated_gpu ? 3e-2 : 2e-2;
  EXPECT_LE(testing::max_rel_error(testing::as_floats(out, c.dtype), want.out), tol);
  EXPECT_LE(testing::max_rel_error(lse, want.lse), c.dtype == DType::f32 ? 1e-6 : 1e-2);
  EXPECT_LE(testing::max_rel_error(testing::as_floats(dq, c.dtype), want.dq), tol);
  EXPECT_LE(testing::max_rel_error(testing::as_floats(dk, c.dtype), want.dk), tol);
  EXPECT_LE(testing::max_rel_error(testing::as_floats(dv, c.dtype), want.dv), tol);
}

std::vector<PackedCase> packed_cases() {
  std::vector<PackedCase> cases;
  uint32_t seed = 100;
  struct Scheme {
    CpComm comm;
    int cp;
    std::vector<int64_t> sizes;
  };
  const std::vector<Scheme> schemes = {{CpComm::p2p, 2, {}},         {CpComm::p2p, 5, {}},
                                       {CpComm::p2p, 16, {}},        {CpComm::a2a, 4, {}},
                                       {CpComm::a2a_p2p, 4, {2, 2}}, {CpComm::a2a_p2p, 8, {2, 4}},
                                       {CpComm::a2a_p2p, 6, {3, 2}}, {CpComm::a2a_p2p, 16, {4, 4}},
                                       {CpComm::all_gather, 3, {}},  {CpComm::all_gather, 8, {}}};
  for (const Scheme& s : schemes)
    for (bool causal : {true, false}) {
      const bool gqa = (seed % 2) == 0;
      cases.push_back({s.comm, s.cp, s.sizes, true, causal, gqa, DType::f32, -1, -1, 300, seed++});
      cases.push_back({s.comm, s.cp, s.sizes, true, causal, !gqa, DType::f32, 37, causal ? 0 : 11, 300, seed++});
      cases.push_back({s.comm, s.cp, s.sizes, false, causal, gqa, DType::f32, 29, causal ? 0 : 5, 0, seed++});
    }
  for (CpComm comm : {CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p, CpComm::all_gather})
    cases.push_back({comm, 4, comm == CpComm::a2a_p2p ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{}, true,
                     true, true, DType::bf16, 50, 0, 400, seed++});
  // Documents of one token each (all but one row of every chunk pair is padding) and one long document.
  cases.push_back({CpComm::p2p, 4, {}, true, true, false, DType::f32, -1, -1, 1, seed++});
  cases.push_back({CpComm::a2a_p2p, 4, {2, 2}, true, true, true, DType::f32, -1, -1, 1, seed++});
  // a2a wider than the KV heads: the heads are replicated for the exchange and their gradients summed back.
  auto wide = [&](CpComm comm, int cp, std::vector<int64_t> sizes, bool packed, int64_t heads, int64_t kv, DType dt) {
    PackedCase c{comm, cp, std::move(sizes), packed, true, true, dt, -1, -1, 200, seed++};
    c.heads = heads, c.kv_heads = kv;
    return c;
  };
  cases.push_back(wide(CpComm::a2a, 8, {}, false, 8, 2, DType::f32));
  cases.push_back(wide(CpComm::a2a, 4, {}, true, 4, 1, DType::f32));
  cases.push_back(wide(CpComm::a2a_p2p, 8, {4, 2}, false, 8, 1, DType::f32));
  cases.push_back(wide(CpComm::a2a_p2p, 8, {4, 2}, true, 16, 2, DType::bf16));
  // Documents of up to 10k tokens (few heads: the reference is single-rank attention over all of them).
  for (auto [comm, cp, sizes, window] : {std::tuple{CpComm::p2p, 8, std::vector<int64_t>{}, int64_t{2048}},
                                         {CpComm::a2a_p2p, 8, std::vector<int64_t>{2, 4}, int64_t{-1}}}) {
    PackedCase c{comm, cp, sizes, true, true, true, DType::f32, window, window < 0 ? -1 : 0, 10000, seed++};
    c.heads = 2, c.kv_heads = 1, c.documents = 3;
    cases.push_back(c);
  }
  // The CUDA engine's kernels (labelled masks) through every scheme, on the block emulator.
  for (CpComm comm : {CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p, CpComm::all_gather}) {
    PackedCase c{comm, 4, comm == CpComm::a2a_p2p ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{}, true, true,
                 true, DType::bf16, comm == CpComm::p2p ? 40 : -1, comm == CpComm::p2p ? 0 : -1, 70, seed++};
    c.emulated_gpu = true, c.heads = 8, c.kv_heads = 4;  // small: the emulator steps 128 threads a block
    cases.push_back(c);
  }
  // More of the CUDA engine's paths on the block emulator: no causal mask with a window on both sides, one bshd
  // sequence (batch 2) with a window, cp 8 under a2a+p2p, and KV heads replicated for an a2a wider than them.
  auto emulated = [](PackedCase c) {
    c.emulated_gpu = true;
    if (c.heads == 0) c.heads = 8, c.kv_heads = 4;
    return c;
  };
  cases.push_back(emulated({CpComm::a2a, 4, {}, true, false, true, DType::bf16, 33, 9, 120, seed++}));
  cases.push_back(emulated({CpComm::all_gather, 4, {}, true, false, true, DType::bf16, 20, 20, 120, seed++}));
  cases.push_back(emulated({CpComm::p2p, 4, {}, false, false, true, DType::bf16, 29, 5, 0, seed++}));
  cases.push_back(emulated({CpComm::a2a_p2p, 8, {2, 4}, true, true, true, DType::bf16, 64, 0, 300, seed++}));
  cases.push_back(emulated(wide(CpComm::a2a, 8, {}, true, 8, 2, DType::bf16)));
  // NaN in the padding of every input, every scheme, on the CPU kernels and on the block emulator: what the
  // padding holds must not reach a result.
  for (CpComm comm : {CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p, CpComm::all_gather})
    for (bool gpu : {false, true}) {
      PackedCase c{comm, 4, comm == CpComm::a2a_p2p ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{}, true, true,
                   true, gpu ? DType::bf16 : DType::f32, -1, -1, 90, seed++};
      c.emulated_gpu = gpu, c.nan_padding = true, c.heads = 8, c.kv_heads = 4;
      cases.push_back(c);
    }
  // Empty documents (zero tokens, zero padded rows) among the others, every scheme, on the CPU kernels (one with a
  // window) and on the block emulator.
  for (CpComm comm : {CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p, CpComm::all_gather})
    for (bool gpu : {false, true}) {
      const bool window = !gpu && comm == CpComm::p2p;
      PackedCase c{comm, 4, comm == CpComm::a2a_p2p ? std::vector<int64_t>{2, 2} : std::vector<int64_t>{}, true, true,
                   true, gpu ? DType::bf16 : DType::f32, window ? 21 : -1, window ? 0 : -1, 90, seed++};
      c.emulated_gpu = gpu, c.empty_documents = true, c.heads = 8, c.kv_heads = 4;
      cases.push_back(c);
    }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Schemes, CpPacked, ::testing::ValuesIn(packed_cases()), case_name);

// Splits that exist neither way are refused with the reason, on every rank.
TEST(KvReplication, RefusesSplitsThatDoNotExist) {
  for (auto [heads, kv, a2a] : {std::tuple{12, 3, 2}, {6, 6, 4}, {8, 4, 3}}) {
    SimulateOptions o;
    o.comm = CpComm::a2a, o.cp = a2a, o.seq = 4 * a2a, o.heads = heads, o.kv_heads = kv, o.head_dim = 64;
    std::vector<float> q(static_cast<size_t>(o.seq * heads * 64)), k(static_cast<size_t>(o.seq * kv * 64));
    std::vector<float> out(q.size()), lse(static_cast<size_t>(heads * o.seq));
    SimulateTensors t;
    t.q = q.data(), t.k = k.data(), t.v = k.data(), t.out = out.data(), t.lse = lse.data();
    const Status s = attention_simulate(o, t);
    EXPECT_EQ(s.code(), Errc::shape) << heads << " " << kv << " " << a2a;
    const bool heads_split = heads % a2a == 0;
    EXPECT_NE(s.message().find(heads_split ? "must divide one another" : "must be divisible by the a2a size"),
              std::string::npos)
        << s.message();
  }
}

TEST(PackedSequences, RankIndicesFollowTransformerEngine) {
  // Two documents padded to 8 and 4 rows, cp 2: chunks of 2 and 1 rows; rank 0 takes chunks 0 and 3 of each.
  PackedBatch batch{{0, 7, 10}, {0, 8, 12}};
  EXPECT_EQ(packed_rank_indices(batch, 2, 0), (std::vector<int64_t>{0, 1, 6, 7, 8, 11}));
  EXPECT_EQ(packed_rank_indices(batch, 2, 1), (std::vector<int64_t>{2, 3, 4, 5, 9, 10}));
  EXPECT_EQ(pad_for_cp({0, 7, 10, 10}, 2), (std::vector<int64_t>{0, 8, 12, 12}));
  std::vector<int32_t> full(12), local(6), back(12, -1);
  for (int i = 0; i < 12; ++i) full[static_cast<size_t>(i)] = i;
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(shard_packed(full.data(), local.data(), batch, 1, 4, 2, r).ok());
    const auto want = packed_rank_indices(batch, 2, r);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(local[i], want[i]);
    ASSERT_TRUE(gather_packed(local.data(), back.data(), batch, 1, 4, 2, r).ok());
  }
  EXPECT_EQ(back, full);
}

TEST(PackedSequences, RejectsBatchesThatDoNotFit) {
  EXPECT_NE(packed_batch_error({{0, 7, 10}, {}}, 2).find("document 0 has 7 padded rows"), std::string::npos);
  EXPECT_NE(packed_batch_error({{0, 7, 10}, {0, 4, 8}}, 2).find("document 0 has 7 tokens but only 4"),
            std::string::npos);
  EXPECT_NE(packed_batch_error({{1, 7}, {}}, 1).find("must start at 0"), std::string::npos);
  EXPECT_NE(packed_batch_error({{0, 8, 4}, {}}, 1).find("must not decrease"), std::string::npos);
  EXPECT_NE(packed_batch_error({{0, 4}, {0, 4, 8}}, 1).find("offsets"), std::string::npos);
  EXPECT_EQ(packed_batch_error({{0, 7, 10}, {0, 8, 12}}, 2), "");
  std::vector<int32_t> x(16);
  EXPECT_EQ(shard_packed(x.data(), x.data(), {{0, 7}, {}}, 1, 4, 2, 0).code(), Errc::shape);
}

}  // namespace
}  // namespace hcp

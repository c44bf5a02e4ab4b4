// The CPU attention kernels against the naive double-precision reference: odd sizes (tails in both block
// directions), causal top-left and bottom-right, GQA, head dims 40..256, fp32/bf16/fp16 inputs, several threads.
// ctest runs this binary once per instruction set the machine has (HCP_CPU_ISA), so every dispatch target is checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../runtime/src/attention/cpu/bf16.hpp"
#include "../../runtime/src/attention/cpu/half.hpp"
#include "attention_reference.hpp"
#include "hcp/attention_cpu.hpp"
#include "test_names.hpp"

namespace hcp {
namespace {

// Transformer Engine's post_scale_bias shapes ([B|1, H|1, Sq|1, Sk]); none: no bias.
enum class BiasShape { none, bhss, b1ss, hss1, s11, s111 };  // bhss, b1ss, 1hss, 11ss, 111s
const char* bias_name(BiasShape b) {
  const char* names[] = {"", "_bias_bhss", "_bias_b1ss", "_bias_1hss", "_bias_11ss", "_bias_111s"};
  return names[static_cast<int>(b)];
}

struct KernelCase {
  int64_t batch, sq, sk, heads, kv_heads, head_dim;
  bool causal;
  bool bottom_right;
  DType dtype;
  int threads;
  // q, k, v and dout head-major ([B, H, S, D], as the CP ring hands them): fp32 rows whose head dim is a multiple of
  // the vector width are then read in place rather than packed.
  bool head_major = false;
  BiasShape bias = BiasShape::none;  // with its gradient, of every pair ([B, H, Sq, Sk])
};

std::string case_name(const ::testing::TestParamInfo<KernelCase>& info) {
  const auto& c = info.param;
  return hcp::testing::name_of("b", c.batch, "_q", c.sq, "_k", c.sk, "_h", c.heads, "x", c.kv_heads, "_d",
                               c.head_dim, c.causal ? (c.bottom_right ? "_causalBR" : "_causal") : "_full", "_",
                               dtype_name(c.dtype), "_t", c.threads, c.head_major ? "_headmajor" : "",
                               bias_name(c.bias));
}

// Rounds to the dtype and stores the raw elements; the reference gets the rounded values.
std::vector<uint16_t> to_half_bits(DType dtype, std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = dtype == DType::bf16 ? cpu::float_to_bf16(values[i]) : cpu::float_to_f16(values[i]);
    values[i] = dtype == DType::bf16 ? cpu::bf16_to_float(bits[i]) : cpu::f16_to_float(bits[i]);
  }
  return bits;
}

AttnTensor bshd(void* data, int64_t seq, int64_t heads, int64_t head_dim) {
  return {data, seq * heads * head_dim, heads * head_dim, head_dim};
}

// The [B, S, H, D] elements of `t` re-laid head-major into `out`, and the tensor describing them there.
template <class T>
AttnTensor head_major(const std::vector<T>& t, int64_t batch, int64_t seq, int64_t heads, int64_t head_dim,
                      std::vector<T>* out) {
  out->resize(t.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t d = 0; d < head_dim; ++d)
          (*out)[static_cast<size_t>(((b * heads + h) * seq + s) * head_dim + d)] =
              t[static_cast<size_t>(((b * seq + s) * heads + h) * head_dim + d)];
  return {out->data(), heads * seq * head_dim, head_dim, seq * head_dim};
}

// The forward `p` (which wrote out and lse) again, reading key tiles packed beforehand in three parts
// (attention_pack_keys_cpu, as CP all_gather's ranks share them): the same bits. Tiles nobody packs stay NaN, so a
// call that read one would show it. Labelled calls must be offered the packing, plain ones not.
void expect_same_forward_with_packed_keys(const AttnParams& p, bool labelled, const std::vector<float>& out,
                                          const std::vector<float>& lse) {
  const int64_t floats = attention_packed_keys_floats_cpu(p);
  if (labelled) {
    ASSERT_GT(floats, 0);
  }
  if (floats == 0) return;
  std::vector<float> tiles(static_cast<size_t>(floats), NAN), out2(out.size()), lse2(lse.size());
  for (int64_t part = 0; part < 3; ++part) ASSERT_TRUE(attention_pack_keys_cpu(p, part, 3, tiles.data()).ok());
  EXPECT_EQ(attention_pack_keys_cpu(p, 3, 3, tiles.data()).code(), Errc::invalid_argument);
  EXPECT_EQ(attention_pack_keys_cpu(p, 0, 0, tiles.data()).code(), Errc::invalid_argument);
  EXPECT_EQ(attention_pack_keys_cpu(p, 0, 3, nullptr).code(), Errc::invalid_argument);
  AttnParams again = p;
  again.out.data = out2.data(), again.lse.data = lse2.data(), again.packed_keys = tiles.data();
  ASSERT_TRUE(attention_forward_cpu(again).ok());
  EXPECT_EQ(std::memcmp(out.data(), out2.data(), out.size() * sizeof(float)), 0) << "out with packed keys";
  EXPECT_EQ(std::memcmp(lse.data(), lse2.data(), lse.size() * sizeof(float)), 0) << "lse with packed keys";
}

// Runs forward, delta and backward of case `c` with the labels and window already in `ref` (if any) and compares
// every output with the reference. With `nan_padding` the padding rows (segment < 0) of every input hold NaN, as
// uninitialised padding of a packed batch may: nothing may read them into a result.
void expect_matches_reference(const KernelCase& c, testing::RefProblem ref, bool nan_padding = false) {
  ref.batch = c.batch, ref.sq = c.sq, ref.sk = c.sk, ref.heads = c.heads, ref.kv_heads = c.kv_heads;
  ref.head_dim = c.head_dim, ref.causal = c.causal, ref.causal_offset = c.bottom_right ? c.sk - c.sq : 0;
  ref.scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  const size_t nq = static_cast<size_t>(c.batch * c.sq * c.heads * c.head_dim);
  const size_t nk = static_cast<size_t>(c.batch * c.sk * c.kv_heads * c.head_dim);
  std::vector<float> in[4] = {testing::random_floats(nq, 1, -2, 2), testing::random_floats(nk, 2, -2, 2),
                              testing::random_floats(nk, 3), testing::random_floats(nq, 4)};
  if (nan_padding) {
    const int64_t rows[4] = {c.sq, c.sk, c.sk, c.sq}, heads[4] = {c.heads, c.kv_heads, c.kv_heads, c.heads};
    const std::vector<int32_t>* segs[4] = {&ref.q_seg, &ref.k_seg, &ref.k_seg, &ref.q_seg};
    for (int i = 0; i < 4; ++i)
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t r = 0; r < rows[i]; ++r)
          if ((*segs[i])[static_cast<size_t>(r)] < 0)
            std::fill_n(in[i].begin() + ((b * rows[i] + r) * heads[i]) * c.head_dim, heads[i] * c.head_dim, NAN);
  }
  std::vector<uint16_t> bits[4];
  if (c.dtype != DType::f32)
    for (int i = 0; i < 4; ++i) bits[i] = to_half_bits(c.dtype, in[i]);
  auto data = [&](int i) -> void* { return c.dtype == DType::f32 ? static_cast<void*>(in[i].data()) : bits[i].data(); };
  ref.q.assign(in[0].begin(), in[0].end());
  ref.k.assign(in[1].begin(), in[1].end());
  ref.v.assign(in[2].begin(), in[2].end());
  ref.dout.assign(in[3].begin(), in[3].end());
  // The bias in its own shape (broadcast dimensions of size 1, stride 0), and expanded for the reference.
  const bool per_b = c.bias == BiasShape::bhss || c.bias == BiasShape::b1ss;
  const bool per_h = c.bias == BiasShape::bhss || c.bias == BiasShape::hss1;
  const bool per_q = c.bias != BiasShape::s111;
  const int64_t bb = per_b ? c.batch : 1, bh = per_h ? c.heads : 1, bq = per_q ? c.sq : 1;
  std::vector<float> bias = testing::random_floats(static_cast<size_t>(bb * bh * bq * c.sk), 6, -3, 3);
  const AttnPairs bias_view{bias.data(), per_b ? bh * bq * c.sk : 0, per_h ? bq * c.sk : 0, per_q ? c.sk : 0, 1};
  const size_t pairs = static_cast<size_t>(c.batch * c.heads * c.sq * c.sk);
  std::vector<float> dbias(c.bias == BiasShape::none ? 0 : pairs, 0.0f);
  if (c.bias != BiasShape::none) {
    ref.bias.resize(pairs);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t i = 0; i < c.sq; ++i)
          for (int64_t j = 0; j < c.sk; ++j)
            ref.bias[static_cast<size_t>(((b * c.heads + h) * c.sq + i) * c.sk + j)] =
                bias[static_cast<size_t>(b * bias_view.stride_b + h * bias_view.stride_h + i * bias_view.stride_q + j)];
  }
  const testing::RefResult want = testing::reference_attention(ref, true);

  std::vector<float> out(nq), lse(static_cast<size_t>(c.batch * c.heads * c.sq)), delta(lse.size());
  std::vector<float> max_logit(lse.size(), NAN);
  std::vector<float> dq(nq, 0.0f), dk(nk, 0.0f), dv(nk, 0.0f);
  AttnParams p;
  p.dtype = c.dtype;
  p.batch = c.batch, p.sq = c.sq, p.sk = c.sk, p.heads = c.heads, p.kv_heads = c.kv_heads, p.head_dim = c.head_dim;
  p.scale = static_cast<float>(ref.scale), p.causal = c.causal, p.causal_offset = ref.causal_offset;
  p.q = bshd(data(0), c.sq, c.heads, c.head_dim);
  p.k = bshd(data(1), c.sk, c.kv_heads, c.head_dim);
  p.v = bshd(data(2), c.sk, c.kv_heads, c.head_dim);
  p.dout = bshd(data(3), c.sq, c.heads, c.head_dim);
  std::vector<float> hm_f32[4];
  std::vector<uint16_t> hm_bits[4];
  if (c.head_major) {
    AttnTensor* inputs[4] = {&p.q, &p.k, &p.v, &p.dout};
    for (int i = 0; i < 4; ++i) {
      const int64_t seq = i == 1 || i == 2 ? c.sk : c.sq, heads = i == 1 || i == 2 ? c.kv_heads : c.heads;
      *inputs[i] = c.dtype == DType::f32 ? head_major(in[i], c.batch, seq, heads, c.head_dim, &hm_f32[i])
                                         : head_major(bits[i], c.batch, seq, heads, c.head_dim, &hm_bits[i]);
    }
  }
  p.out = bshd(out.data(), c.sq, c.heads, c.head_dim);
  p.dq = bshd(dq.data(), c.sq, c.heads, c.head_dim);
  p.dk = bshd(dk.data(), c.sk, c.kv_heads, c.head_dim);
  p.dv = bshd(dv.data(), c.sk, c.kv_heads, c.head_dim);
  p.lse = {lse.data(), c.heads * c.sq, c.sq};
  p.delta = {delta.data(), c.heads * c.sq, c.sq};
  p.max_logit = {max_logit.data(), c.heads * c.sq, c.sq};
  p.num_threads = c.threads;
  if (!ref.q_seg.empty()) {
    p.q_labels = {ref.q_seg.data(), ref.q_pos.data()};
    p.k_labels = {ref.k_seg.data(), ref.k_pos.data()};
  }
  p.window_left = ref.window_left, p.window_right = ref.window_right;
  if (c.bias != BiasShape::none) {
    p.bias = bias_view;
    p.dbias = {dbias.data(), c.heads * c.sq * c.sk, c.sq * c.sk, c.sk, 1};
  }

  ASSERT_TRUE(attention_forward_cpu(p).ok());
  EXPECT_LT(testing::max_rel_error(out, want.out), 1e-5) << "out, isa " << attention_cpu_isa();
  EXPECT_LT(testing::max_rel_error(lse, want.lse), 1e-6) << "lse";
  EXPECT_LT(testing::max_rel_error(max_logit, want.max_logit), 1e-6) << "max logit";
  expect_same_forward_with_packed_keys(p, !ref.q_seg.empty(), out, lse);
  attention_delta_cpu(c.dtype, c.batch, c.sq, c.heads, c.head_dim, p.dout, p.out, p.delta);
  ASSERT_TRUE(attention_backward_cpu(p).ok());
  EXPECT_LT(testing::max_rel_error(dq, want.dq), 1e-5) << "dq";
  EXPECT_LT(testing::max_rel_error(dk, want.dk), 1e-5) << "dk";
  EXPECT_LT(testing::max_rel_error(dv, want.dv), 1e-5) << "dv";
  if (c.bias != BiasShape::none) {
    EXPECT_LT(testing::max_rel_error(dbias, want.dbias), 1e-5) << "dbias";
  }
}

class AttentionKernel : public ::testing::TestWithParam<KernelCase> {};

TEST_P(AttentionKernel, MatchesReferenceForwardAndBackward) { expect_matches_reference(GetParam(), {}); }

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionKernel,
    ::testing::Values(KernelCase{1, 1, 1, 1, 1, 64, false, false, DType::f32, 1},
                      KernelCase{1, 1, 1, 1, 1, 64, true, false, DType::f32, 1},
                      KernelCase{2, 37, 53, 2, 1, 40, false, false, DType::f32, 1},
                      KernelCase{1, 130, 130, 4, 2, 64, true, false, DType::f32, 3},
                      KernelCase{1, 70, 200, 2, 2, 128, true, true, DType::f32, 2},
                      KernelCase{1, 200, 70, 3, 1, 128, true, false, DType::f32, 1},
                      KernelCase{2, 96, 96, 4, 4, 128, false, false, DType::bf16, 2},
                      KernelCase{1, 128, 128, 4, 1, 256, true, false, DType::bf16, 1},
                      KernelCase{1, 65, 129, 2, 1, 64, true, true, DType::f16, 1},
                      KernelCase{1, 64, 64, 2, 2, 96, true, false, DType::f32, 4},
                      KernelCase{1, 300, 300, 2, 1, 64, true, false, DType::f32, 2},
                      KernelCase{1, 260, 400, 2, 2, 64, true, true, DType::bf16, 1},
                      // Bottom-right offsets of 1 and 3 mod 4: the diagonal tiles' 4-row blocks end their columns
                      // at every remainder of the vector width (forward_impl.hpp, block_columns).
                      KernelCase{1, 100, 229, 2, 1, 64, true, true, DType::f32, 1},
                      KernelCase{1, 97, 100, 3, 1, 128, true, true, DType::f32, 2},
                      KernelCase{1, 520, 90, 1, 1, 32, false, false, DType::f32, 1},
                      KernelCase{2, 37, 53, 2, 1, 64, false, false, DType::f32, 1, true},
                      KernelCase{1, 130, 130, 4, 2, 64, true, false, DType::f32, 3, true},
                      KernelCase{1, 70, 200, 2, 2, 128, true, true, DType::f32, 2, true},
                      KernelCase{1, 300, 300, 2, 1, 32, true, false, DType::f32, 2, true},
                      KernelCase{1, 65, 129, 2, 1, 40, true, true, DType::f32, 1, true},
                      KernelCase{1, 96, 96, 2, 2, 64, true, false, DType::bf16, 1, true},
                      // Attention bias in each of Transformer Engine's shapes, with its gradient: tails, GQA,
                      // bottom-right, bf16, head-major (the in-place reads), several threads.
                      KernelCase{2, 37, 53, 2, 1, 40, false, false, DType::f32, 1, false, BiasShape::bhss},
                      KernelCase{2, 130, 130, 4, 2, 64, true, false, DType::f32, 3, false, BiasShape::b1ss},
                      KernelCase{1, 70, 200, 2, 2, 128, true, true, DType::f32, 2, true, BiasShape::hss1},
                      KernelCase{1, 97, 100, 3, 1, 64, true, true, DType::bf16, 1, false, BiasShape::s11},
                      KernelCase{2, 65, 129, 2, 1, 64, false, false, DType::f32, 1, true, BiasShape::s111}),
    case_name);

// Labelled masks: packed documents with padding, CP dual chunks of packed documents (queries of one rank against
// the keys of another, rows in chunk order), one rank's chunks against every rank's keys gathered in rank order (CP
// all_gather: the kernel walks those keys in sequence order, key_order.hpp), and sliding windows with and without
// labels. Keys of packed documents stored last document first (`reversed`) take the kernels' path for key tiles out of
// segment order (forward_tiles' live_sorted false).
enum class Rows { plain, packed, cp_chunks, gathered, reversed };
struct LabelledCase {
  KernelCase shape;  // sq and sk are overwritten for packed rows
  Rows rows;
  int64_t window_left, window_right;
  uint32_t seed;
  bool nan_padding = false;  // padding rows hold NaN (expect_matches_reference)
};

std::string labelled_name(const ::testing::TestParamInfo<LabelledCase>& info) {
  const auto& c = info.param;
  const char* rows = c.rows == Rows::plain    ? "plain"
                     : c.rows == Rows::packed ? "packed"
                     : c.rows == Rows::gathered ? "gathered"
                     : c.rows == Rows::reversed ? "reversed"
                                                : "cpchunks";
  return hcp::testing::name_of(rows, "_w", c.window_left < 0 ? "inf" : std::to_string(c.window_left), "x",
                               c.window_right < 0 ? "inf" : std::to_string(c.window_right), "_",
                               case_name({c.shape, 0}), "_s", c.seed, c.nan_padding ? "_nanpad" : "");
}

// Documents of random lengths 1..max_len, each padded to a multiple of `pad` with segment -1 rows.
void packed_labels(uint32_t seed, int docs, int64_t max_len, int64_t pad, std::vector<int32_t>* seg,
                   std::vector<int32_t>* pos, std::vector<int64_t>* padded_starts) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> len(1, max_len);
  for (int d = 0; d < docs; ++d) {
    const int64_t n = len(gen), padded = (n + pad - 1) / pad * pad;
    padded_starts->push_back(static_cast<int64_t>(seg->size()));
    for (int64_t i = 0; i < padded; ++i) {
      seg->push_back(i < n ? d : -1);
      pos->push_back(static_cast<int32_t>(i));
    }
  }
  padded_starts->push_back(static_cast<int64_t>(seg->size()));
}

class LabelledMask : public ::testing::TestWithParam<LabelledCase> {};

TEST_P(LabelledMask, MatchesReferenceForwardAndBackward) {
  LabelledCase c = GetParam();
  testing::RefProblem ref;
  ref.window_left = c.window_left, ref.window_right = c.window_right;
  if (c.rows != Rows::plain) {
    std::vector<int32_t> seg, pos;
    std::vector<int64_t> starts;
    const int cp = 3;
    packed_labels(c.seed, 7, 150, c.rows == Rows::packed ? 4 : 2 * cp, &seg, &pos, &starts);
    if (c.rows == Rows::packed) {
      ref.q_seg = ref.k_seg = seg, ref.q_pos = ref.k_pos = pos;
    } else if (c.rows == Rows::reversed) {
      ref.q_seg = seg, ref.q_pos = pos;
      for (size_t d = starts.size() - 1; d-- > 0;)
        for (int64_t i = starts[d]; i < starts[d + 1]; ++i) {
          ref.k_seg.push_back(seg[static_cast<size_t>(i)]);
          ref.k_pos.push_back(pos[static_cast<size_t>(i)]);
        }
    } else {  // rank 1's chunks (1 and 4 of each document) against rank 2's (2 and 3), or against all ranks'
      auto take = [&](int rank, std::vector<int32_t>* s, std::vector<int32_t>* p) {
        for (size_t d = 0; d + 1 < starts.size(); ++d) {
          const int64_t chunk = (starts[d + 1] - starts[d]) / (2 * cp);
          for (int64_t which : {int64_t{rank}, int64_t{2 * cp - 1 - rank}})
            for (int64_t i = starts[d] + which * chunk; i < starts[d] + (which + 1) * chunk; ++i) {
              s->push_back(seg[static_cast<size_t>(i)]);
              p->push_back(pos[static_cast<size_t>(i)]);
            }
        }
      };
      take(1, &ref.q_seg, &ref.q_pos);
      if (c.rows == Rows::gathered) {
        for (int rank = 0; rank < cp; ++rank) take(rank, &ref.k_seg, &ref.k_pos);
      } else {
        take(2, &ref.k_seg, &ref.k_pos);
      }
    }
    c.shape.sq = static_cast<int64_t>(ref.q_seg.size());
    c.shape.sk = static_cast<int64_t>(ref.k_seg.size());
  }
  expect_matches_reference(c.shape, ref, c.nan_padding);
}

INSTANTIATE_TEST_SUITE_P(
    Labels, LabelledMask,
    ::testing::Values(LabelledCase{{1, 0, 0, 4, 2, 64, true, false, DType::f32, 2}, Rows::packed, -1, -1, 11},
                      LabelledCase{{1, 0, 0, 2, 2, 64, false, false, DType::f32, 1}, Rows::packed, -1, -1, 12},
                      LabelledCase{{1, 0, 0, 4, 1, 128, true, false, DType::bf16, 1}, Rows::packed, 40, 0, 13},
                      LabelledCase{{1, 0, 0, 2, 1, 64, true, false, DType::f32, 3}, Rows::cp_chunks, -1, -1, 14},
                      LabelledCase{{1, 0, 0, 2, 2, 40, false, false, DType::f16, 1}, Rows::cp_chunks, -1, -1, 15},
                      LabelledCase{{1, 0, 0, 2, 2, 64, true, false, DType::f32, 1}, Rows::cp_chunks, 30, 0, 16},
                      LabelledCase{{2, 300, 300, 2, 1, 64, true, false, DType::f32, 2}, Rows::plain, 70, 0, 17},
                      LabelledCase{{1, 260, 260, 2, 2, 64, false, false, DType::f32, 1}, Rows::plain, 100, 33, 18},
                      LabelledCase{{1, 90, 400, 2, 2, 64, true, true, DType::bf16, 1}, Rows::plain, 128, 0, 19},
                      LabelledCase{{1, 200, 200, 2, 2, 64, false, false, DType::f32, 1}, Rows::plain, 0, 0, 20},
                      LabelledCase{{1, 200, 200, 1, 1, 32, false, false, DType::f32, 1}, Rows::plain, -1, 5, 21},
                      LabelledCase{{1, 0, 0, 4, 2, 64, true, false, DType::f32, 2, true}, Rows::packed, -1, -1, 22},
                      LabelledCase{{1, 0, 0, 2, 1, 128, true, false, DType::f32, 3, true}, Rows::cp_chunks, -1, -1, 23},
                      LabelledCase{{1, 0, 0, 2, 2, 32, true, false, DType::f32, 1, true}, Rows::cp_chunks, 30, 0, 24},
                      LabelledCase{{1, 0, 0, 4, 2, 64, true, false, DType::f32, 2, true}, Rows::packed, -1, -1, 25, true},
                      LabelledCase{{1, 0, 0, 2, 1, 64, true, false, DType::bf16, 1, true}, Rows::packed, 50, 0, 26, true},
                      LabelledCase{{1, 0, 0, 2, 2, 128, false, false, DType::f32, 1, true}, Rows::cp_chunks, -1, -1, 27,
                                   true},
                      // Gathered keys: values read in place run by run (head-major fp32), packed through the key
                      // order (token-major, bf16), windows, GQA, several threads, NaN in the padding rows.
                      LabelledCase{{1, 0, 0, 4, 2, 64, true, false, DType::f32, 2, true}, Rows::gathered, -1, -1, 28},
                      LabelledCase{{1, 0, 0, 2, 1, 128, true, false, DType::f32, 1}, Rows::gathered, -1, -1, 29},
                      LabelledCase{{1, 0, 0, 2, 2, 64, true, false, DType::bf16, 3}, Rows::gathered, 30, 0, 30},
                      LabelledCase{{1, 0, 0, 2, 2, 40, false, false, DType::f32, 1, true}, Rows::gathered, -1, -1, 31},
                      LabelledCase{{1, 0, 0, 2, 1, 64, true, false, DType::f32, 1, true}, Rows::gathered, 50, 0, 32,
                                   true},
                      LabelledCase{{1, 0, 0, 2, 1, 64, true, false, DType::f32, 1, true}, Rows::reversed, -1, -1, 33},
                      LabelledCase{{1, 0, 0, 2, 2, 32, false, false, DType::f32, 2}, Rows::reversed, 40, 0, 34},
                      // A bias looked up by stored key row when the kernel walks the keys in another order, and
                      // under windows and padding.
                      LabelledCase{{1, 0, 0, 2, 1, 64, true, false, DType::f32, 2, true, BiasShape::bhss},
                                   Rows::gathered, 30, 0, 35},
                      LabelledCase{{1, 0, 0, 2, 2, 32, false, false, DType::f32, 1, false, BiasShape::s11},
                                   Rows::reversed, -1, -1, 36},
                      LabelledCase{{1, 0, 0, 4, 2, 64, true, false, DType::f32, 2, false, BiasShape::hss1},
                                   Rows::packed, -1, -1, 37, true},
                      LabelledCase{{2, 300, 300, 2, 1, 64, true, false, DType::f32, 2, false, BiasShape::b1ss},
                                   Rows::plain, 70, 0, 38}),
    labelled_name);

TEST(AttentionKernelChecks, RejectsBadLabelsAndWindows) {
  float x = 0;
  int32_t label = 0;
  AttnParams p;
  p.batch = p.sq = p.sk = p.heads = p.kv_heads = 1;
  p.head_dim = 64;
  p.scale = 0.125f;
  p.q = p.k = p.v = p.out = {&x, 64, 64, 64};
  p.lse = {&x, 1, 1};
  AttnParams bad = p;
  bad.q_labels = {&label, &label};
  EXPECT_EQ(check_attention_params(bad, false).code(), Errc::invalid_argument);  // keys unlabelled
  bad.k_labels = {&label, nullptr};
  EXPECT_EQ(check_attention_params(bad, false).code(), Errc::invalid_argument);
  bad.k_labels = {&label, &label};
  EXPECT_TRUE(check_attention_params(bad, false).ok());
  bad = p, bad.window_left = -2;
  EXPECT_EQ(check_attention_params(bad, false).code(), Errc::invalid_argument);
}

TEST(AttentionKernelChecks, RejectsShapesThatDoNotFit) {
  float x = 0;
  AttnParams p;
  p.batch = p.sq = p.sk = p.heads = 1;
  p.kv_heads = 1;
  p.head_dim = 64;
  p.scale = 0.125f;
  p.q = p.k = p.v = p.out = {&x, 64, 64, 64};
  p.lse = {&x, 1, 1};
  EXPECT_TRUE(check_attention_params(p, false).ok());
  AttnParams bad = p;
  bad.heads = 3, bad.kv_heads = 2;
  EXPECT_EQ(check_attention_params(bad, false).code(), Errc::shape);
  bad = p, bad.head_dim = 513;
  EXPECT_EQ(check_attention_params(bad, false).code(), Errc::shape);
  bad = p, bad.sq = 0;
  EXPECT_EQ(attention_forward_cpu(bad).code(), Errc::shape);
  bad = p, bad.sq = 2, bad.q.stride_s = INT64_MAX;
  EXPECT_EQ(check_attention_params(bad, false).code(), Errc::shape);
  bad = p, bad.k.data = nullptr;
  EXPECT_EQ(check_attention_params(bad, false).code(), Errc::invalid_argument);
  EXPECT_EQ(check_attention_params(p, true).code(), Errc::invalid_argument);  // no dout, dq, ... given
}

TEST(AttentionKernelChecks, HalfConversionsRoundTrip) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 9.5367432e-07f}) {
    EXPECT_EQ(cpu::f16_to_float(cpu::float_to_f16(f)), f) << f;
  }
  EXPECT_TRUE(std::isinf(cpu::f16_to_float(cpu::float_to_f16(70000.0f))));
  EXPECT_EQ(cpu::bf16_to_float(cpu::float_to_bf16(1.0f + 1.0f / 256)), 1.0f);  // ties to even
  EXPECT_EQ(cpu::bf16_to_float(cpu::float_to_bf16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
}

}  // namespace
}  // namespace hcp

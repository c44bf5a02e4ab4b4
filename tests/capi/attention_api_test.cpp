// The attention C ABI: a full simulate call checked against the per-rank API, and misuse - NULL pointers, small
// struct_size, out-of-range enums, CUDA or strided tensors, mismatched shapes - giving documented statuses; context
// options and the NCCL entry points.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hcp/hcp.h"
#include "host_tensor.hpp"

namespace {

using hcp::test::tensor;

struct Buffers {
  // B 1, S 16, H 2, D 8
  std::vector<float> q = std::vector<float>(256), k = q, v = q, out = q, lse = std::vector<float>(32);
  Buffers() {
    for (size_t i = 0; i < q.size(); ++i) {
      q[i] = static_cast<float>((i * 7) % 11) / 11.0f - 0.5f;
      k[i] = static_cast<float>((i * 5) % 13) / 13.0f - 0.5f;
      v[i] = static_cast<float>(i % 17) / 17.0f;
    }
  }
};

TEST(AttentionApi, SimulateRunsAndRejectsMisuse) {
  Buffers b;
  hcp_tensor q = tensor(b.q.data(), {1, 16, 2, 8}), k = tensor(b.k.data(), {1, 16, 2, 8});
  hcp_tensor v = tensor(b.v.data(), {1, 16, 2, 8}), out = tensor(b.out.data(), {1, 16, 2, 8});
  hcp_tensor lse = tensor(b.lse.data(), {1, 2, 16});
  hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  o.cp = 4;
  ASSERT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr), HCP_OK)
      << hcp_last_error();
  float total = 0;  // token 0 sees only itself (v[0] is 0); later tokens average non-zero values
  for (float x : b.out) total += x;
  EXPECT_GT(total, 1.0f);

  EXPECT_EQ(hcp_attn_simulate(nullptr, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_attn_simulate(&o, nullptr, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  hcp_attn_simulate_options small = o;
  small.struct_size = 8;
  EXPECT_EQ(hcp_attn_simulate(&small, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  hcp_attn_simulate_options bad_comm = o;
  bad_comm.cp_comm = 9;
  EXPECT_EQ(hcp_attn_simulate(&bad_comm, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  hcp_attn_simulate_options odd = o;
  odd.cp = 3;  // 16 tokens do not split into 6 chunks
  EXPECT_EQ(hcp_attn_simulate(&odd, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr), HCP_ERR_SHAPE);
  // A CUDA tensor: unsupported without the GPU path; with it, the full tensors of a simulation must be host memory.
  hcp_tensor cuda = q;
  cuda.device = HCP_DEVICE_CUDA;
  const hcp_status cuda_status = hcp_attn_simulate(&o, &cuda, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr);
  EXPECT_TRUE(cuda_status == HCP_ERR_UNSUPPORTED || cuda_status == HCP_ERR_INVALID_ARGUMENT) << cuda_status;
  hcp_tensor bad_device = q;
  bad_device.device = 7;
  EXPECT_EQ(hcp_attn_simulate(&o, &bad_device, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  hcp_attn_simulate_options on_bad_device = o;
  on_bad_device.device = 5;
  EXPECT_EQ(hcp_attn_simulate(&on_bad_device, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  // A 0.2 caller's options (without `device`) still work and compute on the CPU.
  hcp_attn_simulate_options v02 = o;
  v02.struct_size = offsetof(hcp_attn_simulate_options, device);
  EXPECT_EQ(hcp_attn_simulate(&v02, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr), HCP_OK);
  hcp_tensor last_strided = q;
  last_strided.strides[3] = 2;
  EXPECT_EQ(hcp_attn_simulate(&o, &last_strided, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_UNSUPPORTED);
  hcp_tensor zero_stride = q;  // since 0.5: a zero stride is the contiguous one
  zero_stride.strides[1] = 0;
  EXPECT_EQ(hcp_attn_simulate(&o, &zero_stride, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr), HCP_OK);
  hcp_tensor negative_stride = q;
  negative_stride.strides[1] = -16;
  EXPECT_EQ(hcp_attn_simulate(&o, &negative_stride, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  hcp_tensor huge_stride = q;
  huge_stride.strides[0] = INT64_MAX / 2;
  huge_stride.shape[0] = 3;
  EXPECT_EQ(hcp_attn_simulate(&o, &huge_stride, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_SHAPE);
  hcp_tensor wrong_lse = tensor(b.lse.data(), {1, 16, 2});
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &wrong_lse, nullptr, nullptr, nullptr, nullptr), HCP_ERR_SHAPE);
  hcp_tensor bf16_k = k;
  bf16_k.dtype = HCP_DTYPE_BF16;
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &bf16_k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr), HCP_ERR_SHAPE);
  hcp_attn_simulate_options a2a_p2p = o;
  a2a_p2p.cp_comm = HCP_CP_COMM_A2A_P2P;  // without sizes
  EXPECT_EQ(hcp_attn_simulate(&a2a_p2p, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_CONFIG);
  EXPECT_NE(std::strlen(hcp_last_error()), 0u);
}

// Attention sinks through hcp_attn_simulate: every scheme on cp 4 (a2a+p2p [2, 2]) equals one rank with the same
// sinks, forward and backward, the learnable sinks' gradient and each head's maximum logit included; misuse of the
// fields is refused.
TEST(AttentionApi, SinksUnderEverySchemeEqualOneRank) {
  Buffers b;
  std::vector<float> dout(b.q.size()), dq(b.q.size()), dk(b.q.size()), dv(b.q.size());
  for (size_t i = 0; i < dout.size(); ++i) dout[i] = static_cast<float>((i * 3) % 19) / 19.0f - 0.5f;
  const float offset[2] = {0.7f, -0.4f};
  struct Result {
    std::vector<float> out, lse, dq, dk, dv;
    float d_offset[2] = {NAN, NAN};
    float max_logit[2] = {NAN, NAN};
  };
  auto run = [&](hcp_softmax_type type, int32_t cp, hcp_cp_comm comm) {
    Result r;
    hcp_tensor q = tensor(b.q.data(), {1, 16, 2, 8}), k = tensor(b.k.data(), {1, 16, 2, 8});
    hcp_tensor v = tensor(b.v.data(), {1, 16, 2, 8}), out = tensor(b.out.data(), {1, 16, 2, 8});
    hcp_tensor lse = tensor(b.lse.data(), {1, 2, 16}), tdout = tensor(dout.data(), {1, 16, 2, 8});
    hcp_tensor tdq = tensor(dq.data(), {1, 16, 2, 8}), tdk = tensor(dk.data(), {1, 16, 2, 8});
    hcp_tensor tdv = tensor(dv.data(), {1, 16, 2, 8});
    const int64_t sizes[2] = {2, 2};
    hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
    o.cp = cp, o.cp_comm = comm, o.softmax_type = type;
    if (comm == HCP_CP_COMM_A2A_P2P) o.num_hcp_levels = 2, o.hcp_sizes = sizes;
    if (type == HCP_SOFTMAX_LEARNABLE) o.softmax_offset = offset, o.d_softmax_offset = r.d_offset;
    o.max_logit = r.max_logit;
    EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, &tdout, &tdq, &tdk, &tdv), HCP_OK) << hcp_last_error();
    r.out = b.out, r.lse = b.lse, r.dq = dq, r.dk = dk, r.dv = dv;
    return r;
  };
  const Result vanilla = run(HCP_SOFTMAX_VANILLA, 1, HCP_CP_COMM_P2P);
  for (hcp_softmax_type type : {HCP_SOFTMAX_OFF_BY_ONE, HCP_SOFTMAX_LEARNABLE}) {
    const Result one = run(type, 1, HCP_CP_COMM_P2P);
    // A sink only takes mass: every lse grows, and the outputs shrink towards 0.
    for (size_t i = 0; i < one.lse.size(); ++i) EXPECT_GT(one.lse[i], vanilla.lse[i]);
    for (hcp_cp_comm comm : {HCP_CP_COMM_P2P, HCP_CP_COMM_A2A, HCP_CP_COMM_A2A_P2P, HCP_CP_COMM_ALL_GATHER}) {
      SCOPED_TRACE("type " + std::to_string(type) + " comm " + std::to_string(comm));
      const Result cp = run(type, comm == HCP_CP_COMM_A2A ? 2 : 4, comm);
      for (const auto& [got, want] : {std::pair{&cp.out, &one.out}, {&cp.lse, &one.lse}, {&cp.dq, &one.dq},
                                      {&cp.dk, &one.dk}, {&cp.dv, &one.dv}})
        for (size_t i = 0; i < want->size(); ++i) EXPECT_NEAR((*got)[i], (*want)[i], 1e-5f) << i;
      for (int h = 0; h < 2; ++h) {
        EXPECT_FLOAT_EQ(cp.max_logit[h], one.max_logit[h]);
        EXPECT_TRUE(std::isfinite(one.max_logit[h]));
        if (type == HCP_SOFTMAX_LEARNABLE) {
          EXPECT_NEAR(cp.d_offset[h], one.d_offset[h], 1e-5f);
          EXPECT_NE(one.d_offset[h], 0.0f);
        }
      }
    }
  }
  hcp_tensor q = tensor(b.q.data(), {1, 16, 2, 8}), k = tensor(b.k.data(), {1, 16, 2, 8});
  hcp_tensor v = tensor(b.v.data(), {1, 16, 2, 8}), out = tensor(b.out.data(), {1, 16, 2, 8});
  hcp_tensor lse = tensor(b.lse.data(), {1, 2, 16});
  hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  o.softmax_type = HCP_SOFTMAX_LEARNABLE;  // without its offsets
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hcp_last_error(), "softmax_offset is NULL with HCP_SOFTMAX_LEARNABLE"), nullptr);
  o.softmax_type = HCP_SOFTMAX_OFF_BY_ONE, o.softmax_offset = offset;  // offsets without a learnable softmax
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  o.softmax_type = 3, o.softmax_offset = nullptr;
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(hcp_last_error(), "softmax_type (3) is not an hcp_softmax_type value"), nullptr);
  o.softmax_type = HCP_SOFTMAX_OFF_BY_ONE, o.reserved2 = 1;
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  // A 0.7 caller's struct (without the sink fields) is a version: vanilla softmax.
  hcp_attn_simulate_options old = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  old.struct_size = offsetof(hcp_attn_simulate_options, softmax_type);
  EXPECT_EQ(hcp_attn_simulate(&old, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr), HCP_OK);
  for (size_t i = 0; i < b.lse.size(); ++i) EXPECT_EQ(b.lse[i], vanilla.lse[i]);
}

// MLA head dims through hcp_attn_simulate: v (and out, dout, dv) with head dim 4 beside q and k with 8. One rank
// equals the same attention with v padded by zeros to 8 (whose output's padding columns are 0 and whose dv's are
// 0), and every scheme on cp 4 equals one rank; an out or dv with q's head dim is refused, naming it.
TEST(AttentionApi, MlaHeadDimsUnderEverySchemeEqualOneRank) {
  Buffers b;
  constexpr int64_t kS = 16, kH = 2, kD = 8, kDv = 4;
  std::vector<float> v4(kS * kH * kDv), dout4(v4.size()), v8(b.q.size(), 0.0f), dout8(b.q.size(), 0.0f);
  for (size_t i = 0; i < v4.size(); ++i) {
    v4[i] = static_cast<float>((i * 5) % 23) / 23.0f - 0.3f;
    dout4[i] = static_cast<float>((i * 3) % 19) / 19.0f - 0.5f;
    v8[i / kDv * kD + i % kDv] = v4[i], dout8[i / kDv * kD + i % kDv] = dout4[i];
  }
  struct Result {
    std::vector<float> out, lse, dq, dk, dv;
  };
  auto run = [&](int32_t cp, hcp_cp_comm comm, int64_t dv_dim) {
    Result r;
    const int64_t n = kS * kH * dv_dim;
    r.out.assign(static_cast<size_t>(n), NAN), r.lse.assign(kH * kS, NAN), r.dq.assign(b.q.size(), NAN);
    r.dk.assign(b.k.size(), NAN), r.dv.assign(static_cast<size_t>(n), NAN);
    hcp_tensor q = tensor(b.q.data(), {1, kS, kH, kD}), k = tensor(b.k.data(), {1, kS, kH, kD});
    hcp_tensor v = tensor(dv_dim == kDv ? v4.data() : v8.data(), {1, kS, kH, dv_dim});
    hcp_tensor out = tensor(r.out.data(), {1, kS, kH, dv_dim}), lse = tensor(r.lse.data(), {1, kH, kS});
    hcp_tensor dout = tensor(dv_dim == kDv ? dout4.data() : dout8.data(), {1, kS, kH, dv_dim});
    hcp_tensor dq = tensor(r.dq.data(), {1, kS, kH, kD}), dk = tensor(r.dk.data(), {1, kS, kH, kD});
    hcp_tensor dv = tensor(r.dv.data(), {1, kS, kH, dv_dim});
    const int64_t sizes[2] = {2, 2};
    hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
    o.cp = cp, o.cp_comm = comm;
    if (comm == HCP_CP_COMM_A2A_P2P) o.num_hcp_levels = 2, o.hcp_sizes = sizes;
    EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, &dout, &dq, &dk, &dv), HCP_OK) << hcp_last_error();
    return r;
  };
  const Result one = run(1, HCP_CP_COMM_P2P, kDv), padded = run(1, HCP_CP_COMM_P2P, kD);
  for (size_t i = 0; i < padded.out.size(); ++i) {
    const bool pad = i % kD >= kDv;
    const size_t at = i / kD * kDv + i % kD;
    EXPECT_NEAR(padded.out[i], pad ? 0.0f : one.out[at], 1e-6f) << "out " << i;
    EXPECT_NEAR(padded.dv[i], pad ? 0.0f : one.dv[at], 1e-6f) << "dv " << i;
  }
  for (const auto& [got, want] : {std::pair{&one.lse, &padded.lse}, {&one.dq, &padded.dq}, {&one.dk, &padded.dk}})
    for (size_t i = 0; i < want->size(); ++i) EXPECT_NEAR((*got)[i], (*want)[i], 1e-6f) << i;
  for (hcp_cp_comm comm : {HCP_CP_COMM_P2P, HCP_CP_COMM_A2A, HCP_CP_COMM_A2A_P2P, HCP_CP_COMM_ALL_GATHER}) {
    SCOPED_TRACE("comm " + std::to_string(comm));
    const Result cp = run(comm == HCP_CP_COMM_A2A ? 2 : 4, comm, kDv);
    for (const auto& [got, want] : {std::pair{&cp.out, &one.out}, {&cp.lse, &one.lse}, {&cp.dq, &one.dq},
                                    {&cp.dk, &one.dk}, {&cp.dv, &one.dv}})
      for (size_t i = 0; i < want->size(); ++i) EXPECT_NEAR((*got)[i], (*want)[i], 1e-5f) << i;
  }
  std::vector<float> out8(b.q.size()), lse(kH * kS);
  hcp_tensor q = tensor(b.q.data(), {1, kS, kH, kD}), k = tensor(b.k.data(), {1, kS, kH, kD});
  hcp_tensor v = tensor(v4.data(), {1, kS, kH, kDv}), wrong_out = tensor(out8.data(), {1, kS, kH, kD});
  hcp_tensor tlse = tensor(lse.data(), {1, kH, kS});
  hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &wrong_out, &tlse, nullptr, nullptr, nullptr, nullptr), HCP_ERR_SHAPE);
  EXPECT_NE(std::strstr(hcp_last_error(), "out"), nullptr) << hcp_last_error();
  EXPECT_NE(std::strstr(hcp_last_error(), "v's head dim"), nullptr) << hcp_last_error();
}

// Attention bias through hcp_attn_simulate: a [1, H, S, S] bias (TE's 1hss) under every scheme equals one rank,
// forward and backward with the bias's gradient; one rank against the same attention with the bias added by hand
// where it is one value per head (a constant shift of a softmax changes nothing; a per-key one does); misuse refused.
TEST(AttentionApi, AttentionBiasUnderEverySchemeEqualsOneRank) {
  Buffers b;
  constexpr int64_t kS = 16, kH = 2, kD = 8;
  std::vector<float> bias(kH * kS * kS), dout(b.q.size());
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>((i * 7) % 29) / 29.0f * 4.0f - 2.0f;
  for (size_t i = 0; i < dout.size(); ++i) dout[i] = static_cast<float>((i * 3) % 19) / 19.0f - 0.5f;
  struct Result {
    std::vector<float> out, lse, dq, dk, dv, d_bias;
  };
  auto run = [&](int32_t cp, hcp_cp_comm comm, const std::vector<float>* with_bias) {
    Result r;
    r.out.assign(b.q.size(), NAN), r.lse.assign(kH * kS, NAN), r.dq = r.out, r.dk = r.out, r.dv = r.out;
    r.d_bias.assign(bias.size(), NAN);
    hcp_tensor q = tensor(b.q.data(), {1, kS, kH, kD}), k = tensor(b.k.data(), {1, kS, kH, kD});
    hcp_tensor v = tensor(b.v.data(), {1, kS, kH, kD}), out = tensor(r.out.data(), {1, kS, kH, kD});
    hcp_tensor lse = tensor(r.lse.data(), {1, kH, kS}), tdout = tensor(dout.data(), {1, kS, kH, kD});
    hcp_tensor dq = tensor(r.dq.data(), {1, kS, kH, kD}), dk = tensor(r.dk.data(), {1, kS, kH, kD});
    hcp_tensor dv = tensor(r.dv.data(), {1, kS, kH, kD});
    hcp_tensor tb = tensor(const_cast<float*>(with_bias ? with_bias->data() : bias.data()), {1, kH, kS, kS});
    hcp_tensor tdb = tensor(r.d_bias.data(), {1, kH, kS, kS});
    const int64_t sizes[2] = {2, 2};
    hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
    o.cp = cp, o.cp_comm = comm;
    if (comm == HCP_CP_COMM_A2A_P2P) o.num_hcp_levels = 2, o.hcp_sizes = sizes;
    if (with_bias) o.attn_bias = &tb, o.d_attn_bias = &tdb;
    EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, &tdout, &dq, &dk, &dv), HCP_OK) << hcp_last_error();
    return r;
  };
  const Result plain = run(1, HCP_CP_COMM_P2P, nullptr), one = run(1, HCP_CP_COMM_P2P, &bias);
  // A bias of one value per head (and query row) shifts lse by it and leaves the rest.
  std::vector<float> shift(bias.size());
  for (size_t i = 0; i < shift.size(); ++i) shift[i] = static_cast<float>(i / (kS * kS)) + 0.5f;
  const Result shifted = run(1, HCP_CP_COMM_P2P, &shift);
  for (size_t i = 0; i < plain.out.size(); ++i) EXPECT_NEAR(shifted.out[i], plain.out[i], 1e-5f) << i;
  for (size_t i = 0; i < plain.lse.size(); ++i) EXPECT_NEAR(shifted.lse[i], plain.lse[i] + 0.5f + static_cast<float>(i / kS), 1e-5f);
  float differs = 0;
  for (size_t i = 0; i < plain.out.size(); ++i) differs = std::max(differs, std::abs(one.out[i] - plain.out[i]));
  EXPECT_GT(differs, 1e-2f) << "a per-key bias changes the output";
  for (hcp_cp_comm comm : {HCP_CP_COMM_P2P, HCP_CP_COMM_A2A, HCP_CP_COMM_A2A_P2P, HCP_CP_COMM_ALL_GATHER}) {
    SCOPED_TRACE("comm " + std::to_string(comm));
    const Result cp = run(comm == HCP_CP_COMM_A2A ? 2 : 4, comm, &bias);
    for (const auto& [got, want] : {std::pair{&cp.out, &one.out}, {&cp.lse, &one.lse}, {&cp.dq, &one.dq},
                                    {&cp.dk, &one.dk}, {&cp.dv, &one.dv}, {&cp.d_bias, &one.d_bias}})
      for (size_t i = 0; i < want->size(); ++i) EXPECT_NEAR((*got)[i], (*want)[i], 1e-5f) << i;
  }
  std::vector<float> out(b.q.size()), lse(kH * kS);
  hcp_tensor q = tensor(b.q.data(), {1, kS, kH, kD}), k = tensor(b.k.data(), {1, kS, kH, kD});
  hcp_tensor v = tensor(b.v.data(), {1, kS, kH, kD}), tout = tensor(out.data(), {1, kS, kH, kD});
  hcp_tensor tlse = tensor(lse.data(), {1, kH, kS});
  hcp_tensor short_keys = tensor(bias.data(), {1, kH, kS, kS / 2}), half = tensor(bias.data(), {1, kH, kS, kS});
  half.dtype = HCP_DTYPE_BF16;
  hcp_tensor tb = tensor(bias.data(), {1, kH, kS, kS});
  hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  o.cp = 2;
  o.attn_bias = &short_keys;
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &tout, &tlse, nullptr, nullptr, nullptr, nullptr), HCP_ERR_SHAPE);
  EXPECT_NE(std::strstr(hcp_last_error(), "attn_bias has 8 keys"), nullptr) << hcp_last_error();
  o.attn_bias = &half;
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &tout, &tlse, nullptr, nullptr, nullptr, nullptr), HCP_ERR_SHAPE);
  o.attn_bias = nullptr, o.d_attn_bias = &tb;
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &tout, &tlse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  std::vector<float> three(3 * kS * kS);
  hcp_tensor heads3 = tensor(three.data(), {1, 3, kS, kS});  // neither 1 nor H heads
  o.attn_bias = &heads3, o.d_attn_bias = nullptr;
  EXPECT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &tout, &tlse, nullptr, nullptr, nullptr, nullptr), HCP_ERR_SHAPE);
  EXPECT_NE(std::strstr(hcp_last_error(), "Transformer Engine's shapes"), nullptr) << hcp_last_error();
}

TEST(AttentionApi, PerRankForwardEqualsSimulate) {
  Buffers full;
  hcp_tensor q = tensor(full.q.data(), {1, 16, 2, 8}), k = tensor(full.k.data(), {1, 16, 2, 8});
  hcp_tensor v = tensor(full.v.data(), {1, 16, 2, 8}), out = tensor(full.out.data(), {1, 16, 2, 8});
  hcp_tensor lse = tensor(full.lse.data(), {1, 2, 16});
  hcp_attn_simulate_options so = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  so.cp = 2;
  ASSERT_EQ(hcp_attn_simulate(&so, &q, &k, &v, &out, &lse, nullptr, nullptr, nullptr, nullptr), HCP_OK);

  hcp_world* world = nullptr;
  ASSERT_EQ(hcp_world_create(&world, 2, 20000), HCP_OK);
  std::vector<std::vector<float>> rank_out(2, std::vector<float>(128));
  std::vector<hcp_status> status(2, HCP_ERR_INTERNAL);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      hcp_comm* comm = nullptr;
      if ((status[r] = hcp_world_comm(&comm, world, r)) != HCP_OK) return;
      hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
      config.world_size = 2, config.cp = 2;
      hcp_cp_context* ctx = nullptr;
      if ((status[r] = hcp_cp_context_create(&ctx, &config, comm, HCP_CP_COMM_P2P)) != HCP_OK) return;
      // Rank r holds chunks r and 3 - r (4 tokens each, 16 floats per token).
      std::vector<float> lq(128), lk(128), lv(128), llse(16);
      const int chunks[2] = {r, 3 - r};
      for (int h = 0; h < 2; ++h) {
        std::memcpy(lq.data() + h * 64, full.q.data() + chunks[h] * 64, 64 * sizeof(float));
        std::memcpy(lk.data() + h * 64, full.k.data() + chunks[h] * 64, 64 * sizeof(float));
        std::memcpy(lv.data() + h * 64, full.v.data() + chunks[h] * 64, 64 * sizeof(float));
      }
      hcp_tensor tq = tensor(lq.data(), {1, 8, 2, 8}), tk = tensor(lk.data(), {1, 8, 2, 8});
      hcp_tensor tv = tensor(lv.data(), {1, 8, 2, 8}), to = tensor(rank_out[r].data(), {1, 8, 2, 8});
      hcp_tensor tl = tensor(llse.data(), {1, 2, 8});
      hcp_attn_options opts = HCP_ATTN_OPTIONS_INIT;
      status[r] = hcp_attn_forward(ctx, &opts, &tq, &tk, &tv, &to, &tl);
      hcp_cp_context_destroy(ctx);
    });
  }
  for (auto& t : threads) t.join();
  hcp_world_destroy(world);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(status[r], HCP_OK) << r;
    const int chunks[2] = {r, 3 - r};
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 64; ++i) EXPECT_NEAR(rank_out[r][h * 64 + i], full.out[chunks[h] * 64 + i], 1e-6f);
  }

  hcp_world_destroy(nullptr);
  hcp_cp_context_destroy(nullptr);
  EXPECT_EQ(hcp_world_create(nullptr, 2, 1000), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_world_create(&world, 0, 1000), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_world_create(&world, 2, -1), HCP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(hcp_world_create(&world, 2, 0), HCP_OK);  // 0: the default timeout
  hcp_world_destroy(world);
  ASSERT_EQ(hcp_world_create(&world, 2, 1000), HCP_OK);
  hcp_comm* comm = nullptr;
  EXPECT_EQ(hcp_world_comm(&comm, world, 2), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_comm_abort(nullptr, "x"), HCP_ERR_INVALID_ARGUMENT);
  hcp_world_destroy(world);
  EXPECT_EQ(hcp_attn_forward(nullptr, nullptr, &q, &k, &v, &out, &lse), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_set_log_callback(nullptr, nullptr), HCP_OK);
}

// [B, S, H, D] viewed over [B, H, S, D] memory, as a framework's transposed tensor would be.
hcp_tensor bhsd(void* data, int64_t b, int64_t s, int64_t h, int64_t d) {
  hcp_tensor t = tensor(data, {b, s, h, d});
  t.strides[0] = h * s * d, t.strides[1] = d, t.strides[2] = s * d, t.strides[3] = 1;
  return t;
}

std::vector<float> to_bhsd(const std::vector<float>& bshd, int64_t s, int64_t h, int64_t d) {
  std::vector<float> out(bshd.size());
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t x = 0; x < d; ++x) out[static_cast<size_t>((j * s + i) * d + x)] = bshd[static_cast<size_t>((i * h + j) * d + x)];
  return out;
}

// Strided tensors (here every tensor, lse included, in a transposed layout) give the same results as contiguous
// ones, forward and backward.
TEST(AttentionApi, StridedTensorsEqualContiguousOnes) {
  Buffers b;
  std::vector<float> dout(b.q.size());
  for (size_t i = 0; i < dout.size(); ++i) dout[i] = static_cast<float>((i * 3) % 7) / 7.0f - 0.5f;
  hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  o.cp = 2;
  std::vector<float> grads[3] = {std::vector<float>(256), std::vector<float>(256), std::vector<float>(256)};
  hcp_tensor q = tensor(b.q.data(), {1, 16, 2, 8}), k = tensor(b.k.data(), {1, 16, 2, 8});
  hcp_tensor v = tensor(b.v.data(), {1, 16, 2, 8}), out = tensor(b.out.data(), {1, 16, 2, 8});
  hcp_tensor lse = tensor(b.lse.data(), {1, 2, 16}), d = tensor(dout.data(), {1, 16, 2, 8});
  hcp_tensor dq = tensor(grads[0].data(), {1, 16, 2, 8}), dk = tensor(grads[1].data(), {1, 16, 2, 8});
  hcp_tensor dv = tensor(grads[2].data(), {1, 16, 2, 8});
  ASSERT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &out, &lse, &d, &dq, &dk, &dv), HCP_OK);

  std::vector<float> tq = to_bhsd(b.q, 16, 2, 8), tk = to_bhsd(b.k, 16, 2, 8), tv = to_bhsd(b.v, 16, 2, 8);
  std::vector<float> td = to_bhsd(dout, 16, 2, 8), tout(256), tdq(256), tdk(256), tdv(256);
  std::vector<float> tlse(64, -1.0f);  // lse [B, H, S] with a row stride of 32: every other block of 16 unused
  hcp_tensor sq = bhsd(tq.data(), 1, 16, 2, 8), sk = bhsd(tk.data(), 1, 16, 2, 8), sv = bhsd(tv.data(), 1, 16, 2, 8);
  hcp_tensor sout = bhsd(tout.data(), 1, 16, 2, 8), sd = bhsd(td.data(), 1, 16, 2, 8);
  hcp_tensor sdq = bhsd(tdq.data(), 1, 16, 2, 8), sdk = bhsd(tdk.data(), 1, 16, 2, 8), sdv = bhsd(tdv.data(), 1, 16, 2, 8);
  hcp_tensor slse = tensor(tlse.data(), {1, 2, 16});
  slse.strides[0] = 64, slse.strides[1] = 32;
  ASSERT_EQ(hcp_attn_simulate(&o, &sq, &sk, &sv, &sout, &slse, &sd, &sdq, &sdk, &sdv), HCP_OK) << hcp_last_error();
  const std::vector<float> want[4] = {to_bhsd(b.out, 16, 2, 8), to_bhsd(grads[0], 16, 2, 8),
                                      to_bhsd(grads[1], 16, 2, 8), to_bhsd(grads[2], 16, 2, 8)};
  const std::vector<float>* got[4] = {&tout, &tdq, &tdk, &tdv};
  for (int t = 0; t < 4; ++t)
    for (size_t i = 0; i < 256; ++i) EXPECT_FLOAT_EQ((*got[t])[i], want[t][i]) << t << " " << i;
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 16; ++i) {
      EXPECT_FLOAT_EQ(tlse[static_cast<size_t>(h * 32 + i)], b.lse[static_cast<size_t>(h * 16 + i)]);
      EXPECT_EQ(tlse[static_cast<size_t>(h * 32 + 16 + i)], -1.0f) << "the gaps must stay untouched";
    }
}

// Transformer Engine's sbhd layout - [S, B, H, D] memory, Megatron's default - passed as the bshd view with strides
// {H*D, B*H*D, D, 1}: the same results as bshd tensors, forward and backward, every scheme (batch 2).
TEST(AttentionApi, SbhdTensorsAsStridedViewsEqualBshd) {
  Buffers b;  // 256 floats: [B 2, S 8, H 2, D 8]
  std::vector<float> dout(b.q.size());
  for (size_t i = 0; i < dout.size(); ++i) dout[i] = static_cast<float>((i * 3) % 7) / 7.0f - 0.5f;
  auto to_sbhd = [](const std::vector<float>& bshd) {
    std::vector<float> out(bshd.size());
    for (size_t bb = 0; bb < 2; ++bb)
      for (size_t i = 0; i < 8; ++i)
        for (size_t x = 0; x < 16; ++x) out[(i * 2 + bb) * 16 + x] = bshd[(bb * 8 + i) * 16 + x];
    return out;
  };
  auto sbhd = [](float* data) {
    hcp_tensor t = tensor(data, {2, 8, 2, 8});
    t.strides[0] = 16, t.strides[1] = 32, t.strides[2] = 8, t.strides[3] = 1;
    return t;
  };
  const int64_t sizes[2] = {2, 1};
  for (hcp_cp_comm comm : {HCP_CP_COMM_P2P, HCP_CP_COMM_A2A, HCP_CP_COMM_A2A_P2P, HCP_CP_COMM_ALL_GATHER}) {
    hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
    o.cp = 2, o.cp_comm = comm;
    if (comm == HCP_CP_COMM_A2A_P2P) o.num_hcp_levels = 2, o.hcp_sizes = sizes;
    std::vector<float> out(256), lse(32), dq(256), dk(256), dv(256);
    hcp_tensor q = tensor(b.q.data(), {2, 8, 2, 8}), k = tensor(b.k.data(), {2, 8, 2, 8});
    hcp_tensor v = tensor(b.v.data(), {2, 8, 2, 8}), d = tensor(dout.data(), {2, 8, 2, 8});
    hcp_tensor to = tensor(out.data(), {2, 8, 2, 8}), tl = tensor(lse.data(), {2, 2, 8});
    hcp_tensor tdq = tensor(dq.data(), {2, 8, 2, 8}), tdk = tensor(dk.data(), {2, 8, 2, 8});
    hcp_tensor tdv = tensor(dv.data(), {2, 8, 2, 8});
    ASSERT_EQ(hcp_attn_simulate(&o, &q, &k, &v, &to, &tl, &d, &tdq, &tdk, &tdv), HCP_OK) << hcp_last_error();
    std::vector<float> sq = to_sbhd(b.q), sk = to_sbhd(b.k), sv = to_sbhd(b.v), sd = to_sbhd(dout);
    std::vector<float> sout(256), slse(32), sdq(256), sdk(256), sdv(256);
    hcp_tensor vq = sbhd(sq.data()), vk = sbhd(sk.data()), vv = sbhd(sv.data()), vd = sbhd(sd.data());
    hcp_tensor vo = sbhd(sout.data()), vl = tensor(slse.data(), {2, 2, 8});
    hcp_tensor vdq = sbhd(sdq.data()), vdk = sbhd(sdk.data()), vdv = sbhd(sdv.data());
    ASSERT_EQ(hcp_attn_simulate(&o, &vq, &vk, &vv, &vo, &vl, &vd, &vdq, &vdk, &vdv), HCP_OK) << hcp_last_error();
    EXPECT_EQ(slse, lse) << comm;
    for (const auto& [got, want] : {std::pair{&sout, &out}, {&sdq, &dq}, {&sdk, &dk}, {&sdv, &dv}})
      EXPECT_EQ(*got, to_sbhd(*want)) << comm;
  }
}

// Context options and the NCCL entry points: misuse gives documented statuses; on this machine's build and device
// the NCCL calls either work or say why not (never crash).
TEST(AttentionApi, ContextOptionsAndNcclMisuse) {
  hcp_world* world = nullptr;
  ASSERT_EQ(hcp_world_create(&world, 1, 2000), HCP_OK);
  hcp_comm* comm = nullptr;
  ASSERT_EQ(hcp_world_comm(&comm, world, 0), HCP_OK);
  hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
  config.world_size = 1, config.cp = 1;
  hcp_cp_context_options options = HCP_CP_CONTEXT_OPTIONS_INIT;
  options.device = 9;
  hcp_cp_context* ctx = nullptr;
  EXPECT_EQ(hcp_cp_context_create_with(&ctx, &config, comm, HCP_CP_COMM_P2P, &options), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  options = hcp_cp_context_options HCP_CP_CONTEXT_OPTIONS_INIT;
  options.struct_size = 4;
  EXPECT_EQ(hcp_cp_context_create_with(&ctx, &config, comm, HCP_CP_COMM_P2P, &options), HCP_ERR_INVALID_ARGUMENT);
  // A newer caller's larger struct: accepted while the fields this library does not know are zero.
  struct Newer {
    hcp_cp_context_options known;
    uint64_t unknown;
  } newer{hcp_cp_context_options HCP_CP_CONTEXT_OPTIONS_INIT, 1};
  newer.known.struct_size = sizeof(Newer);
  EXPECT_EQ(hcp_cp_context_create_with(&ctx, &config, comm, HCP_CP_COMM_P2P, &newer.known), HCP_ERR_UNSUPPORTED);
  newer.unknown = 0;
  ASSERT_EQ(hcp_cp_context_create_with(&ctx, &config, comm, HCP_CP_COMM_P2P, &newer.known), HCP_OK);
  hcp_cp_context_destroy(ctx);
  options = hcp_cp_context_options HCP_CP_CONTEXT_OPTIONS_INIT;
  ASSERT_EQ(hcp_cp_context_create_with(&ctx, &config, comm, HCP_CP_COMM_P2P, &options), HCP_OK);
  // A CPU context refuses CUDA tensors (or the build refuses them outright).
  Buffers b;
  hcp_tensor q = tensor(b.q.data(), {1, 16, 2, 8}), k = tensor(b.k.data(), {1, 16, 2, 8});
  hcp_tensor v = tensor(b.v.data(), {1, 16, 2, 8}), out = tensor(b.out.data(), {1, 16, 2, 8});
  hcp_tensor lse = tensor(b.lse.data(), {1, 2, 16});
  hcp_tensor all_cuda[5] = {q, k, v, out, lse};
  for (hcp_tensor& t : all_cuda) t.device = HCP_DEVICE_CUDA;
  const hcp_status s = hcp_attn_forward(ctx, nullptr, &all_cuda[0], &all_cuda[1], &all_cuda[2], &all_cuda[3],
                                        &all_cuda[4]);
  EXPECT_TRUE(s == HCP_ERR_UNSUPPORTED || s == HCP_ERR_INVALID_ARGUMENT) << s;
  EXPECT_EQ(hcp_attn_forward(ctx, nullptr, &q, &k, &v, &out, &lse), HCP_OK);
  hcp_cp_context_destroy(ctx);
  // World communicators are not the caller's to destroy: ignored, the world still works.
  hcp_comm_destroy(comm);
  hcp_comm_destroy(nullptr);
  ASSERT_EQ(hcp_cp_context_create(&ctx, &config, comm, HCP_CP_COMM_P2P), HCP_OK);
  hcp_cp_context_destroy(ctx);
  hcp_world_destroy(world);

  EXPECT_EQ(hcp_nccl_unique_id(nullptr), HCP_ERR_INVALID_ARGUMENT);
  uint8_t id[HCP_NCCL_UNIQUE_ID_BYTES] = {};
  hcp_comm* nccl = nullptr;
  EXPECT_EQ(hcp_comm_create_nccl(nullptr, id, 0, 1, nullptr, 1000), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_comm_create_nccl(&nccl, nullptr, 0, 1, nullptr, 1000), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_comm_create_nccl(&nccl, id, 0, 1, nullptr, -1), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_comm_wrap_nccl(&nccl, nullptr, nullptr, 1000), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_comm_wrap_nccl(nullptr, id, nullptr, 1000), HCP_ERR_INVALID_ARGUMENT);
  const hcp_status made = hcp_nccl_unique_id(id);
  if (made == HCP_OK) {  // a GPU: a one-rank NCCL communicator must work
    ASSERT_EQ(hcp_comm_create_nccl(&nccl, id, 0, 1, nullptr, 10000), HCP_OK);
    hcp_comm_destroy(nccl);
  } else {
    EXPECT_EQ(made, HCP_ERR_UNSUPPORTED) << hcp_last_error();
    EXPECT_EQ(hcp_comm_create_nccl(&nccl, id, 0, 1, nullptr, 1000), HCP_ERR_UNSUPPORTED);
    EXPECT_EQ(nccl, nullptr);
  }
}

}  // namespace

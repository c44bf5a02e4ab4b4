// Packed sequences and sliding windows through the C ABI (since 0.6): hcp_attn_simulate with documents equals
// separate runs of each document; the per-rank API on rows from hcp_packed_rank_indices equals the simulation;
// 0.2/0.3-sized option structs still work (no window, not packed); misuse gives documented statuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "hcp/hcp.h"
#include "host_tensor.hpp"

namespace {

using hcp::test::tensor;

constexpr int64_t kH = 2, kD = 8, kRow = kH * kD;

std::vector<float> values(int64_t rows, int seed) {
  std::vector<float> v(static_cast<size_t>(rows * kRow));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * (5 + seed)) % 13) / 13.0f - 0.5f;
  return v;
}

// Forward of the full [1, rows, 2, 8] tensors on `cp` in-process ranks with the given options.
hcp_status simulate(const hcp_attn_simulate_options& o, int64_t rows, const std::vector<float>& q,
                    std::vector<float>* out, std::vector<float>* lse) {
  out->assign(static_cast<size_t>(rows * kRow), 0);
  lse->assign(static_cast<size_t>(rows * kH), 0);
  hcp_tensor tq = tensor(const_cast<float*>(q.data()), {1, rows, kH, kD});
  hcp_tensor to = tensor(out->data(), {1, rows, kH, kD}), tl = tensor(lse->data(), {1, kH, rows});
  return hcp_attn_simulate(&o, &tq, &tq, &tq, &to, &tl, nullptr, nullptr, nullptr, nullptr);
}

TEST(PackedApi, DocumentsEqualSeparateRuns) {
  // Documents of 5 and 11 tokens padded to 8 and 12 for cp 2.
  const int64_t cu[] = {0, 5, 16}, padded[] = {0, 8, 20};
  const std::vector<float> q = values(20, 1);
  for (hcp_cp_comm comm : {HCP_CP_COMM_P2P, HCP_CP_COMM_A2A, HCP_CP_COMM_ALL_GATHER}) {
    hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
    o.cp = 2, o.cp_comm = comm, o.num_sequences = 2, o.cu_seqlens = cu, o.cu_seqlens_padded = padded;
    o.sliding_window = 1, o.window_left = 3, o.window_right = 0;
    std::vector<float> out, lse;
    ASSERT_EQ(simulate(o, 20, q, &out, &lse), HCP_OK) << hcp_last_error();
    for (int doc = 0; doc < 2; ++doc) {
      const int64_t start = padded[doc], len = cu[doc + 1] - cu[doc];
      // The document alone: a packed batch of one document with the same padding.
      const int64_t one_cu[] = {0, len}, one_padded[] = {0, padded[doc + 1] - start};
      std::vector<float> alone_q(q.begin() + start * kRow, q.begin() + padded[doc + 1] * kRow);
      hcp_attn_simulate_options a = o;
      a.num_sequences = 1, a.cu_seqlens = one_cu, a.cu_seqlens_padded = one_padded;
      std::vector<float> alone, alone_lse;
      ASSERT_EQ(simulate(a, one_padded[1], alone_q, &alone, &alone_lse), HCP_OK) << hcp_last_error();
      for (int64_t i = 0; i < one_padded[1] * kRow; ++i)
        EXPECT_NEAR(out[static_cast<size_t>(start * kRow + i)], alone[static_cast<size_t>(i)], 1e-6f);
      // Padding rows: no key, out 0 and lse -inf.
      for (int64_t i = len; i < one_padded[1]; ++i) {
        EXPECT_EQ(alone[static_cast<size_t>(i * kRow)], 0.0f);
        EXPECT_TRUE(std::isinf(alone_lse[static_cast<size_t>(i)]));
      }
    }
  }
}

TEST(PackedApi, PerRankRowsFromTheIndicesEqualSimulate) {
  const int64_t cu[] = {0, 7, 10}, padded[] = {0, 8, 12};
  const std::vector<float> q = values(12, 2);
  hcp_attn_simulate_options so = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  so.cp = 2, so.num_sequences = 2, so.cu_seqlens = cu, so.cu_seqlens_padded = padded;
  std::vector<float> full, full_lse;
  ASSERT_EQ(simulate(so, 12, q, &full, &full_lse), HCP_OK) << hcp_last_error();
  hcp_world* world = nullptr;
  ASSERT_EQ(hcp_world_create(&world, 2, 20000), HCP_OK);
  std::vector<std::vector<int64_t>> rows(2, std::vector<int64_t>(6));
  std::vector<std::vector<float>> outs(2, std::vector<float>(6 * kRow));
  std::vector<hcp_status> status(2, HCP_ERR_INTERNAL);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      int64_t count = 0;
      if ((status[r] = hcp_packed_rank_indices(cu, padded, 2, 2, r, rows[r].data(), 6, &count)) != HCP_OK) return;
      hcp_comm* comm = nullptr;
      if ((status[r] = hcp_world_comm(&comm, world, r)) != HCP_OK) return;
      hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
      config.world_size = 2, config.cp = 2;
      hcp_cp_context* ctx = nullptr;
      if ((status[r] = hcp_cp_context_create(&ctx, &config, comm, HCP_CP_COMM_P2P)) != HCP_OK) return;
      std::vector<float> mine;
      for (int64_t i : rows[r]) mine.insert(mine.end(), q.begin() + i * kRow, q.begin() + (i + 1) * kRow);
      std::vector<float> lse(6 * kH);
      hcp_tensor tq = tensor(mine.data(), {1, 6, kH, kD}), to = tensor(outs[r].data(), {1, 6, kH, kD});
      hcp_tensor tl = tensor(lse.data(), {1, kH, 6});
      hcp_attn_options opts = HCP_ATTN_OPTIONS_INIT;
      opts.num_sequences = 2, opts.cu_seqlens = cu, opts.cu_seqlens_padded = padded;
      status[r] = hcp_attn_forward(ctx, &opts, &tq, &tq, &tq, &to, &tl);
      hcp_cp_context_destroy(ctx);
    });
  for (auto& t : threads) t.join();
  hcp_world_destroy(world);
  EXPECT_EQ(rows[0], (std::vector<int64_t>{0, 1, 6, 7, 8, 11}));
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(status[r], HCP_OK) << r;
    for (size_t li = 0; li < 6; ++li)
      for (int64_t x = 0; x < kRow; ++x)
        EXPECT_NEAR(outs[r][li * kRow + static_cast<size_t>(x)], full[static_cast<size_t>(rows[r][li] * kRow + x)],
                    1e-6f);
  }
}

TEST(PackedApi, OlderStructsAndMisuse) {
  const std::vector<float> q = values(16, 3);
  std::vector<float> out, lse, old_out;
  hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  o.cp = 2;
  ASSERT_EQ(simulate(o, 16, q, &out, &lse), HCP_OK);
  hcp_attn_simulate_options old = o;
  old.struct_size = offsetof(hcp_attn_simulate_options, sliding_window);  // a 0.3 caller
  old.sliding_window = 1, old.window_left = 0;  // beyond its size: never read
  ASSERT_EQ(simulate(old, 16, q, &old_out, &lse), HCP_OK) << hcp_last_error();
  EXPECT_EQ(out, old_out);
  EXPECT_EQ(offsetof(hcp_attn_options, sliding_window), 24u);  // the 0.2 size, unchanged

  hcp_attn_simulate_options bad = o;
  bad.sliding_window = 2;
  EXPECT_EQ(simulate(bad, 16, q, &out, &lse), HCP_ERR_INVALID_ARGUMENT);
  bad = o, bad.sliding_window = 1, bad.window_left = -2;
  EXPECT_EQ(simulate(bad, 16, q, &out, &lse), HCP_ERR_INVALID_ARGUMENT);
  const int64_t cu[] = {0, 7, 16};
  bad = o, bad.num_sequences = 2;  // cu_seqlens NULL
  EXPECT_EQ(simulate(bad, 16, q, &out, &lse), HCP_ERR_INVALID_ARGUMENT);
  bad = o, bad.cu_seqlens = cu;  // with num_sequences 0
  EXPECT_EQ(simulate(bad, 16, q, &out, &lse), HCP_ERR_INVALID_ARGUMENT);
  bad = o, bad.num_sequences = 2, bad.cu_seqlens = cu;  // 7 tokens do not split into 4 chunks
  EXPECT_EQ(simulate(bad, 16, q, &out, &lse), HCP_ERR_SHAPE);
  EXPECT_NE(std::string(hcp_last_error()).find("not divisible by 2 x cp"), std::string::npos) << hcp_last_error();
  const int64_t cu_ok[] = {0, 8, 12};
  bad = o, bad.num_sequences = 2, bad.cu_seqlens = cu_ok;  // 12 padded tokens, q has 16
  EXPECT_EQ(simulate(bad, 16, q, &out, &lse), HCP_ERR_SHAPE);

  int64_t idx[8], count = -1;
  EXPECT_EQ(hcp_packed_rank_indices(cu, nullptr, 2, 2, 0, idx, 8, &count), HCP_ERR_SHAPE);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(hcp_packed_rank_indices(cu_ok, nullptr, 2, 2, 0, idx, 5, &count), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_packed_rank_indices(cu_ok, nullptr, 2, 2, 2, idx, 8, &count), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_packed_rank_indices(nullptr, nullptr, 2, 2, 0, idx, 8, &count), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_packed_rank_indices(cu_ok, nullptr, 2, 2, 1, idx, 8, &count), HCP_OK);
  EXPECT_EQ(count, 6);
}

}  // namespace

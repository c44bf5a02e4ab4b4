// The block emulator's warp instructions (runtime/src/attention/cuda/emulation/warp_emulation.hpp) against the PTX
// ISA's definitions, written here independently of the emulator: the mma.m16n8k16 fragments as the element lists
// of the ISA (a0..a7, b0..b3, c0..c3), ldmatrix as "lanes 8i..8i+7 address matrix i", cp.async as a copy that
// lands at the wait, and the xor shuffle. The flash kernels' tests trust these; these trust the ISA text.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../../runtime/src/attention/cuda/warp_ops.cuh"

namespace hcp::emu {
namespace {

using E = ElemBf16;

// Small integers: exact in bf16, and their products and sums exact in fp32, so results compare with ==.
float a_value(int row, int col) { return static_cast<float>((row * 7 + col * 3) % 11 - 5); }
float b_value(int k, int n) { return static_cast<float>((k * 5 + n * 9) % 13 - 6); }

// The ISA's fragment of A for this lane, element i = 0..7, packed two per register (low first).
void a_fragment(int lane, uint32_t (&a)[4]) {
  const int group = lane >> 2, tig = lane % 4;
  float e[8];
  for (int i = 0; i < 8; ++i) {
    const int row = (i < 2 || (i >= 4 && i < 6)) ? group : group + 8;
    const int col = tig * 2 + (i & 1) + (i >= 4 ? 8 : 0);
    e[i] = a_value(row, col);
  }
  for (int r = 0; r < 4; ++r) a[r] = E::pack2(e[2 * r], e[2 * r + 1]);
}

// The ISA's fragment of B (16 x 8, columns n0 .. n0 + 7 of b_value), elements b0..b3.
void b_fragment(int lane, int n0, uint32_t (&b)[2]) {
  const int group = lane >> 2, tig = lane % 4;
  float e[4];
  for (int i = 0; i < 4; ++i) e[i] = b_value(tig * 2 + (i & 1) + (i >= 2 ? 8 : 0), n0 + group);
  b[0] = E::pack2(e[0], e[1]);
  b[1] = E::pack2(e[2], e[3]);
}

// Runs body(lane) on the 32 threads of one emulated warp.
template <class Fn>
void one_warp(Fn body) {
  launch({1, 1, 1}, 32, 0, [&](const BlockCtx& ctx, int, int, int, char*) { body(ctx.tid()); });
}

TEST(WarpEmulation, MmaComputesTheProductInTheIsaLayouts) {
  std::vector<float> got(32 * 4);
  one_warp([&](int lane) {
    uint32_t a[4], b[2];
    a_fragment(lane, a);
    b_fragment(lane, 0, b);
    float d[4] = {1, 2, 3, 4};  // C: accumulated into
    mma_16816<E>(d, a, b[0], b[1]);
    std::memcpy(&got[static_cast<size_t>(lane) * 4], d, sizeof d);
  });
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {  // c_i: row groupID (+8 for i >= 2), column 2 threadID_in_group + (i & 1)
      const int row = lane / 4 + (i >= 2 ? 8 : 0), col = 2 * (lane % 4) + (i & 1);
      float want = static_cast<float>(i + 1);
      for (int k = 0; k < 16; ++k) want += a_value(row, k) * b_value(k, col);
      EXPECT_EQ(got[static_cast<size_t>(lane) * 4 + i], want) << "lane " << lane << " c" << i;
    }
}

// Shared memory tiles with a row pad, as the kernels use them: A row-major, B as [n][k] (as K is stored) and as
// [k][n] (as V is stored).
struct Tiles {
  static constexpr int ld = 24;
  alignas(16) uint16_t a[16 * ld], b_nk[16 * ld], b_kn[16 * ld];
  Tiles() {
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c) {
        a[r * ld + c] = static_cast<uint16_t>(E::pack2(a_value(r, c), 0) & 0xffff);
        b_nk[c * ld + r] = static_cast<uint16_t>(E::pack2(b_value(r, c), 0) & 0xffff);  // (k r, n c)
        b_kn[r * ld + c] = b_nk[c * ld + r];
      }
  }
};

TEST(WarpEmulation, LdmatrixLoadsTheIsaFragments) {
  Tiles tiles;
  std::vector<int> mismatches(32, 0);
  one_warp([&](int lane) {
    uint32_t want_a[4], want_b0[2], want_b1[2];
    a_fragment(lane, want_a);
    b_fragment(lane, 0, want_b0);
    b_fragment(lane, 8, want_b1);
    const int m = lane / 8, r = lane % 8;  // this lane addresses row r of matrix m
    uint32_t got[4];
    // A: matrices (rows 0-7, cols 0-7), (rows 8-15, cols 0-7), (rows 0-7, cols 8-15), (rows 8-15, cols 8-15).
    ldmatrix_x4(got, smem_addr_of(&tiles.a[(r + 8 * (m % 2)) * Tiles::ld + 8 * (m / 2)]));
    for (int i = 0; i < 4; ++i) mismatches[lane] += got[i] != want_a[i];
    // B from [n][k]: matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
    ldmatrix_x4(got, smem_addr_of(&tiles.b_nk[(r + 8 * (m / 2)) * Tiles::ld + 8 * (m % 2)]));
    mismatches[lane] += (got[0] != want_b0[0]) + (got[1] != want_b0[1]) + (got[2] != want_b1[0]) +
                        (got[3] != want_b1[1]);
    // B from [k][n], transposed: matrices (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
    ldmatrix_x4_trans(got, smem_addr_of(&tiles.b_kn[(r + 8 * (m % 2)) * Tiles::ld + 8 * (m / 2)]));
    mismatches[lane] += (got[0] != want_b0[0]) + (got[1] != want_b0[1]) + (got[2] != want_b1[0]) +
                        (got[3] != want_b1[1]);
  });
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(mismatches[lane], 0) << "lane " << lane;
}

TEST(WarpEmulation, ShflXorReadsThePartnerLane) {
  std::vector<float> got(32);
  one_warp([&](int lane) { got[lane] = shfl_xor(static_cast<float>(lane), 5); });
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(got[lane], static_cast<float>(lane ^ 5));
}

TEST(WarpEmulation, CpAsyncLandsWhenItsGroupIsWaitedFor) {
  alignas(16) unsigned char src[32], dst[48];
  for (int i = 0; i < 32; ++i) src[i] = static_cast<unsigned char>(i + 1);
  std::memset(dst, 0xee, sizeof dst);
  std::vector<int> seen;
  launch({1, 1, 1}, 1, 0, [&](const BlockCtx&, int, int, int, char*) {
    cp_async_16(dst, src, true);
    cp_async_commit();
    cp_async_16(dst + 16, src + 16, true);
    cp_async_16(dst + 32, src, false);  // zero fill
    cp_async_commit();
    seen.push_back(dst[0]);
    cp_async_wait<1>();  // the first group only
    seen.push_back(dst[0]), seen.push_back(dst[16]), seen.push_back(dst[32]);
    cp_async_wait<0>();
    seen.push_back(dst[16]), seen.push_back(dst[32]);
  });
  EXPECT_EQ(seen, (std::vector<int>{0xee, 1, 0xee, 0xee, 17, 0}));
}

TEST(WarpEmulationDeathTest, MisalignedAddressesTrap) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  alignas(16) unsigned char buf[64] = {};
  EXPECT_DEATH(launch({1, 1, 1}, 1, 0, [&](const BlockCtx&, int, int, int, char*) { cp_async_16(buf + 8, buf, true); }),
               "not 16-byte aligned");
  EXPECT_DEATH(one_warp([&](int) {
                 uint32_t r[4];
                 ldmatrix_x4(r, smem_addr_of(buf + 2));
               }),
               "ldmatrix: row address not 16-byte aligned");
}

// A warp instruction needs the lane of an emulated thread: outside a launched block there is none.
TEST(WarpEmulationDeathTest, AWarpInstructionOutsideABlockAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)shfl_xor(1.0f, 1), "a warp instruction outside a launched block");
}

}  // namespace
}  // namespace hcp::emu

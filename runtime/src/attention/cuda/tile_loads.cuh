// Helpers both flash kernels use: rows of a tensor into padded shared memory by cp.async, and the clamp that lets
// masks compare small int offsets instead of 64-bit positions.
#pragma once

#include <cstdint>

#include "kernel_env.cuh"
#include "warp_ops.cuh"

namespace hcp::kern {

// Rows [row0, row0 + Rows) of a slice with row stride `stride` (elements) into shared memory [Rows][D + 8], 16
// bytes per cp.async; rows at or past `limit`, padding rows (segment < 0 in `seg`, the rows' labels when the
// call has them), and the columns from `cols` on (a tensor whose head dim, a multiple of 8, is below the kernel's
// D: cuda_kernel_head_dim) are zero-filled and not read: a packed batch's padding is often uninitialised memory, and a NaN
// read there would reach real rows through the products' zero weights (0 x NaN = NaN). A thread copies the same
// 16-byte column of every kThreads / (D / 8)-th row, so its addresses step by a constant.
template <class T, int D, int Rows>
HCP_KFN void load_rows_async(const BlockCtx& ctx, T* dst, const T* src, int64_t stride, int64_t row0,
                             int64_t limit, const int32_t* seg, int64_t cols) {
  constexpr int kChunks = D / 8;
  constexpr int kRowsPerPass = kThreads / kChunks;
  static_assert(kThreads % kChunks == 0 && Rows % kRowsPerPass == 0, "every thread copies whole passes");
  const int r0 = ctx.tid() / kChunks, c = ctx.tid() % kChunks * 8;
  const int rows = static_cast<int>(limit - row0 <= 0 ? 0 : (limit - row0 < Rows ? limit - row0 : Rows));
  const T* from = src + (row0 + r0) * stride + c;
  const int64_t pass_stride = kRowsPerPass * stride;
  HCP_UNROLL
  for (int it = 0; it < Rows / kRowsPerPass; ++it) {
    const int r = r0 + it * kRowsPerPass;
    const bool read = r < rows && c < cols && (seg == nullptr || seg[row0 + r] >= 0);
    cp_async_16(dst + r * (D + 8) + c, read ? from + it * pass_stride : src, read);
  }
}

// A distance between a lane's key and a bound, clamped into int where comparisons with offsets below 256 keep
// their result.
HCP_KFN int clamp_room(int64_t room) { return static_cast<int>(room < -256 ? -256 : (room > 256 ? 256 : room)); }

}  // namespace hcp::kern

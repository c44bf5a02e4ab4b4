// The warp-level instructions of the FlashAttention-2 style kernels (flash_forward.cuh), as one set of names for
// nvcc and for the block emulator: mma.sync m16n8k16 (bf16 / fp16 in, fp32 accumulate), ldmatrix x4 (plain and
// transposed), 16-byte cp.async with zero fill and its commit / wait, and the xor shuffle. Unlike WMMA, these
// instructions fix which lane holds which element (PTX ISA, "Matrix Fragments for mma.m16n8k16"), so the kernels
// keep accumulators in registers and run the softmax on them; the emulator implements the same layouts.
//
// Fragments of a 16 x 8 x 16 product, per lane, with g = lane / 4 and t = lane % 4 (pairs are packed low to high):
//   A (16 x 16, row major): a[0] = (g, 2t..2t+1), a[1] = (g+8, 2t..), a[2] = (g, 2t+8..), a[3] = (g+8, 2t+8..)
//   B (16 x 8, k x n):      b[0] = (k 2t..2t+1, n g), b[1] = (k 2t+8..2t+9, n g)
//   C (16 x 8, f32):        c[0..1] = (g, 2t..2t+1), c[2..3] = (g+8, 2t..2t+1)
#pragma once

#include <cstdint>

#include "kernel_env.cuh"

#if defined(__CUDACC__)

namespace hcp::kern {

// d += a * b for one 16 x 8 x 16 tile; E picks the bf16 or fp16 instruction.
template <class E>
HCP_KFN void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (E::is_bf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

HCP_KFN uint32_t smem_address(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// A byte address in shared memory: 32 bits in the shared window, where a generic pointer would take two registers.
using SmemAddr = uint32_t;
HCP_KFN SmemAddr smem_addr_of(const void* p) { return smem_address(p); }

// Four 8 x 8 matrices of 16-bit elements: lanes 8i..8i+7 give the row addresses of matrix i (16-byte aligned), and
// r[i] receives row lane / 4, elements 2 (lane % 4) and 2 (lane % 4) + 1 of it.
HCP_KFN void ldmatrix_x4(uint32_t (&r)[4], SmemAddr row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row));
}

// The same, transposed: r[i] receives elements (2 (lane % 4), lane / 4) and (2 (lane % 4) + 1, lane / 4).
HCP_KFN void ldmatrix_x4_trans(uint32_t (&r)[4], SmemAddr row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row));
}

// 16 bytes from global to shared memory, asynchronously; zeros instead when !valid (src is then not read).
HCP_KFN void cp_async_16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}

HCP_KFN void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of this thread's committed groups are still in flight. The memory clobber keeps the
// compiler from moving shared memory reads above the wait.
template <int N>
HCP_KFN void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

HCP_KFN float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }

}  // namespace hcp::kern

#else
#include "emulation/warp_emulation.hpp"

namespace hcp::kern {
using hcp::emu::cp_async_16;
using hcp::emu::cp_async_commit;
using hcp::emu::cp_async_wait;
using hcp::emu::ldmatrix_x4;
using hcp::emu::ldmatrix_x4_trans;
using hcp::emu::mma_16816;
using hcp::emu::shfl_xor;
using hcp::emu::smem_addr_of;
using hcp::emu::SmemAddr;
}  // namespace hcp::kern
#endif

namespace hcp::kern {

// Zeroes N C fragments (accumulators before their first product).
template <int N>
HCP_KFN void zero_tiles(float (&c)[N][4]) {
  HCP_UNROLL
  for (int n = 0; n < N; ++n)
    HCP_UNROLL
    for (int i = 0; i < 4; ++i) c[n][i] = 0.0f;
}

// Two 16 x 8 products side by side: b holds both B tiles as one ldmatrix_x4 loads them (b[0..1], then b[2..3]).
template <class E>
HCP_KFN void mma_16816_x2(float (&d0)[4], float (&d1)[4], const uint32_t (&a)[4], const uint32_t (&b)[4]) {
  mma_16816<E>(d0, a, b[0], b[1]);
  mma_16816<E>(d1, a, b[2], b[3]);
}

// The A fragment of a 16 x 16 operand from the C fragments of its two 16 x 8 halves (columns 0-7, then 8-15),
// rounded to E: the layouts line up, so a product's result feeds the next product without leaving registers.
template <class E>
HCP_KFN void pack_a(uint32_t (&a)[4], const float (&c0)[4], const float (&c1)[4]) {
  a[0] = E::pack2(c0[0], c0[1]);
  a[1] = E::pack2(c0[2], c0[3]);
  a[2] = E::pack2(c1[0], c1[1]);
  a[3] = E::pack2(c1[2], c1[3]);
}

// Writes an A fragment (16 x 16, 16-bit, as pairs) into a row-major array of Ld elements per row. `pairs` is this
// lane's first pair in the tile: row g, columns 2t and 2t + 1 of it (lane = 4g + t); the lane also holds row g + 8
// and columns 2t + 8 and 2t + 9 (see the layouts above).
template <int Ld>
HCP_KFN void store_a(uint32_t* pairs, const uint32_t (&a)[4]) {
  static_assert(Ld % 2 == 0, "pairs aligned");
  pairs[0] = a[0], pairs[4 * Ld] = a[1], pairs[4] = a[2], pairs[4 * Ld + 4] = a[3];
}

}  // namespace hcp::kern

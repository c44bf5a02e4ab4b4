// One source, two compilers. The flash attention block functions (flash_*.cuh) are compiled by nvcc for the GPU
// and by the host compiler for the block emulator (emulation/), which runs each block's threads as fibers of a host
// thread so that tests check every index, mask and softmax step on machines without a GPU. This header is the
// switch: the same names (element traits, BlockCtx, atomic_add, exp2/log2) for both; warp_ops.cuh does the same for
// the warp instructions.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define HCP_KFN __device__ __forceinline__
// Loops over fragment arrays must unroll, or the arrays leave registers.
#define HCP_UNROLL _Pragma("unroll")

namespace hcp::kern {

// pack2: two values rounded to the type, packed low to high into the 32-bit register the mma instructions take.
struct ElemBf16 {
  using type = __nv_bfloat16;
  static constexpr bool is_bf16 = true;
  static __device__ __forceinline__ type from_float(float x) { return __float2bfloat16_rn(x); }
  static __device__ __forceinline__ float to_float(type x) { return __bfloat162float(x); }
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
};
struct ElemF16 {
  using type = __half;
  static constexpr bool is_bf16 = false;
  static __device__ __forceinline__ type from_float(float x) { return __float2half_rn(x); }
  static __device__ __forceinline__ float to_float(type x) { return __half2float(x); }
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&v);
  }
};

struct BlockCtx {
  __device__ __forceinline__ int tid() const { return static_cast<int>(threadIdx.x); }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
};

HCP_KFN void atomic_add(float* address, float value) { atomicAdd(address, value); }
// The hardware approximations (relative error about 2^-22), flushing denormals: exp2f and log2f without
// --use_fast_math add instructions for denormal results, on the softmax's hottest line. ex2(-inf) = +0.
HCP_KFN float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
HCP_KFN float fast_log2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
}  // namespace hcp::kern

#else
#include "emulation/block_emulator.hpp"

#define HCP_KFN inline
#define HCP_UNROLL

namespace hcp::kern {
using hcp::emu::atomic_add;
using hcp::emu::BlockCtx;
using hcp::emu::ElemBf16;
using hcp::emu::ElemF16;
inline float fast_exp2(float x) { return std::exp2(x); }
inline float fast_log2(float x) { return std::log2(x); }
}  // namespace hcp::kern
#endif

namespace hcp::kern {

// Every block function runs 4 warps.
constexpr int kThreads = 128;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

}  // namespace hcp::kern

// Runs CUDA-style thread blocks on the host, so the flash attention block functions (../flash_*.cuh) can be
// executed and checked on machines without a GPU. Each block's threads are fibers of the launching host thread
// (fibers.hpp); __syncthreads is a barrier over the block, and each warp has its own for the warp instructions
// (warp_emulation.hpp). Shared memory is filled with NaN bytes before every block, so a read of shared memory
// nobody wrote shows up in the results.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../cpu/bf16.hpp"
#include "../../cpu/half.hpp"
#include "warp_emulation.hpp"

namespace hcp::emu {

struct bf16 {
  uint16_t bits;
};
struct f16 {
  uint16_t bits;
};

struct ElemBf16 {
  using type = bf16;
  static constexpr bool is_bf16 = true;
  static type from_float(float x) { return {cpu::float_to_bf16(x)}; }
  static float to_float(type x) { return cpu::bf16_to_float(x.bits); }
  static uint32_t pack2(float lo, float hi) { return cpu::float_to_bf16(lo) | uint32_t{cpu::float_to_bf16(hi)} << 16; }
};
struct ElemF16 {
  using type = f16;
  static constexpr bool is_bf16 = false;
  static type from_float(float x) { return {cpu::float_to_f16(x)}; }
  static float to_float(type x) { return cpu::f16_to_float(x.bits); }
  static uint32_t pack2(float lo, float hi) { return cpu::float_to_f16(lo) | uint32_t{cpu::float_to_f16(hi)} << 16; }
};

class BlockCtx {
 public:
  BlockCtx(int tid, FiberBarrier* barrier) : tid_(tid), barrier_(barrier) {}
  int tid() const { return tid_; }
  void sync() const { barrier_->arrive_and_wait(); }

 private:
  int tid_;
  FiberBarrier* barrier_;
};

// Atomic as atomicAdd is: the threads of one block take turns on one host thread, but launches on other host
// threads (each emulated stream has its own) may run at the same time.
inline void atomic_add(float* address, float value) {
  std::atomic_ref<float>(*address).fetch_add(value, std::memory_order_relaxed);
}

struct Grid {
  int64_t x = 1, y = 1, z = 1;
};

// Calls fn(ctx, bx, by, bz, smem) for every block of `grid` on `threads` emulated threads, one block after another.
template <class Fn>
void launch(Grid grid, int threads, size_t smem_bytes, Fn fn) {
  FiberBarrier barrier(threads);
  std::vector<WarpState> warps(static_cast<size_t>((threads + 31) / 32));
  std::vector<ThreadState> states(static_cast<size_t>(threads));
  std::vector<unsigned char> storage(smem_bytes + 128);
  auto* smem = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(storage.data()) + 127) & ~uintptr_t{127});
  auto body = [&](int tid) {
    ThreadState& me = states[static_cast<size_t>(tid)];
    me.lane = tid % 32;
    me.warp = &warps[static_cast<size_t>(tid / 32)];
    const BlockCtx ctx(tid, &barrier);
    for (int64_t bz = 0; bz < grid.z; ++bz)
      for (int64_t by = 0; by < grid.y; ++by)
        for (int64_t bx = 0; bx < grid.x; ++bx) {
          if (tid == 0) std::memset(smem, 0xff, smem_bytes);
          begin_block();
          barrier.arrive_and_wait();
          fn(ctx, static_cast<int>(bx), static_cast<int>(by), static_cast<int>(bz), smem);
          barrier.arrive_and_wait();
        }
  };
  ThreadState* const outer = block_threads;
  block_threads = states.data();
  run_fibers(threads, body);
  block_threads = outer;
}

}  // namespace hcp::emu

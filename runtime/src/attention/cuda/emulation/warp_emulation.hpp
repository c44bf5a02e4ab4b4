// The warp-level instructions of ../warp_ops.cuh on the host, for the block emulator. Each lane is a fiber
// (fibers.hpp); a collective instruction is one step of the warp's barrier: every lane publishes its operands in the
// warp's exchange slots, then every lane computes its own result from the slots, with the lane layouts of the PTX
// ISA. So a kernel that assumes a wrong layout, reads a register its lane does not hold, or calls a collective from
// a divergent branch (a deadlock, which aborts here) fails on the host as it would on a GPU.
//
// cp.async is emulated as what makes it hard to use: the copy happens when the issuing thread waits for its group
// (cp_async_wait), not when it is issued. A kernel that reads shared memory before waiting for it, or before the
// barrier that publishes the other threads' copies, reads stale data - the NaN bytes of the emulator's fresh shared
// memory, or the previous tile. Misaligned addresses, which trap on a GPU, abort.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "fibers.hpp"

namespace hcp::emu {

struct WarpLane {
  uint32_t a[4];
  uint32_t b[2];
  const void* row;
  float value;
};

// What the 32 lanes of one warp share: the exchange slots of the collectives and the barrier that steps them. Two
// sets of slots alternate, so one barrier per collective is enough: a lane that runs ahead into the next
// collective writes the other set, and it cannot pass that collective's barrier - and come back to this set -
// before every lane has finished reading this one.
struct WarpState {
  FiberBarrier barrier{32};
  WarpLane lanes[2][32];
};

struct AsyncCopy {
  char* dst;
  const char* src;
  bool valid;
};

// The emulated thread: its lane, its warp, and its cp.async copies not yet performed (issued, then committed).
struct ThreadState {
  int lane = 0;
  WarpState* warp = nullptr;
  unsigned round = 0;  // collectives this thread has run in the block
  std::vector<AsyncCopy> issued;
  std::deque<std::vector<AsyncCopy>> committed;
};
// The threads of the block this host thread emulates now (launch sets it), indexed by fiber.
inline thread_local ThreadState* block_threads = nullptr;
inline ThreadState& this_thread() {
  if (block_threads == nullptr) fault("a warp instruction outside a launched block");
  return block_threads[current_fiber()];
}

inline void require_aligned16(const void* p, const char* what) {
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) fault(what);
}

// Publishes through this round's exchange slots: fills this lane's slot, waits for the warp, returns all 32.
template <class Fill>
WarpLane* publish(Fill fill) {
  ThreadState& ts = this_thread();
  WarpLane* lanes = ts.warp->lanes[ts.round++ % 2];
  fill(lanes[ts.lane]);
  ts.warp->barrier.arrive_and_wait();
  return lanes;
}

// Element `half` (0 low, 1 high) of a packed register, as float.
template <class E>
float unpack(uint32_t reg, int half) {
  return E::to_float(typename E::type{static_cast<uint16_t>(half ? reg >> 16 : reg & 0xffffu)});
}

template <class E>
void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  const WarpLane* lanes = publish([&](WarpLane& me) {
    std::memcpy(me.a, a, sizeof me.a);
    me.b[0] = b0, me.b[1] = b1;
  });
  // A(row, k) lives in lane 4 (row % 8) + (k % 8) / 2, register (row >= 8) + 2 (k >= 8), half k % 2;
  // B(k, n) in lane 4 n + (k % 8) / 2, register k >= 8, half k % 2.
  auto a_at = [&](int row, int k) {
    return unpack<E>(lanes[4 * (row % 8) + (k % 8) / 2].a[(row >= 8) + 2 * (k >= 8)], k % 2);
  };
  auto b_at = [&](int k, int n) { return unpack<E>(lanes[4 * n + (k % 8) / 2].b[k >= 8], k % 2); };
  const int g = this_thread().lane / 4, t = this_thread().lane % 4;
  for (int i = 0; i < 4; ++i) {  // C is this lane's own: d accumulates in place
    const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i % 2);
    for (int k = 0; k < 16; ++k) d[i] += a_at(row, k) * b_at(k, col);
  }
}

inline uint16_t b16_at(const void* row, int index) {
  uint16_t v;
  std::memcpy(&v, static_cast<const char*>(row) + 2 * index, 2);
  return v;
}

// A byte address in shared memory (a 32-bit offset on the GPU).
using SmemAddr = const char*;
inline SmemAddr smem_addr_of(const void* p) { return static_cast<const char*>(p); }

inline void ldmatrix_x4_impl(uint32_t (&r)[4], const void* row, bool trans) {
  require_aligned16(row, "ldmatrix: row address not 16-byte aligned");
  const WarpLane* lanes = publish([&](WarpLane& me) { me.row = row; });
  const int g = this_thread().lane / 4, t = this_thread().lane % 4;
  for (int i = 0; i < 4; ++i) {
    uint16_t lo, hi;
    if (trans) {  // column g of matrix i, rows 2t and 2t + 1
      lo = b16_at(lanes[8 * i + 2 * t].row, g);
      hi = b16_at(lanes[8 * i + 2 * t + 1].row, g);
    } else {  // row g of matrix i, columns 2t and 2t + 1
      lo = b16_at(lanes[8 * i + g].row, 2 * t);
      hi = b16_at(lanes[8 * i + g].row, 2 * t + 1);
    }
    r[i] = lo | uint32_t{hi} << 16;
  }
}

inline void ldmatrix_x4(uint32_t (&r)[4], const void* row) { ldmatrix_x4_impl(r, row, false); }
inline void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) { ldmatrix_x4_impl(r, row, true); }

inline float shfl_xor(float v, int mask) {
  return publish([&](WarpLane& me) { me.value = v; })[this_thread().lane ^ mask].value;
}

inline void cp_async_16(void* dst, const void* src, bool valid) {
  require_aligned16(dst, "cp.async: shared memory address not 16-byte aligned");
  if (valid) require_aligned16(src, "cp.async: global memory address not 16-byte aligned");
  this_thread().issued.push_back({static_cast<char*>(dst), static_cast<const char*>(src), valid});
}

inline void cp_async_commit() {
  ThreadState& ts = this_thread();
  ts.committed.push_back(std::move(ts.issued));
  ts.issued.clear();
}

template <int N>
void cp_async_wait() {
  ThreadState& ts = this_thread();
  while (ts.committed.size() > static_cast<size_t>(N)) {
    for (const AsyncCopy& c : ts.committed.front()) {
      if (c.valid)
        std::memcpy(c.dst, c.src, 16);
      else
        std::memset(c.dst, 0, 16);
    }
    ts.committed.pop_front();
  }
}

// A new block: copies a thread left in flight belonged to the previous block's shared memory.
inline void begin_block() {
  ThreadState& ts = this_thread();
  ts.round = 0;
  ts.issued.clear();
  ts.committed.clear();
}

}  // namespace hcp::emu

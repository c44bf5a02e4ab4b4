// The labelled mask of AttnParams (packed sequences, CP chunks in any order, sliding windows) in the CUDA block
// functions, as the CPU kernels define it (cpu/label_mask.hpp): a key is visible to a query iff both have the same
// segment >= 0 and pos(query) - pos(key) lies in the distance range of the causal flag and the window. Labelled
// calls run the kernels' no-diagonal instances (the labels carry causality), mask every element from the labels,
// and let a warp skip the products of a step in which none of its elements is visible.
#pragma once

#include <cstdint>

#include "hcp/attention_params.hpp"
#include "kernel_env.cuh"
#include "warp_ops.cuh"

namespace hcp::kern {

#if defined(__CUDACC__)
#define HCP_LABEL_FN __host__ __device__ __forceinline__
#else
#define HCP_LABEL_FN inline
#endif

HCP_LABEL_FN bool label_masked(const AttnParams& p) {
  return p.q_labels.seg != nullptr || p.window_left >= 0 || p.window_right >= 0;
}

// Whether the kernels' compile-time diagonal mask applies (plain causal); labelled calls carry causality in labels.
HCP_LABEL_FN bool diagonal_mask(const AttnParams& p) { return p.causal && !label_masked(p); }

struct LabelDist {
  int64_t lo, hi;  // allowed pos(query) - pos(key)
};

HCP_KFN LabelDist label_dist(const AttnParams& p) {
  LabelDist d{-(int64_t{1} << 62), int64_t{1} << 62};
  if (p.causal) d.lo = 0;
  if (p.window_right >= 0 && -p.window_right > d.lo) d.lo = -p.window_right;
  if (p.window_left >= 0 && p.window_left < d.hi) d.hi = p.window_left;
  return d;
}

struct RowLabel {
  int32_t seg;  // -1: padding or past the end, seen by nobody
  int64_t pos;
};

HCP_KFN RowLabel query_label(const AttnParams& p, int64_t i) {
  if (i >= p.sq) return {-1, 0};
  if (p.q_labels.seg) return {p.q_labels.seg[i], p.q_labels.pos[i]};
  return {0, i + p.causal_offset};
}

HCP_KFN RowLabel key_label(const AttnParams& p, int64_t j) {
  if (j >= p.sk) return {-1, 0};
  if (p.k_labels.seg) return {p.k_labels.seg[j], p.k_labels.pos[j]};
  return {0, j};
}

HCP_KFN bool label_sees(const LabelDist& d, const RowLabel& q, const RowLabel& k) {
  const int64_t dist = q.pos - k.pos;
  return q.seg == k.seg && q.seg >= 0 && dist >= d.lo && dist <= d.hi;
}

// Whether any lane of the warp has a visible element (every lane calls it).
HCP_KFN bool warp_any(bool mine) {
  float any = mine ? 1.0f : 0.0f;
  HCP_UNROLL
  for (int m = 1; m < 32; m *= 2) any = fmaxf(any, shfl_xor(any, m));
  return any > 0.0f;
}

}  // namespace hcp::kern

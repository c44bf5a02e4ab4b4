// Portable SIMD for the CPU attention kernels: GCC/Clang vector extensions of W floats. The kernel bodies are
// templates forced inline into one entry point per instruction set (dispatch.cpp), so the same source becomes
// AVX-512, AVX2+FMA or SSE2 code depending on the caller's target attribute.
#pragma once

#include <cstdint>
#include <cstring>

#define HCP_INLINE [[gnu::always_inline]] inline

namespace hcp::cpu {

template <int W>
struct Simd {
  typedef float V __attribute__((vector_size(4 * W)));
  typedef int32_t I __attribute__((vector_size(4 * W)));
};

template <int W>
HCP_INLINE typename Simd<W>::V load(const float* p) {
  typename Simd<W>::V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <int W>
HCP_INLINE void store(float* p, typename Simd<W>::V v) {
  std::memcpy(p, &v, sizeof v);
}

template <int W>
HCP_INLINE typename Simd<W>::V splat(float x) {
  return typename Simd<W>::V{} + x;
}

// *p in every lane, for the GEMMs' A operand. splat compiles (GCC 12) to a scalar add of 0 and a register
// broadcast: on Intel cores both go to the ports of the FMA units (a register vbroadcastss only to port 5, the
// second 512-bit FMA port), 8 extra uops for every 16 FMAs of the widest block. A broadcast from memory is a load
// alone. Same value, except that a -0 stays -0 (splat's + 0 makes it +0), which changes no sum: an accumulator
// that starts at +0 never becomes -0 by adding zeros.
template <int W>
HCP_INLINE typename Simd<W>::V broadcast(const float* p) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if constexpr (W == 16 || W == 8) {
    typename Simd<W>::V v;
    asm("vbroadcastss %1, %0" : "=v"(v) : "m"(*p));
    return v;
  }
#endif
  return splat<W>(*p);
}

// Lanes [0, n) set (all bits), the others clear: a vector condition for `mask ? x : y`.
template <int W>
HCP_INLINE typename Simd<W>::I lanes_below(int64_t n) {
  using I = typename Simd<W>::I;
  static constexpr int32_t kIota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  static_assert(W <= 16);
  I lane;
  std::memcpy(&lane, kIota, sizeof lane);
  return lane < (I{} + static_cast<int32_t>(n < 0 ? 0 : n > W ? W : n));
}

// The lower and upper halves of v.
template <int W>
HCP_INLINE void halves(typename Simd<W>::V v, typename Simd<W / 2>::V* lo, typename Simd<W / 2>::V* hi) {
  std::memcpy(lo, &v, sizeof *lo);
  std::memcpy(hi, reinterpret_cast<const unsigned char*>(&v) + sizeof *lo, sizeof *hi);
}

// Horizontal max and sum by halving, log2 W steps: lane by lane they were chains of W dependent operations (the sum
// in order cannot be reassociated), paid at every softmax row of every tile; the max is the same whatever the order,
// the sum pairs lanes (a different rounding, the same for every caller).
template <int W>
HCP_INLINE float reduce_max(typename Simd<W>::V v) {
  if constexpr (W == 1) {
    return v[0];
  } else {
    typename Simd<W / 2>::V lo, hi;
    halves<W>(v, &lo, &hi);
    return reduce_max<W / 2>(hi > lo ? hi : lo);
  }
}

template <int W>
HCP_INLINE float reduce_sum(typename Simd<W>::V v) {
  if constexpr (W == 1) {
    return v[0];
  } else {
    typename Simd<W / 2>::V lo, hi;
    halves<W>(v, &lo, &hi);
    return reduce_sum<W / 2>(lo + hi);
  }
}

// e^x to about 2 ulp for x in [-87.3, 88.7]; 0 below (so exp(-inf) == 0), +inf above. Cody-Waite reduction
// x = n ln2 + f with |f| <= ln2/2, a degree-6 polynomial for e^f, and 2^n added to the exponent bits.
template <int W>
HCP_INLINE typename Simd<W>::V exp(typename Simd<W>::V x) {
  using V = typename Simd<W>::V;
  using I = typename Simd<W>::I;
  const V lo = splat<W>(-87.3f), hi = splat<W>(88.7f);
  const I underflow = x < lo;
  const I overflow = x > hi;
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  // round(x * log2e) by the 1.5 * 2^23 trick: the float addition rounds to an integer in the low mantissa bits.
  const V magic = splat<W>(12582912.0f);
  const V t = x * 1.44269504088896341f + magic;
  const V n = t - magic;
  I ni;
  std::memcpy(&ni, &t, sizeof ni);
  I magic_bits;
  const V magic_v = magic;
  std::memcpy(&magic_bits, &magic_v, sizeof magic_bits);
  ni = ni - magic_bits;
  V f = x - n * 0.693145751953125f;  // ln2 split in a high part exact in float ...
  f = f - n * 1.428606765330187045e-06f;  // ... and the rest
  V p = splat<W>(1.0f / 720);
  p = p * f + 1.0f / 120;
  p = p * f + 1.0f / 24;
  p = p * f + 1.0f / 6;
  p = p * f + 0.5f;
  p = p * f + 1.0f;
  p = p * f + 1.0f;
  I bits;
  std::memcpy(&bits, &p, sizeof bits);
  bits = bits + (ni << 23);
  V r;
  std::memcpy(&r, &bits, sizeof r);
  r = underflow ? splat<W>(0.0f) : r;
  r = overflow ? splat<W>(__builtin_inff()) : r;
  return r;
}

}  // namespace hcp::cpu

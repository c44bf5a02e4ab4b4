#include "literal_set.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace hcp::logscan {

LiteralSet::LiteralSet(std::vector<std::string> literals) : literals_(std::move(literals)) {
  std::memset(lo_, 0, sizeof lo_);
  std::memset(hi_, 0, sizeof hi_);
  // Literals sharing a first byte go to the same bucket, so one candidate usually means one compare.
  std::vector<uint32_t> order(literals_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return literals_[a] < literals_[b]; });
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const std::string& lit = literals_[order[rank]];
    if (lit.size() < 3) throw std::invalid_argument("literal shorter than 3 bytes: " + lit);
    const auto bucket = static_cast<uint8_t>(rank * 8 / order.size());
    bucket_members_[bucket].push_back(order[rank]);
    for (int k = 0; k < 3; ++k) {
      const auto c = static_cast<uint8_t>(lit[static_cast<size_t>(k)]);
      lo_[k][c & 15] |= static_cast<uint8_t>(1u << bucket);
      hi_[k][c >> 4] |= static_cast<uint8_t>(1u << bucket);
    }
  }
  for (int k = 0; k < 3; ++k) {
    std::memcpy(lo_[k] + 16, lo_[k], 16);
    std::memcpy(hi_[k] + 16, hi_[k], 16);
  }
  __builtin_cpu_init();
  use_avx2_ = __builtin_cpu_supports("avx2");
}

inline void LiteralSet::verify(const char* data, size_t size, size_t pos, uint8_t buckets,
                               std::vector<LiteralHit>& out) const {
  while (buckets) {
    const int b = __builtin_ctz(buckets);
    buckets &= static_cast<uint8_t>(buckets - 1);
    for (uint32_t id : bucket_members_[b]) {
      const std::string& lit = literals_[id];
      if (lit.size() <= size - pos && std::memcmp(data + pos, lit.data(), lit.size()) == 0) out.push_back({pos, id});
    }
  }
}

void LiteralSet::scan_scalar(const char* data, size_t size, size_t from, std::vector<LiteralHit>& out) const {
  if (size < 3) return;
  const auto* u = reinterpret_cast<const uint8_t*>(data);
  for (size_t i = from; i + 2 < size; ++i) {
    const uint8_t m = lo_[0][u[i] & 15] & hi_[0][u[i] >> 4] & lo_[1][u[i + 1] & 15] & hi_[1][u[i + 1] >> 4] &
                      lo_[2][u[i + 2] & 15] & hi_[2][u[i + 2] >> 4];
    if (m) verify(data, size, i, m, out);
  }
}

namespace {

// Bucket bits of 32 bytes for one fingerprint position: the low- and high-nibble tables ANDed.
__attribute__((target("avx2"), always_inline)) inline __m256i classify(__m256i c, __m256i lo, __m256i hi,
                                                                       __m256i nibble) {
  const __m256i l = _mm256_and_si256(c, nibble);
  const __m256i h = _mm256_and_si256(_mm256_srli_epi16(c, 4), nibble);
  return _mm256_and_si256(_mm256_shuffle_epi8(lo, l), _mm256_shuffle_epi8(hi, h));
}

}  // namespace

__attribute__((target("avx2"))) void LiteralSet::scan_avx2(const char* data, size_t size,
                                                           std::vector<LiteralHit>& out) const {
  size_t i = 0;
  if (size >= 34) {
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    const __m256i lo0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[0]));
    const __m256i hi0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[0]));
    const __m256i lo1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[1]));
    const __m256i hi1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[1]));
    const __m256i lo2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[2]));
    const __m256i hi2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[2]));
    const __m256i zero = _mm256_setzero_si256();
    alignas(32) uint8_t lanes[32];
    for (; i + 34 <= size; i += 32) {
      const __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
      const __m256i c1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 1));
      const __m256i c2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 2));
      const __m256i m = _mm256_and_si256(
          _mm256_and_si256(classify(c0, lo0, hi0, nibble), classify(c1, lo1, hi1, nibble)),
          classify(c2, lo2, hi2, nibble));
      auto mask = static_cast<uint32_t>(~_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero)));
      if (mask == 0) continue;
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), m);
      while (mask) {
        const int j = __builtin_ctz(mask);
        mask &= mask - 1;
        verify(data, size, i + static_cast<size_t>(j), lanes[j], out);
      }
    }
  }
  scan_scalar(data, size, i, out);
}

void LiteralSet::find_all(const char* data, size_t size, std::vector<LiteralHit>& out) const {
  if (use_avx2_) {
    scan_avx2(data, size, out);
  } else {
    scan_scalar(data, size, 0, out);
  }
}

}  // namespace hcp::logscan

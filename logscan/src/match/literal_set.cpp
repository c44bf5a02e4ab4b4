#include "literal_set.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace hcp::logscan {

LiteralSet::LiteralSet(std::vector<std::string> literals) : literals_(std::move(literals)) {
  std::memset(lo_, 0, sizeof lo_);
  std::memset(hi_, 0, sizeof hi_);
  // Greedy bucket choice: each literal joins the bucket whose nibble sets it widens least, so a bucket accepts few
  // byte combinations it does not really contain (false candidates cost a compare each).
  auto width = [&](int b, const std::string* extra) {
    double accept = 1;
    for (int k = 0; k < 4; ++k) {
      uint16_t lo = 0, hi = 0;
      for (uint32_t id : bucket_members_[b]) {
        lo |= static_cast<uint16_t>(1u << (static_cast<uint8_t>(literals_[id][k]) & 15));
        hi |= static_cast<uint16_t>(1u << (static_cast<uint8_t>(literals_[id][k]) >> 4));
      }
      if (extra) {
        lo |= static_cast<uint16_t>(1u << (static_cast<uint8_t>((*extra)[k]) & 15));
        hi |= static_cast<uint16_t>(1u << (static_cast<uint8_t>((*extra)[k]) >> 4));
      }
      accept *= __builtin_popcount(lo) * __builtin_popcount(hi);
    }
    return bucket_members_[b].empty() && !extra ? 0.0 : accept;
  };
  for (uint32_t id = 0; id < literals_.size(); ++id) {
    const std::string& lit = literals_[id];
    if (lit.size() < 4) throw std::invalid_argument("literal shorter than 4 bytes: " + lit);
    int best = 0;
    double best_cost = 1e300;
    for (int b = 0; b < 8; ++b) {
      const double cost = width(b, &lit) - width(b, nullptr);
      if (cost < best_cost) {
        best_cost = cost;
        best = b;
      }
    }
    bucket_members_[best].push_back(id);
    for (int k = 0; k < 4; ++k) {
      const auto c = static_cast<uint8_t>(lit[static_cast<size_t>(k)]);
      lo_[k][c & 15] |= static_cast<uint8_t>(1u << best);
      hi_[k][c >> 4] |= static_cast<uint8_t>(1u << best);
    }
    uint32_t head = 0;
    std::memcpy(&head, lit.data(), 4);
    heads_.push_back(head);
  }
  for (int k = 0; k < 4; ++k) {
    std::memcpy(lo_[k] + 16, lo_[k], 16);
    std::memcpy(hi_[k] + 16, hi_[k], 16);
  }
  __builtin_cpu_init();
  use_avx2_ = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}

inline void LiteralSet::verify(const char* data, size_t size, size_t pos, uint8_t buckets, uint64_t newlines,
                               std::vector<LiteralHit>& out) const {
  while (buckets) {
    const int b = __builtin_ctz(buckets);
    buckets &= static_cast<uint8_t>(buckets - 1);
    uint32_t head = 0;
    if (size - pos >= 4) std::memcpy(&head, data + pos, 4);
    for (uint32_t id : bucket_members_[b]) {
      if (heads_[id] != head) continue;  // one compare rejects almost every false candidate
      const std::string& lit = literals_[id];
      if (lit.size() <= size - pos && std::memcmp(data + pos + 4, lit.data() + 4, lit.size() - 4) == 0) {
        out.push_back({pos, id, newlines});
      }
    }
  }
}

uint64_t LiteralSet::scan_scalar(const char* data, size_t size, size_t from, uint64_t newlines,
                                 std::vector<LiteralHit>& out) const {
  const auto* u = reinterpret_cast<const uint8_t*>(data);
  for (size_t i = from; i < size; ++i) {
    if (i + 3 >= size) {
      newlines += u[i] == '\n';
      continue;
    }
    const uint8_t m = lo_[0][u[i] & 15] & hi_[0][u[i] >> 4] & lo_[1][u[i + 1] & 15] & hi_[1][u[i + 1] >> 4] &
                      lo_[2][u[i + 2] & 15] & hi_[2][u[i + 2] >> 4] & lo_[3][u[i + 3] & 15] & hi_[3][u[i + 3] >> 4];
    if (m) verify(data, size, i, m, newlines, out);
    newlines += u[i] == '\n';
  }
  return newlines;
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

__attribute__((target("avx2,popcnt"))) uint64_t LiteralSet::scan_avx2(const char* data, size_t size,
                                                                      std::vector<LiteralHit>& out) const {
  struct Candidate {
    uint32_t offset;  // from the window start
    uint32_t buckets;
    uint64_t newlines;
  };
  // Candidates of a window are collected first and verified after: verification calls out of the loop, which
  // would otherwise spill the eight table registers for every block that has a candidate.
  constexpr size_t kWindow = 8192;
  Candidate candidates[kWindow];
  size_t i = 0;
  uint64_t newlines = 0;
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i lo0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[0]));
  const __m256i hi0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[0]));
  const __m256i lo1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[1]));
  const __m256i hi1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[1]));
  const __m256i lo2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[2]));
  const __m256i hi2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[2]));
  const __m256i lo3 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_[3]));
  const __m256i hi3 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_[3]));
  const __m256i zero = _mm256_setzero_si256();
  const __m256i newline = _mm256_set1_epi8('\n');
  alignas(32) uint8_t lanes[32];
  while (i + 35 <= size) {
    const size_t window_start = i;
    const size_t window_end = std::min(size - 34, i + kWindow);
    size_t n = 0;
    for (; i < window_end; i += 32) {
      const __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
      const __m256i c1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 1));
      const __m256i c2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 2));
      const __m256i c3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 3));
      const __m256i m = _mm256_and_si256(
          _mm256_and_si256(classify(c0, lo0, hi0, nibble), classify(c1, lo1, hi1, nibble)),
          _mm256_and_si256(classify(c2, lo2, hi2, nibble), classify(c3, lo3, hi3, nibble)));
      const auto nl = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c0, newline)));
      auto mask = static_cast<uint32_t>(~_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero)));
      if (mask != 0) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), m);
        do {
          const int j = __builtin_ctz(mask);
          mask &= mask - 1;
          candidates[n++] = {static_cast<uint32_t>(i - window_start + static_cast<size_t>(j)), lanes[j],
                             newlines + static_cast<uint64_t>(__builtin_popcount(nl & ((1u << j) - 1)))};
        } while (mask);
      }
      newlines += static_cast<uint64_t>(__builtin_popcount(nl));
    }
    for (size_t k = 0; k < n; ++k) {
      verify(data, size, window_start + candidates[k].offset, static_cast<uint8_t>(candidates[k].buckets),
             candidates[k].newlines, out);
    }
  }
  return scan_scalar(data, size, i, newlines, out);
}

uint64_t LiteralSet::find_all(const char* data, size_t size, std::vector<LiteralHit>& out) const {
  return use_avx2_ ? scan_avx2(data, size, out) : scan_scalar(data, size, 0, 0, out);
}

}  // namespace hcp::logscan

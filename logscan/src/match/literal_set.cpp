#include "literal_set.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "cpu_avx2.hpp"

namespace hcp::logscan {

LiteralSet::LiteralSet(std::vector<std::string> literals, std::vector<uint8_t> bits) : literals_(std::move(literals)) {
  if (bits.empty() && literals_.size() > 64) throw std::invalid_argument("more than 64 literals");
  if (!bits.empty() && bits.size() != literals_.size()) throw std::invalid_argument("a bit for every literal");
  // Bucket walks grow with the literals; a few hundred keep the scan's speed.
  if (literals_.size() > 256) throw std::invalid_argument("more than 256 literals");
  for (size_t k = 0; k < literals_.size(); ++k) {
    const unsigned bit = bits.empty() ? static_cast<unsigned>(k) : bits[k];
    if (bit > 63) throw std::invalid_argument("a literal's bit must be below 64");
    bit_of_.push_back(uint64_t{1} << bit);
  }
  std::memset(lo_, 0, sizeof lo_);
  std::memset(hi_, 0, sizeof hi_);
  std::memset(head_filter_, 0, sizeof head_filter_);
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
    if (lit.find('\n') != std::string::npos) throw std::invalid_argument("literal holds a newline: " + lit);
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
    const uint32_t h = head_hash(head);
    head_filter_[h >> 6] |= uint64_t{1} << (h & 63);
  }
  for (int k = 0; k < 4; ++k) {
    std::memcpy(lo_[k] + 16, lo_[k], 16);
    std::memcpy(hi_[k] + 16, hi_[k], 16);
  }
  use_avx2_ = cpu_has_avx2();
}

namespace {

uint64_t load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint32_t load4(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// a[0, n) == b[0, n) for n >= 4: up to 16 bytes by two overlapping word compares, with no loop whose exit
// mispredicts on every hit; longer ones word by word. No library call: a call in the vector loop's candidate
// path made the compiler spill every table register around it.
__attribute__((always_inline)) inline bool same_bytes(const char* a, const char* b, size_t n) {
  if (n <= 8) return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
  if (n <= 16) return load8(a) == load8(b) && load8(a + n - 8) == load8(b + n - 8);
  for (size_t k = 0; k + 8 < n; k += 8) {
    if (load8(a + k) != load8(b + k)) return false;
  }
  return load8(a + n - 8) == load8(b + n - 8);
}

}  // namespace

// The literals that really start at pos, among the candidate buckets: inlined into the vector loop, with a byte
// compare of its own rather than a library call on the path of every hit.
__attribute__((always_inline)) inline uint64_t LiteralSet::match_at(const char* data, size_t size, size_t pos,
                                                                    uint8_t buckets) const {
  if (size - pos < 4) return 0;
  uint32_t head = 0;
  std::memcpy(&head, data + pos, 4);
  // With 60-odd literals in 8 buckets the nibble fingerprints pass many false candidates (on NCCL INFO lines,
  // walking a bucket's members was a quarter of the scan): a bit per 16-bit hash of the literals' heads rejects
  // almost all of them with one load.
  const uint32_t h = head_hash(head);
  if ((head_filter_[h >> 6] >> (h & 63) & 1) == 0) return 0;
  uint64_t ids = 0;
  while (buckets) {
    const int b = __builtin_ctz(buckets);
    buckets &= static_cast<uint8_t>(buckets - 1);
    for (uint32_t id : bucket_members_[b]) {
      if (heads_[id] != head) continue;  // one compare rejects almost every false candidate
      const std::string& lit = literals_[id];
      if (lit.size() > size - pos || !same_bytes(data + pos, lit.data(), lit.size())) continue;
      ids |= bit_of_[id];
    }
  }
  return ids;
}

inline uint8_t LiteralSet::buckets_at(const uint8_t* u) const {
  return lo_[0][u[0] & 15] & hi_[0][u[0] >> 4] & lo_[1][u[1] & 15] & hi_[1][u[1] >> 4] & lo_[2][u[2] & 15] &
         hi_[2][u[2] >> 4] & lo_[3][u[3] & 15] & hi_[3][u[3] >> 4];
}

uint64_t LiteralSet::next_scalar(const char* data, size_t size, size_t limit, ScanCursor& cur) const {
  const auto* u = reinterpret_cast<const uint8_t*>(data);
  for (; cur.pos < limit; ++cur.pos) {
    if (cur.pos + 4 <= size) {
      const uint8_t b = buckets_at(u + cur.pos);
      if (b) {
        if (const uint64_t ids = match_at(data, size, cur.pos, b)) return ids;
      }
    }
    if (u[cur.pos] == '\n') {
      ++cur.newlines;
      cur.line_start = cur.pos + 1;
    }
  }
  return 0;
}

namespace {

// Bucket bits of 32 bytes for one fingerprint position: the low- and high-nibble tables ANDed.
__attribute__((target("avx2"), always_inline)) inline __m256i classify(__m256i c, __m256i lo, __m256i hi,
                                                                       __m256i nibble) {
  const __m256i l = _mm256_and_si256(c, nibble);
  const __m256i h = _mm256_and_si256(_mm256_srli_epi16(c, 4), nibble);
  return _mm256_and_si256(_mm256_shuffle_epi8(lo, l), _mm256_shuffle_epi8(hi, h));
}

// Just after the last '\n' in data[from, to), or `otherwise` when there is none.
__attribute__((target("avx2"))) size_t line_start_before(const char* data, size_t from, size_t to,
                                                         size_t otherwise) {
  const __m256i newline = _mm256_set1_epi8('\n');
  size_t k = to;
  for (; k >= from + 32; k -= 32) {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + k - 32));
    const auto nl = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, newline)));
    if (nl) return k - static_cast<size_t>(__builtin_clz(nl));
  }
  while (k > from) {
    if (data[--k] == '\n') return k + 1;
  }
  return otherwise;
}

}  // namespace

__attribute__((target("avx2,popcnt"))) uint64_t LiteralSet::next_avx2(const char* data, size_t size,
                                                                             size_t limit, ScanCursor& cur) const {
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
  // The newline count lives in a local while the loop runs: stores through the reference could alias the text
  // (it is read as char), which would pin it in memory. The line start is not followed block by block (a
  // conditional update on every block that holds a newline, which mispredicts on short lines); a hit finds it by
  // looking back from where it is, which is within a line's length.
  uint64_t newlines = cur.newlines;
  const size_t from = cur.pos;
  size_t i = cur.pos;
  // A block reads data[i, i + 35): whole blocks below limit, the rest by the scalar loop.
  while (i + 32 <= limit && i + 35 <= size) {
    const __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    const __m256i c1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 1));
    const __m256i c2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 2));
    const __m256i c3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 3));
    const __m256i m = _mm256_and_si256(
        _mm256_and_si256(classify(c0, lo0, hi0, nibble), classify(c1, lo1, hi1, nibble)),
        _mm256_and_si256(classify(c2, lo2, hi2, nibble), classify(c3, lo3, hi3, nibble)));
    const auto nl = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c0, newline)));
    auto candidates = static_cast<uint32_t>(~_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero)));
    if (candidates != 0) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), m);
      do {
        const int j = __builtin_ctz(candidates);
        candidates &= candidates - 1;
        if (const uint64_t ids = match_at(data, size, i + static_cast<size_t>(j), lanes[j])) {
          const uint32_t before = nl & ((1u << j) - 1);
          cur.pos = i + static_cast<size_t>(j);
          cur.newlines = newlines + static_cast<uint64_t>(__builtin_popcount(before));
          cur.line_start = before ? i + 32 - static_cast<size_t>(__builtin_clz(before))
                                  : line_start_before(data, from, i, cur.line_start);
          return ids;
        }
      } while (candidates);
    }
    newlines += static_cast<uint64_t>(__builtin_popcount(nl));
    i += 32;
  }
  cur = {i, line_start_before(data, from, i, cur.line_start), newlines};
  return next_scalar(data, size, limit, cur);
}

uint64_t LiteralSet::next(const char* data, size_t size, size_t limit, ScanCursor& cursor) const {
  return use_avx2_ ? next_avx2(data, size, limit, cursor) : next_scalar(data, size, limit, cursor);
}

}  // namespace hcp::logscan

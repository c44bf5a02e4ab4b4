#include "line_end.hpp"

#include <immintrin.h>

#include <cstdint>

#include "cpu_avx2.hpp"

namespace hcp::logscan {
namespace {

LineEnd find_scalar(const char* data, size_t i, size_t n, bool escape) {
  for (; i < n && data[i] != '\n'; ++i) escape = escape || data[i] == 0x1b;
  return {i, escape};
}

// Two blocks a step, the ESC bytes gathered in a register: one branch per 64 bytes, and the ESC mask is only
// made for the bytes before the newline.
__attribute__((target("avx2"))) LineEnd find_avx2(const char* data, size_t from, size_t n) {
  const __m256i newline = _mm256_set1_epi8('\n');
  const __m256i esc = _mm256_set1_epi8(0x1b);
  __m256i escapes = _mm256_setzero_si256();  // ESC bytes of the steps before the one with the newline
  size_t i = from;
  for (; i + 64 <= n; i += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i + 32));
    const __m256i na = _mm256_cmpeq_epi8(a, newline), nb = _mm256_cmpeq_epi8(b, newline);
    if (!_mm256_testz_si256(_mm256_or_si256(na, nb), _mm256_or_si256(na, nb))) {
      const uint64_t nl = static_cast<uint32_t>(_mm256_movemask_epi8(na)) |
                          uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(nb))} << 32;
      const uint64_t e = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, esc))) |
                         uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, esc)))} << 32;
      const auto at = static_cast<unsigned>(__builtin_ctzll(nl));
      const bool before = !_mm256_testz_si256(escapes, escapes) || (e & ((uint64_t{1} << at) - 1)) != 0;
      return {i + at, before};
    }
    escapes = _mm256_or_si256(escapes, _mm256_or_si256(_mm256_cmpeq_epi8(a, esc), _mm256_cmpeq_epi8(b, esc)));
  }
  return find_scalar(data, i, n, !_mm256_testz_si256(escapes, escapes));
}

}  // namespace

LineEnd find_line_end(const char* data, size_t from, size_t n) {
  return cpu_has_avx2() ? find_avx2(data, from, n) : find_scalar(data, from, n, false);
}

}  // namespace hcp::logscan

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

__attribute__((target("avx2"))) LineEnd find_avx2(const char* data, size_t from, size_t n) {
  const __m256i newline = _mm256_set1_epi8('\n');
  const __m256i esc = _mm256_set1_epi8(0x1b);
  uint32_t escapes = 0;  // ESC bits of the blocks before the one with the newline
  size_t i = from;
  for (; i + 32 <= n; i += 32) {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    const auto nl = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, newline)));
    const auto e = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, esc)));
    if (nl) {
      const unsigned at = static_cast<unsigned>(__builtin_ctz(nl));
      return {i + at, escapes != 0 || (e & ((1u << at) - 1)) != 0};
    }
    escapes |= e;
  }
  return find_scalar(data, i, n, escapes != 0);
}

}  // namespace

LineEnd find_line_end(const char* data, size_t from, size_t n) {
  return cpu_has_avx2() ? find_avx2(data, from, n) : find_scalar(data, from, n, false);
}

}  // namespace hcp::logscan

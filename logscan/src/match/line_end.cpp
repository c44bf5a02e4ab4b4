#include "line_end.hpp"

#include <immintrin.h>

#include <cstdint>

#include "cpu_avx2.hpp"

namespace hcp::logscan {
namespace {

LineEnd find_scalar(const char* data, size_t i, size_t n, bool escape) {
  for (; i < n && data[i] != '\n'; ++i) {
    escape = escape || data[i] == 0x1b || (data[i] == '\r' && i + 1 < n && data[i + 1] != '\n');
  }
  return {i, escape};
}

// Two blocks a step, the ESC and CR bytes gathered in a register: one branch per 64 bytes, and the masks are only
// made for the bytes before the newline. A CR right before the newline (CRLF) does not count; one at the end of a
// block whose next block starts with the newline is flagged too, and find_line_end checks a flagged line exactly.
__attribute__((target("avx2"))) LineEnd find_avx2(const char* data, size_t from, size_t n) {
  const __m256i newline = _mm256_set1_epi8('\n');
  const __m256i esc = _mm256_set1_epi8(0x1b);
  const __m256i cr = _mm256_set1_epi8('\r');
  __m256i escapes = _mm256_setzero_si256();  // ESC and CR bytes of the steps before the one with the newline
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
      const uint64_t c = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, cr))) |
                         uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, cr)))} << 32;
      const auto at = static_cast<unsigned>(__builtin_ctzll(nl));
      const uint64_t below = (uint64_t{1} << at) - 1;
      const uint64_t inner_cr = c & below & ~(at > 0 ? uint64_t{1} << (at - 1) : 0);
      const bool before = !_mm256_testz_si256(escapes, escapes) || (e & below) != 0 || inner_cr != 0;
      return {i + at, before};
    }
    escapes = _mm256_or_si256(escapes, _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(a, esc), _mm256_cmpeq_epi8(b, esc)),
                                                       _mm256_or_si256(_mm256_cmpeq_epi8(a, cr), _mm256_cmpeq_epi8(b, cr))));
  }
  return find_scalar(data, i, n, !_mm256_testz_si256(escapes, escapes));
}

}  // namespace

LineEnd find_line_end(const char* data, size_t from, size_t n) {
  if (!cpu_has_avx2()) return find_scalar(data, from, n, false);
  LineEnd r = find_avx2(data, from, n);
  // Flagged lines are rare (ANSI colour, redraws): the byte loop settles a CR at a block boundary exactly.
  if (r.escape) r.escape = find_scalar(data, from, r.end, false).escape;
  return r;
}

}  // namespace hcp::logscan

#include "count_newlines.hpp"

#include <immintrin.h>

namespace hcp::logscan {
namespace {

uint64_t count_scalar(const char* p, const char* end) {
  uint64_t n = 0;
  for (; p < end; ++p) n += *p == '\n';
  return n;
}

__attribute__((target("avx2,popcnt"))) uint64_t count_avx2(const char* p, const char* end) {
  uint64_t n = 0;
  const __m256i nl = _mm256_set1_epi8('\n');
  for (; p + 64 <= end; p += 64) {
    const __m256i a = _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), nl);
    const __m256i b = _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), nl);
    n += static_cast<uint64_t>(__builtin_popcount(static_cast<uint32_t>(_mm256_movemask_epi8(a)))) +
         static_cast<uint64_t>(__builtin_popcount(static_cast<uint32_t>(_mm256_movemask_epi8(b))));
  }
  return n + count_scalar(p, end);
}

const bool kHaveAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}();

}  // namespace

uint64_t count_newlines(const char* begin, const char* end) {
  if (end <= begin) return 0;
  return kHaveAvx2 ? count_avx2(begin, end) : count_scalar(begin, end);
}

}  // namespace hcp::logscan

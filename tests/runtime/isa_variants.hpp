// The instruction-set variants of a CPU kernel piece under test (generic, and AVX2 and AVX-512 on x86-64), each with
// whether this machine can run it: the kernel tests check every variant the machine has against one definition.
#pragma once

#include <vector>

namespace hcp::cpu {

template <class Fn>
struct IsaVariant {
  const char* name;
  int width;  // floats per vector
  Fn fn;
  bool available;
};

#if defined(__x86_64__)
template <class Fn>
std::vector<IsaVariant<Fn>> isa_variants(Fn generic, Fn avx2, Fn avx512) {
  return {{"generic", 4, generic, true},
          {"avx2", 8, avx2, __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0},
          {"avx512", 16, avx512, __builtin_cpu_supports("avx512f") != 0}};
}
#else
template <class Fn>
std::vector<IsaVariant<Fn>> isa_variants(Fn generic) {
  return {{"generic", 4, generic, true}};
}
#endif

}  // namespace hcp::cpu

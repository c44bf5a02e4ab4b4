// Whether the running CPU has AVX2 (and POPCNT, which every AVX2 CPU has): the scanner's vector paths are
// compiled with target attributes and chosen at run time, so the default build stays portable.
#pragma once

namespace hcp::logscan {

inline bool cpu_has_avx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  }();
  return has;
}

}  // namespace hcp::logscan

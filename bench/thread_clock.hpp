// The benchmarks time each rank's own thread: CPU seconds, unaffected by the other ranks sharing the cores.
#pragma once

#include <time.h>

namespace hcp::bench {

inline double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace hcp::bench

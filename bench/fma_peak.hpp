// A probe of one core's fp32 FMA peak at the widest vector width the CPU has: enough independent accumulator
// chains to cover the FMA latency on two pipes, no memory traffic. The attention benchmark reports its GFLOP/s
// as a fraction of this figure, measured in the same run.
#pragma once

#include <chrono>
#include <string>

namespace hcp::bench {

struct Peak {
  std::string isa;
  double gflops = 0;
};

Peak measure_fma_peak();

}  // namespace hcp::bench

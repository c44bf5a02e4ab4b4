// Attention sinks on the host (SinkParams): one pass over the rows after the forward, and the sink's gradient from
// the backward's per-row delta. Element-wise work the compiler vectorises; no ISA-specific kernel is needed.
#include <algorithm>
#include <cmath>

#include "hcp/attention_cpu.hpp"

namespace hcp {

void apply_sink_cpu(const SinkParams& p) {
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h) {
      float* lse = p.lse + (b * p.heads + h) * p.rows;
      const float sink = p.sink[h];
      for (int64_t r = 0; r < p.rows; ++r) {
        if (lse[r] == -INFINITY) continue;  // sees no key: padding stays empty
        // lse' = max + log(exp(lse - max) + exp(sink - max)); out scales by exp(lse - lse') = 1 / (1 + e^(sink - lse)).
        const float top = std::max(lse[r], sink);
        const float merged = top + std::log(std::exp(lse[r] - top) + std::exp(sink - top));
        const float keep = std::exp(lse[r] - merged);
        float* row = p.out + b * p.out_b + r * p.out_r + h * p.out_h;
        for (int64_t d = 0; d < p.head_dim; ++d) row[d] *= keep;
        lse[r] = merged;
      }
    }
}

void sink_gradient_cpu(int64_t batch, int64_t heads, int64_t rows, const float* lse, const float* delta,
                       const float* sink, double* grad) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const float* l = lse + (b * heads + h) * rows;
      const float* dl = delta + (b * heads + h) * rows;
      double sum = 0;
      for (int64_t r = 0; r < rows; ++r)
        if (l[r] != -INFINITY) sum += std::exp(static_cast<double>(sink[h]) - l[r]) * dl[r];
      grad[h] -= sum;
    }
}

}  // namespace hcp

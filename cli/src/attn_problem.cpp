#include "attn_problem.hpp"

#include <algorithm>
#include <cmath>

#include "hcp/dtype_convert.hpp"

namespace hcp::cli {

HostTensor random_tensor(size_t n, DType dtype, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  HostTensor t;
  t.f32.resize(n);
  for (float& x : t.f32) x = dist(gen);
  t.raw.resize(n * dtype_size(dtype));
  convert_from_f32(t.f32.data(), t.raw.data(), dtype, static_cast<int64_t>(n));
  convert_to_f32(t.raw.data(), dtype, t.f32.data(), static_cast<int64_t>(n));
  return t;
}

ErrorStat compare(const std::string& name, const std::vector<unsigned char>& got_raw, DType dtype,
                  const std::vector<float>& want) {
  std::vector<float> got(want.size());
  convert_to_f32(got_raw.data(), dtype, got.data(), static_cast<int64_t>(got.size()));
  ErrorStat e{name};
  double scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(want[i]) && got[i] == want[i]) continue;
    const double d = std::isnan(got[i]) ? INFINITY : std::abs(static_cast<double>(got[i]) - want[i]);
    e.max_abs = std::max(e.max_abs, d);
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  e.max_rel = scale > 0 ? e.max_abs / scale : e.max_abs;
  return e;
}

}  // namespace hcp::cli

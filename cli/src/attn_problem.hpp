// The random problem `hcp attn` runs and the checks of its results, shared by the in-process and the MPI runs: the
// same seed gives every process the same full tensors.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "hcp/attention_params.hpp"

namespace hcp::cli {

struct HostTensor {
  std::vector<float> f32;          // the values (already rounded to the dtype)
  std::vector<unsigned char> raw;  // the dtype's bytes, as the ranks get them
};

HostTensor random_tensor(size_t n, DType dtype, std::mt19937& gen);

struct ErrorStat {
  std::string name;
  double max_abs = 0, max_rel = 0;  // max_rel: max |a - b| / max |b|
};

// got (dtype bytes) against want (fp32).
ErrorStat compare(const std::string& name, const std::vector<unsigned char>& got_raw, DType dtype,
                  const std::vector<float>& want);

}  // namespace hcp::cli

#include "hcp/parallel_config.hpp"

#include <string>

#include "hcp/checked_math.hpp"
#include "hcp/error.hpp"

namespace hcp {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error(Errc::invalid_config, message); }

void require_positive(int64_t value, const char* name) {
  if (value <= 0) fail(std::string(name) + " must be positive (got " + std::to_string(value) + ")");
}

std::string list_text(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

void validate_hcp_sizes(const std::vector<int64_t>& sizes, int64_t cp) {
  if (sizes.empty()) fail("hierarchical context-parallel sizes must have at least one level (got [])");
  int64_t product = 1;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] <= 0) {
      fail("hierarchical context-parallel size of level " + std::to_string(k) + " must be positive (got " +
           list_text(sizes) + ")");
    }
    product = checked_mul(product, sizes[k], "product of hierarchical context-parallel sizes");
  }
  if (product != cp) {
    fail("product of hierarchical context-parallel sizes " + list_text(sizes) + " (=" + std::to_string(product) +
         ") must equal context-parallel size (=" + std::to_string(cp) + ")");
  }
}

}  // namespace

std::optional<std::string> ParallelConfig::check() const {
  // Cheap screens for the common invalid cases first; the full validation builds the message.
  const bool positive = world_size > 0 && tp > 0 && pp > 0 && cp > 0 && ep > 0 && gpus_per_node > 0;
  int64_t model = 0, product = 1;
  bool plausible = positive && world_size <= kMaxWorldSize && !__builtin_mul_overflow(tp, pp, &model) &&
                   !__builtin_mul_overflow(model, cp, &model) && world_size % model == 0 &&
                   !(ep > 1 && cp > 1) && !(order == Order::tp_cp_ep_pp_dp && pp > 1 && cp > 1);
  if (plausible && hcp_sizes) {
    plausible = !hcp_sizes->empty();
    for (int64_t s : *hcp_sizes) plausible = plausible && s > 0 && !__builtin_mul_overflow(product, s, &product);
    plausible = plausible && product == cp;
  }
  if (plausible && (order == Order::tp_cp_ep_dp_pp || order == Order::tp_cp_ep_pp_dp)) return std::nullopt;
  try {
    validate();
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

void ParallelConfig::validate() const {
  require_positive(world_size, "world_size");
  require_positive(tp, "tensor-model-parallel size (tp)");
  require_positive(pp, "pipeline-model-parallel size (pp)");
  require_positive(cp, "context-parallel size (cp)");
  require_positive(ep, "expert-model-parallel size (ep)");
  require_positive(gpus_per_node, "gpus_per_node");
  if (world_size > kMaxWorldSize) {
    fail("world_size (" + std::to_string(world_size) + ") exceeds the largest NCCL world (" +
         std::to_string(kMaxWorldSize) + ")");
  }
  const int64_t model_size = checked_mul(checked_mul(tp, pp, "tp * pp"), cp, "tp * pp * cp");
  if (world_size % model_size != 0) {
    fail("world_size (" + std::to_string(world_size) + ") is not divisible by tp * pp * cp (" + std::to_string(tp) +
         " * " + std::to_string(pp) + " * " + std::to_string(cp) + " = " + std::to_string(model_size) + ")");
  }
  if (hcp_sizes) validate_hcp_sizes(*hcp_sizes, cp);
  if (ep > 1 && cp > 1) {
    fail("expert-model-parallel size (" + std::to_string(ep) + ") > 1 together with context-parallel size (" +
         std::to_string(cp) + ") > 1 is not supported by Megatron's dense rank generator");
  }
  if (order == Order::tp_cp_ep_pp_dp && pp > 1 && cp > 1) {
    fail("order tp-cp-ep-pp-dp (use_tp_pp_dp_mapping) with pp (" + std::to_string(pp) + ") > 1 and cp (" +
         std::to_string(cp) + ") > 1: Megatron requires pp-last rank ordering here (\"the data parallel size of "
         "the attention and moe layers must be the same\")");
  }
  (void)order_name(order);  // rejects an out-of-range enum value cast from an integer
}

int64_t ParallelConfig::dp() const { return world_size / (tp * pp * cp); }

}  // namespace hcp

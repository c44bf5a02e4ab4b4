// The parallel configuration of a Megatron-Core dense model: world size, tensor/pipeline/context/expert parallel
// sizes, the rank order, and the hierarchical context-parallel sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hcp {

// The rank order, leftmost token varying fastest (Megatron's RankGenerator order string).
enum class Order : int {
  tp_cp_ep_dp_pp = 0,  // Megatron's default
  tp_cp_ep_pp_dp = 1,  // --use-tp-pp-dp-mapping
};

std::string_view order_name(Order order);
// Parses "tp-cp-ep-dp-pp" or "tp-cp-ep-pp-dp"; throws Error{invalid_config} naming the accepted values.
Order parse_order(std::string_view text);

// NCCL ranks are C ints; a larger world cannot exist.
inline constexpr int64_t kMaxWorldSize = 2147483647;

struct ParallelConfig {
  int64_t world_size = 1;
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t cp = 1;
  int64_t ep = 1;
  Order order = Order::tp_cp_ep_dp_pp;
  // hierarchical_context_parallel_sizes; nullopt means unset (Megatron's None). Any number of levels.
  std::optional<std::vector<int64_t>> hcp_sizes;
  // Ranks per NVLink domain (node); ranks are packed node by node.
  int64_t gpus_per_node = 8;

  // Throws Error{invalid_config} with the violated upstream condition and the values. Checks: positive sizes,
  // world size within NCCL's limit, tp*pp*cp without overflow and dividing the world, hierarchical sizes positive
  // with product == cp, ep > 1 with cp > 1 (Megatron's dense generator refuses it), order tp-cp-ep-pp-dp with
  // pp > 1 and cp > 1 (initialize_model_parallel refuses it).
  void validate() const;
  // The same checks without throwing: the first violated condition's message, or nullopt when valid. For callers
  // that probe many configs (the linter), where an exception per invalid one would dominate the cost.
  std::optional<std::string> check() const;

  // world_size / (tp * pp * cp); requires a valid config.
  int64_t dp() const;
};

}  // namespace hcp

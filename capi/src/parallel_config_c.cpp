#include "parallel_config_c.hpp"

#include <cstddef>
#include <string>

#include "guard.hpp"
#include "struct_versions.hpp"

namespace hcp::capi {
ParallelConfig to_config(const hcp_parallel_config* in, const char* fn) {
  const hcp_parallel_config c = read_versioned(in, hcp_parallel_config HCP_PARALLEL_CONFIG_INIT, fn, "config");
  ParallelConfig cfg;
  cfg.world_size = c.world_size;
  cfg.tp = c.tp;
  cfg.pp = c.pp;
  cfg.cp = c.cp;
  cfg.ep = c.ep == 0 ? 1 : c.ep;  // 0 means the default, as in every optional field
  if (c.order != HCP_ORDER_TP_CP_EP_DP_PP && c.order != HCP_ORDER_TP_CP_EP_PP_DP) {
    throw Error(Errc::invalid_argument, std::string(fn) + ": config->order (" + std::to_string(c.order) +
                                            ") is not an hcp_order value");
  }
  cfg.order = static_cast<Order>(c.order);
  if (c.hcp_sizes == nullptr && c.num_hcp_levels != 0) {
    throw Error(Errc::invalid_argument, std::string(fn) + ": config->hcp_sizes is NULL but num_hcp_levels is " +
                                            std::to_string(c.num_hcp_levels));
  }
  if (c.hcp_sizes != nullptr) cfg.hcp_sizes.emplace(c.hcp_sizes, c.hcp_sizes + c.num_hcp_levels);
  cfg.gpus_per_node = c.gpus_per_node == 0 ? 8 : c.gpus_per_node;
  return cfg;
}


}  // namespace hcp::capi

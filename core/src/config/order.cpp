#include <string>

#include "hcp/error.hpp"
#include "hcp/parallel_config.hpp"

namespace hcp {

std::string_view order_name(Order order) {
  switch (order) {
    case Order::tp_cp_ep_dp_pp: return "tp-cp-ep-dp-pp";
    case Order::tp_cp_ep_pp_dp: return "tp-cp-ep-pp-dp";
  }
  throw Error(Errc::invalid_argument, "unknown order value " + std::to_string(static_cast<int>(order)));
}

Order parse_order(std::string_view text) {
  if (text == "tp-cp-ep-dp-pp") return Order::tp_cp_ep_dp_pp;
  if (text == "tp-cp-ep-pp-dp") return Order::tp_cp_ep_pp_dp;
  throw Error(Errc::invalid_config,
              "unknown order '" + std::string(text) + "' (expected tp-cp-ep-dp-pp or tp-cp-ep-pp-dp)");
}

}  // namespace hcp

#include "hcp/cp_scheme.hpp"

#include <string>

#include "hcp/error.hpp"

namespace hcp {

std::string_view cp_comm_name(CpComm comm) {
  switch (comm) {
    case CpComm::p2p:
      return "p2p";
    case CpComm::a2a:
      return "a2a";
    case CpComm::a2a_p2p:
      return "a2a+p2p";
    case CpComm::all_gather:
      return "all_gather";
  }
  return "?";
}

CpComm parse_cp_comm(std::string_view name) {
  for (CpComm c : {CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p, CpComm::all_gather})
    if (name == cp_comm_name(c)) return c;
  throw Error(Errc::invalid_argument,
              "unknown cp_comm_type '" + std::string(name) + "': expected p2p, a2a, a2a+p2p or all_gather");
}

}  // namespace hcp

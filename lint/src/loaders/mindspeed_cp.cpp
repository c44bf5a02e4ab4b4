// MindSpeed's context-parallel algorithms in Megatron's terms (Ascend/MindSpeed features_manager/context_parallel,
// read at 028de58; MindSpeed-LLM c77308a):
// - megatron_cp_algo (the default in the feature-manager path) is Megatron's ring: p2p;
// - ulysses_cp_algo is an all-to-all over the whole CP group (core/context_parallel/ulysses_context_parallel.py):
//   a2a;
// - hybrid_cp_algo is Ulysses inside contiguous groups of --ulysses-degree-in-cp ranks and a ring across them
//   (core/context_parallel/model_parallel_utils.py:100-118): a2a+p2p with hierarchical sizes [U, cp / U], the order
//   Megatron uses;
// - kvallgather_cp_algo gathers K and V: all_gather;
// - adaptive_cp_algo / hybrid_adaptive_cp_algo are MindSpeed's own schemes: unknown to Megatron's rules.
#include "mindspeed_cp.hpp"

#include <optional>
#include <string>

namespace hcp::lint {

void apply_mindspeed_cp(ConfigTree& tree) {
  const Setting* algo = tree.find("mindspeed.context_parallel_algo");
  const Setting* degree = tree.find("mindspeed.ulysses_degree_in_cp");
  if (!algo) {
    if (degree) tree.remove("mindspeed.ulysses_degree_in_cp");
    return;
  }
  Setting comm = *algo;
  comm.key = "model.cp_comm_type";
  const std::string name = algo->value.text;
  std::optional<Setting> sizes;
  if (algo->provenance == Provenance::unknown) {
    // unknown stays unknown
  } else if (name == "megatron_cp_algo") {
    comm.value = Value::make_string("p2p", algo->value.loc);
  } else if (name == "ulysses_cp_algo") {
    comm.value = Value::make_string("a2a", algo->value.loc);
  } else if (name == "kvallgather_cp_algo") {
    comm.value = Value::make_string("all_gather", algo->value.loc);
  } else if (name == "hybrid_cp_algo") {
    comm.value = Value::make_string("a2a+p2p", algo->value.loc);
    // [U, cp / U]; MindSpeed asserts cp % U == 0 and cp / U > 1 (context_parallel_feature.py:58-80): a U that does
    // not divide cp gives sizes whose product is not cp (HCP002).
    const Setting* cp = tree.find("model.context_parallel_size");
    Setting s = degree ? *degree : *algo;
    s.key = "model.hierarchical_context_parallel_sizes";
    if (!degree) {
      s.value = Value::make_null(algo->key_loc);  // MindSpeed refuses hybrid without a degree: HCP001 says so
    } else if (degree->provenance == Provenance::unknown || !cp || cp->provenance == Provenance::unknown ||
               degree->value.kind != Value::Kind::integer || cp->value.kind != Value::Kind::integer ||
               degree->value.integer <= 0) {
      s.provenance = Provenance::unknown;
      s.why = "--ulysses-degree-in-cp or --context-parallel-size is not known here";
      s.value = Value::make_null(s.key_loc);
    } else {
      const int64_t u = degree->value.integer, ring = cp->value.integer / u;
      s.value = Value::make_list({Value::make_int(u, std::to_string(u), degree->value.loc),
                                  Value::make_int(ring, std::to_string(ring), cp->value.loc)},
                                 degree->value.loc);
      if (degree->provenance == Provenance::defaulted || cp->provenance == Provenance::defaulted) {
        s.provenance = Provenance::defaulted;
      }
    }
    s.spelled = "--ulysses-degree-in-cp (MindSpeed hybrid_cp_algo: [ulysses degree, cp / degree])";
    if (s.value.kind != Value::Kind::null || s.provenance == Provenance::unknown) sizes = std::move(s);
  } else {
    comm.provenance = Provenance::unknown;
    comm.why = "MindSpeed's " + name + " is a scheme of its own";
    comm.value = Value::make_null(algo->key_loc);
  }
  Setting marker = *algo;
  marker.key = "framework.attention";
  marker.value = Value::make_string("MindSpeed", algo->key_loc);
  marker.provenance = Provenance::literal;
  tree.set(std::move(marker));
  tree.remove("mindspeed.context_parallel_algo");
  tree.remove("mindspeed.ulysses_degree_in_cp");
  tree.set(std::move(comm));
  if (sizes) tree.set(std::move(*sizes));
}

}  // namespace hcp::lint

// hcp_<struct>_init: the _INIT macros' defaults as functions, for languages that cannot expand C macros.
#include "guard.hpp"
#include "struct_versions.hpp"

using namespace hcp::capi;

// One definition per struct: the defaults are exactly the header's _INIT macro, so the two cannot disagree.
#define HCP_DEFINE_INIT(NAME, INIT)                                                      \
  HCP_API hcp_status hcp_##NAME##_init(hcp_##NAME* out, size_t struct_size) {           \
    return guarded("hcp_" #NAME "_init", [&] {                                          \
      init_versioned(out, struct_size, hcp_##NAME INIT, "hcp_" #NAME "_init");          \
    });                                                                                  \
  }

extern "C" {
HCP_DEFINE_INIT(parallel_config, HCP_PARALLEL_CONFIG_INIT)
HCP_DEFINE_INIT(rank_coords, HCP_RANK_COORDS_INIT)
HCP_DEFINE_INIT(locality, HCP_LOCALITY_INIT)
HCP_DEFINE_INIT(lint_options, HCP_LINT_OPTIONS_INIT)
HCP_DEFINE_INIT(lint_diagnostic, HCP_LINT_DIAGNOSTIC_INIT)
HCP_DEFINE_INIT(logscan_options, HCP_LOGSCAN_OPTIONS_INIT)
HCP_DEFINE_INIT(plan_options, HCP_PLAN_OPTIONS_INIT)
HCP_DEFINE_INIT(logscan_event, HCP_LOGSCAN_EVENT_INIT)
HCP_DEFINE_INIT(tensor, HCP_TENSOR_INIT)
HCP_DEFINE_INIT(attn_options, HCP_ATTN_OPTIONS_INIT)
HCP_DEFINE_INIT(cp_context_options, HCP_CP_CONTEXT_OPTIONS_INIT)
HCP_DEFINE_INIT(attn_simulate_options, HCP_ATTN_SIMULATE_OPTIONS_INIT)
HCP_DEFINE_INIT(comm_callbacks, HCP_COMM_CALLBACKS_INIT)
}

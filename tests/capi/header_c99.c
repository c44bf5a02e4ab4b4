/* Compiled with -std=c99 -pedantic -Werror: the umbrella header is plain C. Uses every type and macro. */
#include <hcp/hcp.h>

int hcp_header_c99_probe(void);

int hcp_header_c99_probe(void) {
  hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
  hcp_rank_coords coords = HCP_RANK_COORDS_INIT;
  hcp_locality locality = HCP_LOCALITY_INIT;
  hcp_plan_options plan = HCP_PLAN_OPTIONS_INIT;
  hcp_logscan_options scan = HCP_LOGSCAN_OPTIONS_INIT;
  hcp_topology* topology = NULL;
  hcp_status status = HCP_OK;
  hcp_group_kind kind = HCP_GROUP_HCP;
  hcp_order order = HCP_ORDER_TP_CP_EP_PP_DP;
  (void)topology;
  (void)kind;
  (void)order;
  return (int)config.struct_size + (int)coords.struct_size + (int)locality.struct_size + (int)status +
         (int)plan.struct_size + (int)plan.window + (int)scan.series +
         HCP_VERSION_NUMBER;
}

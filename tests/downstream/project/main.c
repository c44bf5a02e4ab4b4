#include <hcp/hcp.h>
#include <stdio.h>

int main(void) {
  const int64_t sizes[2] = {2, 2};
  hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
  hcp_topology* topology = NULL;
  int64_t group[2];
  size_t n = 0;
  config.world_size = 8;
  config.pp = 2;
  config.cp = 4;
  config.hcp_sizes = sizes;
  config.num_hcp_levels = 2;
  if (hcp_topology_create(&topology, &config) != HCP_OK ||
      hcp_topology_group_of(group, 2, &n, topology, 6, HCP_GROUP_HCP, 1) != HCP_OK) {
    fprintf(stderr, "hcp failed: %s\n", hcp_last_error());
    return 1;
  }
  printf("downstream: hcp %s, rank 6 p2p group [%lld, %lld]\n", hcp_version_string(), (long long)group[0],
         (long long)group[1]);
  hcp_topology_destroy(topology);
  return 0;
}

/* Uses the hcp C ABI to print where one rank sits in a hierarchical CP layout and whether its all-to-all level
 * stays inside a node. Build against an installed hcp with find_package(hcp) (see tests/downstream) or the build
 * tree. Usage: topology_demo [rank] */
#include <hcp/hcp.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char* what, hcp_status status) {
  fprintf(stderr, "%s failed: %s: %s\n", what, hcp_status_string(status), hcp_last_error());
  return 1;
}

int main(int argc, char** argv) {
  const int64_t sizes[2] = {2, 8}; /* [a2a, p2p] */
  const int64_t rank = argc > 1 ? strtoll(argv[1], NULL, 10) : 37;
  hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
  hcp_topology* topology = NULL;
  hcp_rank_coords coords = HCP_RANK_COORDS_INIT;
  hcp_locality locality = HCP_LOCALITY_INIT;
  int64_t members[16];
  size_t count = 0;
  int32_t level;
  hcp_status status;

  config.world_size = 64;
  config.tp = 4;
  config.cp = 16;
  config.hcp_sizes = sizes;
  config.num_hcp_levels = 2;

  if (hcp_version_number() / 100 != HCP_VERSION_NUMBER / 100) {
    fprintf(stderr, "library version %s does not match header %s\n", hcp_version_string(), HCP_VERSION_STRING);
    return 1;
  }
  status = hcp_topology_create(&topology, &config);
  if (status != HCP_OK) return fail("hcp_topology_create", status);

  status = hcp_topology_coords(&coords, topology, rank);
  if (status != HCP_OK) {
    hcp_topology_destroy(topology);
    return fail("hcp_topology_coords", status);
  }
  printf("rank %lld: tp %lld, cp %lld, dp %lld, pp %lld\n", (long long)rank, (long long)coords.tp,
         (long long)coords.cp, (long long)coords.dp, (long long)coords.pp);
  for (level = 0; level < 2; ++level) {
    size_t i;
    status = hcp_topology_group_of(members, 16, &count, topology, rank, HCP_GROUP_HCP, level);
    if (status == HCP_OK) status = hcp_topology_locality(&locality, topology, HCP_GROUP_HCP, level);
    if (status != HCP_OK) {
      hcp_topology_destroy(topology);
      return fail("hcp_topology_group_of", status);
    }
    printf("level %d (%s):", (int)level, level == 0 ? "a2a" : "p2p");
    for (i = 0; i < count; ++i) printf(" %lld", (long long)members[i]);
    printf("  [%lld of %lld groups cross nodes]\n", (long long)locality.groups_crossing_nodes,
           (long long)locality.groups);
  }
  hcp_topology_destroy(topology);
  return 0;
}

#!/usr/bin/env python3
"""Prints the hierarchical CP groups of one rank and checks that the a2a level stays inside a node.

Run from a source checkout after building (the bindings find build/capi/libhcp.so), or set HCP_LIBRARY:
    PYTHONPATH=bindings/python python3 examples/python/topology_demo.py
"""

import hcp

layout = hcp.Topology(world_size=64, tp=4, cp=16, hcp_sizes=[2, 8], gpus_per_node=8)
rank = 37
print(f"rank {rank}: {layout.coords(rank)}")
for level, name in enumerate(("a2a", "p2p")):
    loc = layout.locality(level)
    print(f"level {level} ({name}): {layout.group_of(rank, 'hcp', level)} "
          f"intra_node={loc['intra_node']} ({loc['groups_crossing_nodes']} of {loc['groups']} groups cross nodes)")

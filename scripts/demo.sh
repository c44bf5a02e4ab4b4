#!/usr/bin/env bash
# Sets everything up (missing Debian packages, configure, incremental build) and runs the main job on the built-in
# example inputs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_setup
hcp=$HCP_BUILD/cli/hcp

echo "== The hierarchical CP layout of Megatron-LM's functional test (tp 1, pp 2, cp 4, a2a+p2p [2, 2])"
"$hcp" groups --world-size 8 --pp 2 --cp 4 --hcp-sizes 2,2
echo
echo "== A large layout whose a2a level leaves the node: tp 8 * a2a 2 = 16 > 8 GPUs per node"
"$hcp" groups --world-size 131072 --tp 8 --pp 8 --cp 16 --hcp-sizes 2,8
echo
echo "== One rank's view, as JSON"
"$hcp" groups --world-size 64 --tp 4 --cp 16 --hcp-sizes 2,8 --rank 37 --format json
echo
echo "== hcp-lint on good configs (every input format) and on broken ones"
"$HCP_BUILD/cli/hcp-lint" --strict "$HCP_ROOT/examples/configs/good/hcp_bridge.toml" \
  "$HCP_ROOT/examples/configs/good/hcp_bridge_override.yaml" "$HCP_ROOT/examples/configs/good/hcp_bridge_recipe.py"
"$HCP_BUILD/cli/hcp-lint" --strict --te-version 2.4.0 "$HCP_ROOT/examples/configs/good/hcp_megatron_lm.sh"
"$HCP_BUILD/cli/hcp-lint" --strict --overrides-file "$HCP_ROOT/examples/configs/good/hcp_overrides.txt" \
  --nodes 4 --gpus-per-node 8 --te-version 2.4.0
# The broken examples are meant to fail: show the findings, and check the exit code says so.
set +e
"$HCP_BUILD/cli/hcp-lint" --color never "$HCP_ROOT/examples/configs/broken"
status=$?
set -e
[ "$status" -eq 1 ] || { echo "hcp-lint on the broken examples exited $status, expected 1" >&2; exit 1; }
echo
echo "== hcp-logscan: a Megatron run with hierarchical CP active, and Megatron-Bridge issue 2667 (CP silently off)"
"$HCP_BUILD/cli/hcp-logscan" --expect hcp "$HCP_ROOT/tests/logscan/fixtures/megatron_hcp_active.log"
set +e
"$HCP_BUILD/cli/hcp-logscan" "$HCP_ROOT/tests/logscan/fixtures/bridge_issue_2667.log"
status=$?
set -e
[ "$status" -eq 1 ] || { echo "hcp-logscan on the issue-2667 log exited $status, expected 1" >&2; exit 1; }

echo
echo "== hcp attn: hierarchical CP attention (a2a+p2p [2,4]) on 8 in-process ranks, checked against one rank"
"$HCP_BUILD/cli/hcp" attn --cp 8 --hcp-sizes 2,4 --comm a2a+p2p --seq 2048 --heads 8 --kv-heads 8 --head-dim 128 \
  --causal --backward --check --bench
echo
echo "== The C ABI from C and from Python"
"$HCP_BUILD/examples/topology_demo" 37
HCP_LIBRARY=$HCP_BUILD/capi/libhcp.so PYTHONPATH=$HCP_ROOT/bindings/python python3 "$HCP_ROOT/examples/python/topology_demo.py"

#!/usr/bin/env bash
# Builds and tests the Rust binding against the libhcp.so in LIB_DIR, then runs the example:
#   bash bindings/rust/run_tests.sh build/capi
# Cargo's output goes to $CARGO_TARGET_DIR, by default LIB_DIR/../rust-target (the build tree), so that a CI clone
# builds nothing inside the source tree. The cargo on PATH is used; rustc 1.63 (Debian 12) is the oldest supported.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 LIB_DIR (the directory holding libhcp.so)" >&2
  exit 2
fi
lib_dir=$(cd "$1" && pwd)
if [ ! -e "$lib_dir/libhcp.so" ]; then
  echo "$0: no libhcp.so in $lib_dir" >&2
  exit 1
fi
export HCP_LIB_DIR=$lib_dir
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$lib_dir/../rust-target}
cd "$(dirname "${BASH_SOURCE[0]}")"
# --locked: Cargo.lock is committed and must not need changes.
nice "${CARGO:-cargo}" test --offline --locked
nice "${CARGO:-cargo}" run --offline --locked --example hcp_demo

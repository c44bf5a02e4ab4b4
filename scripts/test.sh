#!/usr/bin/env bash
# Sets everything up and runs every test: ctest (C++, C ABI, CLI golden files, Python unittest suites).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_install_cargo
hcp_install_chromium
hcp_setup
cd "$HCP_BUILD"
ctest --output-on-failure -j "$HCP_JOBS" "$@"

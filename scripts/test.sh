#!/usr/bin/env bash
# Sets everything up and runs every test: ctest (C++, C ABI, CLI golden files, Python unittest suites, and the
# release artefacts of scripts/package.sh, built first, installed on clean systems: tests/install).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_install_cargo
hcp_install_chromium
hcp_setup
bash "$HCP_ROOT/scripts/package.sh"
cd "$HCP_BUILD"
ctest --output-on-failure -j "$HCP_JOBS" "$@"

#!/usr/bin/env bash
# Builds the project with AddressSanitizer + UndefinedBehaviorSanitizer (g++) in build-asan/ and runs the C++ test
# suites there. Skipped under the sanitizers: the Python suites and the downstream-install test (they load
# libhcp.so into programs built without the sanitizer runtime), and the page test (it checks in a browser what the
# CLI golden cases already render under the sanitizers) - the regular build runs them.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_install_missing_packages
asan_build=${HCP_ASAN_BUILD:-$HCP_ROOT/build-asan}
hcp_configure_sanitized "$asan_build" \
  "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" "-fsanitize=address,undefined"
cmake --build "$asan_build" -j "$HCP_JOBS"
cd "$asan_build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$HCP_JOBS" -E '^(python\.|install\.|examples\.python|rust\.|pages\.chromium$)'

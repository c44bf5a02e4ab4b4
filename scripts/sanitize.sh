#!/usr/bin/env bash
# Builds the project with AddressSanitizer + UndefinedBehaviorSanitizer (g++) in build-asan/ and runs the C++ test
# suites there. Skipped under the sanitizers: the Python suites and the downstream-install test (they load
# libhcp.so into programs built without the sanitizer runtime) - the regular build runs them.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_install_missing_packages
asan_build=${HCP_ASAN_BUILD:-$HCP_ROOT/build-asan}
if [ ! -f "$asan_build/CMakeCache.txt" ]; then
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S "$HCP_ROOT" -B "$asan_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHCP_WITH_CUDA=OFF \
    -DHCP_BUILD_BENCH=OFF -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
fi
cmake --build "$asan_build" -j "$HCP_JOBS"
cd "$asan_build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$HCP_JOBS" -E '^(python\.|install\.|examples\.python)'

#!/usr/bin/env bash
# Builds the multi-threaded parts with ThreadSanitizer (g++) in build-tsan/ and runs their suites there: the
# in-process communicator and group building (hcp_comm_tests), the CP attention schemes on in-process ranks
# (hcp_cp_attention_tests) and the CPU kernels, some shapes on several worker threads (hcp_attention_kernel_tests).
# Only these three targets are built: the rest of the code is single-threaded and covered by ASan + UBSan. The CP
# cases on the emulated GPU engine are left out: what they add to the CPU engine's cases is the block emulator
# running kernels (test machinery: fibers on the rank's stream thread), whose every access TSan instruments - five
# minutes for the sixteen cases on 2 cores; the same schemes on the same communicator run here on the CPU engine,
# the emulated engine's exchanges in hcp_comm_tests, and the emulated cases in the other builds. So
# are the packed cases with documents of up to 10k tokens: their threads are those of the smaller packed cases, and
# their single-rank reference alone would take TSan minutes.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_install_missing_packages
tsan_build=${HCP_TSAN_BUILD:-$HCP_ROOT/build-tsan}
hcp_configure_sanitized "$tsan_build" "-fsanitize=thread -fno-omit-frame-pointer" "-fsanitize=thread"
cmake --build "$tsan_build" -j "$HCP_JOBS" --target hcp_comm_tests hcp_cp_attention_tests hcp_attention_kernel_tests
cd "$tsan_build"
# halt_on_error: a race is a failure, not a warning in a log nobody reads.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j "$HCP_JOBS" -L '^hcp_(comm|cp_attention|attention_kernel)_tests$' -E 'emulated_gpu|long_documents'

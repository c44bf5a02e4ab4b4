#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and runs each for SECONDS (default 30), seeded
# from the test fixtures and the crash regressions. A crash or leak fails the run and leaves the input in
# build-fuzz/artifacts/<target>/: copy it to tests/fuzz/regressions/<target>/ once fixed.
# Usage: bash scripts/fuzz.sh [SECONDS] [TARGET...]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-30}
shift || true
# clang and its libFuzzer runtime are needed here only.
HCP_PACKAGES+=(clang libclang-rt-14-dev)
hcp_install_missing_packages
fuzz_build=${HCP_FUZZ_BUILD:-$HCP_ROOT/build-fuzz}
if [ ! -f "$fuzz_build/CMakeCache.txt" ]; then
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link -fno-omit-frame-pointer"
  # -O1 with line tables only (the build type's own -O2 -g came last and won): faster to build, as the sanitizers
  # advise, and the crash reports keep their file:line.
  CC=clang CXX=clang++ cmake -S "$HCP_ROOT" -B "$fuzz_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DHCP_WITH_CUDA=OFF -DHCP_WITH_MPI=OFF -DHCP_BUILD_TESTS=OFF -DHCP_BUILD_BENCH=OFF -DHCP_INSTALL=OFF -DHCP_BUILD_FUZZERS=ON \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_lint_toml fuzz_lint_yaml fuzz_lint_overrides fuzz_lint_megatron fuzz_lint_python
                                     fuzz_lint_config fuzz_logscan fuzz_logscan_prefix fuzz_capi_text)
cmake --build "$fuzz_build" -j "$HCP_JOBS" --target "${targets[@]}"

seeds() {
  case "$1" in
    fuzz_logscan) echo "$HCP_ROOT/tests/logscan/fixtures" ;;
    fuzz_capi_text) echo "$HCP_ROOT/tests/lint/fixtures $HCP_ROOT/tests/logscan/fixtures" ;;
    fuzz_lint_config) echo "$HCP_ROOT/tests/cli/inputs/repo" ;;
    fuzz_lint_megatron | fuzz_lint_yaml) echo "$HCP_ROOT/tests/lint/fixtures $HCP_ROOT/tests/lint/realworld" ;;
    *) echo "$HCP_ROOT/tests/lint/fixtures $HCP_ROOT/examples/configs" ;;
  esac
}

status=0
printf '%-22s %12s %10s %s\n' target executions corpus result
for t in "${targets[@]}"; do
  corpus=$fuzz_build/corpus/$t
  artifacts=$fuzz_build/artifacts/$t/
  mkdir -p "$corpus" "$artifacts"
  # Seeds: every fixture file (flattened), plus the regressions.
  for dir in $(seeds "$t") "$HCP_ROOT/tests/fuzz/regressions/$t"; do
    find "$dir" -type f ! -name README.md -exec cp -n {} "$corpus/" \; 2>/dev/null || true
  done
  log=$fuzz_build/$t.log
  set +e
  # HCP_FUZZ_SEED fixes libFuzzer's mutation sequence (CI), so a run explores what an earlier, longer run with the
  # same seed already explored.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$fuzz_build/tests/fuzz/$t" "$corpus" \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$artifacts" \
    ${HCP_FUZZ_SEED:+-seed=$HCP_FUZZ_SEED} -print_final_stats=1 > "$log" 2>&1
  rc=$?
  set -e
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  size=$(find "$corpus" -type f | wc -l)
  if [ $rc -eq 0 ]; then result=ok; else result="FAILED (see $log)"; status=1; tail -30 "$log"; fi
  printf '%-22s %12s %10s %s\n' "$t" "${execs:-?}" "$size" "$result"
done
exit $status

# Shared by the README commands: install what is missing, configure once, build incrementally.
# Sourced, not executed.
set -euo pipefail

HCP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HCP_BUILD=${HCP_BUILD:-$HCP_ROOT/build}
HCP_JOBS=${HCP_JOBS:-$(nproc)}

# Debian packages the build, tests and benchmarks need (Open MPI: the MPI backend and its multi-process tests; the
# packaging tools: scripts/package.sh and the tests that install its artefacts in clean chroots; python3-torch:
# hcp.torch's tests, for /usr/bin/python3). CUDA and NCCL are not here: they come with the toolkit.
HCP_PACKAGES=(
  g++ cmake ninja-build pkg-config python3 file binutils
  libtomlplusplus-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libre2-dev
  libzstd-dev zstd zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev ripgrep
  libopenmpi-dev openmpi-bin python3-mpi4py
  dpkg-dev python3-build python3-setuptools python3-wheel python3-venv python3-pip debootstrap pre-commit git
  python3-yaml zsh fish shellcheck man-db unicode-data python3-torch
)

hcp_install_missing_packages() {
  local missing=() p
  for p in "${HCP_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "hcp setup: installing missing packages: ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then
    echo "hcp setup: need root to install packages (run as root, or install them first)" >&2
    return 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

hcp_configure_and_build() {
  if [ ! -f "$HCP_BUILD/CMakeCache.txt" ]; then
    cmake -S "$HCP_ROOT" -B "$HCP_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${HCP_CMAKE_ARGS:-}
  fi
  cmake --build "$HCP_BUILD" -j "$HCP_JOBS"
}

hcp_setup() {
  hcp_install_missing_packages
  hcp_configure_and_build
}

# hcp_install_command COMMAND PACKAGE WHY: Debian's PACKAGE when COMMAND is not on PATH (any COMMAND there serves).
# Before the first configure, which registers the tests that need it when it is there.
hcp_install_command() {
  command -v "$1" >/dev/null && return 0
  echo "hcp setup: installing $2 (Debian) for $3"
  if [ "$(id -u)" != 0 ]; then
    echo "hcp setup: need root to install $2 (run as root, or install it first)" >&2
    return 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2"
}

# The Rust binding's tests need cargo: rustup's serves; otherwise Debian's (rustc 1.63, the oldest the crates
# support).
hcp_install_cargo() { hcp_install_command cargo cargo "the Rust binding's tests"; }
# The page tests render hcp's SVG and HTML in a real browser.
hcp_install_chromium() { hcp_install_command chromium chromium "the page tests"; }

# hcp_configure_sanitized DIR COMPILE_FLAGS LINK_FLAGS: configures a sanitizer build (CPU only, no benchmarks) once.
# -O1 -g1, as the sanitizers' documentation advises: with -O2 -g, GCC's variable tracking on the instrumented CPU
# kernels (runtime/src/attention/cpu/dispatch.cpp: every ISA's forward and backward) exceeds its limit and starts
# over - 635 s for that one file against 70 s at -O1 -g1, the long pole of CI; -g1 keeps the line tables that the
# sanitizers' stack traces need.
hcp_configure_sanitized() {
  local dir=$1 flags=$2 link=$3
  [ -f "$dir/CMakeCache.txt" ] && return 0
  cmake -S "$HCP_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHCP_WITH_CUDA=OFF -DHCP_WITH_MPI=OFF \
    -DHCP_BUILD_BENCH=OFF -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link"
}

# The programs scripts/gpu-check.sh runs, and where they are in a build tree.
HCP_GPU_TARGETS=(hcp_cuda_tests hcp_cli attention_cuda_bench hcp_cuda hcp)
HCP_GPU_PROGRAMS=(tests/runtime/hcp_cuda_tests cli/hcp bench/attention_cuda_bench)

# hcp_gpu_build DIR [CMAKE_ARGS...]: configures DIR once for the GPU check (Release, CUDA on, architectures
# HCP_CUDA_ARCHS or 90, Ninja where there is one) and builds the programs it runs.
hcp_gpu_build() {
  local dir=$1 generator=()
  shift
  command -v ninja >/dev/null && generator=(-G Ninja)
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$HCP_ROOT" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DHCP_WITH_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES="${HCP_CUDA_ARCHS:-90}" -DHCP_BUILD_TESTS=ON -DHCP_BUILD_BENCH=ON "$@"
  fi
  cmake --build "$dir" -j "$HCP_JOBS" --target "${HCP_GPU_TARGETS[@]}"
}

# hcp_source_digest: a digest of the sources the GPU programs are built from. gpu-bundle.sh records it and
# gpu-check.sh compares it, so that programs built from other sources than the tree they run in are reported so.
hcp_source_digest() {
  (cd "$HCP_ROOT" && find CMakeLists.txt cmake core runtime capi cli lint logscan bench tests -type f \
     -not -path '*/__pycache__/*' -not -name '*.pyc' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum |
     sha256sum | cut -c1-16)
}

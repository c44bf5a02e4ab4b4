#!/usr/bin/env bash
# Prepares .gpu-bundle/ (ignored by git) for scripts/gpu-check.sh on a GPU machine that can install nothing, such
# as the device machines lent to this project's sessions: the three programs gpu-check runs, built here with CUDA
# (architectures HCP_CUDA_ARCHS, default 90) in build-gpu/; the shared libraries they load that such a machine may
# lack (not libc, libstdc++, the driver, NCCL or cuBLAS, which it has); and the Debian packages of the build's
# libraries, from which gpu-check builds there instead when the programs built here do not start (left out with
# HCP_GPU_BUNDLE_PACKAGES=0: no download, and no build there). Usage: gpu-bundle.sh [DIR], then there:
#   HCP_GPU_BUNDLE=.gpu-bundle bash scripts/gpu-check.sh        (carrying .gpu-bundle)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_install_missing_packages
gpu_build=${HCP_GPU_BUILD:-$HCP_ROOT/build-gpu}
bundle=$(realpath -m "${1:-$HCP_ROOT/.gpu-bundle}")
hcp_gpu_build "$gpu_build"

# Libraries the target machine brings itself: the C and C++ runtimes, the driver, and the large CUDA libraries.
provided='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libcuda|libnccl|libcublas|libcublasLt)\.'
# The build's libraries as Debian packages (headers, CMake files, shared and static libraries), for a build there.
debs=(libtomlplusplus-dev libtomlplusplus3 libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libcli11-dev
      libre2-dev libre2-9 libzstd-dev libzstd1 zlib1g-dev zlib1g libgtest-dev libgmock-dev libbenchmark-dev
      libbenchmark1debian)

if [ -e "$bundle" ] && [ ! -f "$bundle/manifest" ]; then
  echo "hcp gpu-bundle: $bundle exists and is not a bundle; not replacing it" >&2
  exit 1
fi
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/debs"
for program in "${HCP_GPU_PROGRAMS[@]}"; do
  strip -o "$bundle/bin/$(basename "$program")" "$gpu_build/$program"
done
# The GPU module, beside the programs: they load it from their own directory on the first GPU call.
strip --strip-unneeded -o "$bundle/bin/libhcp_cuda.so" "$gpu_build/capi/libhcp_cuda.so"
ldd "$bundle"/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
  [[ $name =~ $provided ]] || cp -L "$path" "$bundle/lib/$name"
done
if [ "${HCP_GPU_BUNDLE_PACKAGES:-1}" != 0 ]; then
  (cd "$bundle/debs" && apt-get download -qq -o APT::Sandbox::User=root "${debs[@]}")
  # The pinned npm tarballs (tree-sitter and its bash grammar): a device cannot download them for a fallback build.
  deps_dir=$(sed -n 's/^HCP_DEPS_DIR:PATH=//p' "$gpu_build/CMakeCache.txt")
  mkdir -p "$bundle/npm"
  if compgen -G "${deps_dir:-$HCP_ROOT/.deps}/*.tgz" >/dev/null; then cp "${deps_dir:-$HCP_ROOT/.deps}"/*.tgz "$bundle/npm/"; fi
fi
nvcc_version=$(sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\(.*\)")/\1/p' "$gpu_build"/CMakeFiles/*/CMakeCUDACompiler.cmake)
architectures=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$gpu_build/CMakeCache.txt")
echo "commit $(git -C "$HCP_ROOT" rev-parse --short HEAD)$(git -C "$HCP_ROOT" diff --quiet HEAD || echo ' with uncommitted changes'),\
 built $(date -u +%Y-%m-%dT%H:%M:%SZ) with nvcc $nvcc_version for CUDA architectures ${architectures//;/ }" >"$bundle/manifest"
hcp_source_digest >"$bundle/sources"
echo "hcp gpu-bundle: $(du -sh "$bundle" | cut -f1) in $bundle ($(ls "$bundle/lib" | tr '\n' ' '))"

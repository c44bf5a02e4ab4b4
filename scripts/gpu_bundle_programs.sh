# Sourced by gpu-check.sh when HCP_GPU_BUNDLE names a bundle made by gpu-bundle.sh: finds, on this machine, the
# libraries the bundle leaves to it (NCCL, cuBLAS: in the CUDA toolkit, the system, or a Python wheel), and either
# runs the programs built with the bundle or, when they do not start here (other system libraries), builds them
# here from its Debian packages, unpacked into the build directory - nothing is installed.

# hcp_find_library SONAME: the directory of the first copy of SONAME in the usual places, then anywhere under
# /usr and /opt (Python wheels such as nvidia-nccl keep theirs in site-packages); fails when there is none.
hcp_find_library() {
  local name=$1 dir
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
             /usr/lib/x86_64-linux-gnu /usr/lib64; do
    [ -e "$dir/$name" ] && { echo "$dir"; return 0; }
  done
  dir=$(find /usr /opt -name "$name" \( -type f -o -type l \) -print -quit 2>/dev/null)
  [ -n "$dir" ] && dirname "$dir"
}

# hcp_bundle_library_path BUNDLE: prints the LD_LIBRARY_PATH under which every program in BUNDLE/bin finds all of
# its libraries; fails, naming them, when some are nowhere here.
hcp_bundle_library_path() {
  local path=$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} round name dir missing  # keeps the driver's path
  for round in 1 2 3; do  # a library found may need others (libcublas needs libcublasLt)
    missing=$(LD_LIBRARY_PATH=$path ldd "$1"/bin/* 2>/dev/null | awk '/not found/ {print $1}' | sort -u)
    [ -z "$missing" ] && { echo "$path"; return 0; }
    for name in $missing; do
      dir=$(hcp_find_library "$name") && path=$path:$dir
    done
  done
  echo "libraries not found here: $(echo "$missing" | tr '\n' ' ')" >&2
  return 1
}

# hcp_bundle_build BUNDLE DIR: builds the programs in DIR from this tree with the bundle's Debian packages
# (unpacked into DIR/deps) and this machine's CUDA toolkit and NCCL.
hcp_bundle_build() {
  local bundle=$1 dir=$2 deb d nccl_dir nccl_include=""
  if ! compgen -G "$bundle/debs/*.deb" >/dev/null; then
    echo "hcp gpu-check: $bundle has no packages to build from (made with HCP_GPU_BUNDLE_PACKAGES=0)" >&2
    return 1
  fi
  mkdir -p "$dir/deps"
  for deb in "$bundle"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/deps"; done
  nccl_dir=$(hcp_find_library libnccl.so.2) || { echo "hcp gpu-check: NCCL (libnccl.so.2) not found" >&2; return 1; }
  for d in "$nccl_dir/../include" /usr/local/cuda/include /usr/include; do
    [ -f "$d/nccl.h" ] && { nccl_include=$(cd "$d" && pwd); break; }
  done
  [ -n "$nccl_include" ] || { echo "hcp gpu-check: nccl.h not found" >&2; return 1; }
  # Without pkg-config: RE2 is then found by header and library under the prefix (cmake/HcpRe2.cmake).
  # The npm tarballs travel in the bundle (cmake/HcpTreeSitter.cmake checks their digests and unpacks them).
  mkdir -p "$dir/npm" && cp "$bundle"/npm/*.tgz "$dir/npm/" 2>/dev/null || true
  hcp_gpu_build "$dir" -DCMAKE_PREFIX_PATH="$dir/deps/usr" -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
    -DHCP_NCCL_INCLUDE_DIR="$nccl_include" -DHCP_NCCL_LIBRARY="$nccl_dir/libnccl.so.2" -DHCP_DEPS_DIR="$dir/npm"
}

#!/usr/bin/env bash
# Builds the release artefacts into dist/ (README "Install"):
#   hcp-tools_V_amd64.deb, libhcpS_V_amd64.deb, libhcp-dev_V_amd64.deb, python3-hcp_V_all.deb   (CPack)
#   hcp-V-linux-x86_64.tar.gz        fully static hcp, hcp-lint, hcp-logscan, man pages, completions
#   hcp-V-py3-none-TAG.whl           the Python package with libhcp.so and the static programs inside
#   SHA256SUMS
# from three builds, configured once and then incremental: the regular build (build/, scripts/setup.sh: the
# library and CLI on Debian's shared libraries, so the .debs are ordinary Debian packages), and two HCP_PORTABLE
# builds on position-independent archives of RE2, yaml-cpp, zstd and zlib (scripts/portable-deps.sh, from Debian's
# sources): build-dist/tools (HCP_TOOLS_ONLY: fully static programs for the tarball and the wheel) and
# build-dist/lib (the wheel's libhcp.so, which then needs only libc and libm; CUDA and MPI off).
# V is the version in hcp/hcp.h, S the soname's.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
hcp_install_missing_packages
dist=${HCP_DIST:-$HCP_ROOT/dist}
builds=${HCP_DIST_BUILD:-$HCP_ROOT/build-dist}
version=$(sed -n 's/^#define HCP_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$HCP_ROOT/capi/include/hcp/hcp.h" |
          paste -sd.)

hcp_configure_and_build
bash "$HCP_ROOT/scripts/portable-deps.sh" "$builds/deps"
portable() {  # DIR CMAKE_ARGS...
  local dir=$1
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$HCP_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
      -DHCP_PORTABLE=ON -DCMAKE_PREFIX_PATH="$builds/deps/prefix" "$@"
  fi
  cmake --build "$dir" -j "$HCP_JOBS"
}
portable "$builds/tools" -DHCP_TOOLS_ONLY=ON
portable "$builds/lib" -DHCP_WITH_CUDA=OFF -DHCP_WITH_MPI=OFF -DHCP_BUILD_TESTS=OFF -DHCP_BUILD_BENCH=OFF \
  -DHCP_INSTALL=OFF

rm -rf "$dist"
mkdir -p "$dist"

# A program that is not fully static would not run everywhere the tarball promises: refuse it here.
static_check() {
  if readelf -l "$1" | grep -q 'INTERP\|DYNAMIC'; then
    echo "package: $1 is not statically linked" >&2
    return 1
  fi
}
static_check "$builds/tools/cli/hcp"

# The Debian packages.
(cd "$HCP_BUILD" && cpack -G DEB -B "$HCP_BUILD/cpack" >/dev/null)
cp "$HCP_BUILD/cpack/"*.deb "$dist/"

# The tarball: the tools build installed under one top folder.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top="hcp-$version-linux-x86_64"
DESTDIR="$stage/root" cmake --install "$builds/tools" --component tools --strip >/dev/null
mv "$stage/root/usr" "$stage/$top"
cp "$HCP_ROOT/README.md" "$stage/$top/"
tar -C "$stage" --owner=0 --group=0 --numeric-owner --sort=name -czf "$dist/$top.tar.gz" "$top"

# The wheel: a copy of the Python package with libhcp.so and the static program inside, tagged by its files.
cp -r "$HCP_ROOT/bindings/python" "$stage/python"
rm -rf "$stage/python/tests" "$stage/python/build" "$stage/python/"*.egg-info
find "$stage/python" -name __pycache__ -prune -exec rm -rf {} +
mkdir -p "$stage/python/hcp/lib" "$stage/python/hcp/bin"
so=$(readlink -f "$builds/lib/capi/libhcp.so")
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
cp "$so" "$stage/python/hcp/lib/$soname"
cp "$builds/tools/cli/hcp" "$stage/python/hcp/bin/hcp"
strip --strip-unneeded "$stage/python/hcp/lib/$soname" "$stage/python/hcp/bin/hcp"
platform=$(python3 "$HCP_ROOT/scripts/wheel_platform.py" "$stage/python/hcp/lib/$soname" "$stage/python/hcp/bin/hcp")
# Debian's build, setuptools and wheel (python3-build etc.), without an isolated environment: nothing is fetched.
(cd "$stage/python" && HCP_WHEEL_PLATFORM=$platform /usr/bin/python3 -m build --no-isolation --wheel \
   --outdir "$dist" . >"$stage/wheel.log" 2>&1) || { cat "$stage/wheel.log" >&2; exit 1; }

(cd "$dist" && sha256sum -- *.deb *.tar.gz *.whl > SHA256SUMS)
echo "package: dist/ ($platform wheel)"
(cd "$dist" && stat -c '  %s  %n' -- *.deb *.tar.gz *.whl)

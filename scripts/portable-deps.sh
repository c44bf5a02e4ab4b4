#!/usr/bin/env bash
# Builds position-independent static archives of the libraries libhcp.so links (RE2, yaml-cpp, zstd, zlib) from
# Debian 12's own source packages, into PREFIX (default build-dist/deps/prefix), for the wheel's libhcp.so: Debian
# ships those archives, but not position-independent, so they cannot go into a shared library. The sources are the
# ones Debian built its binary packages from (`apt-get source`, checked by apt against the signed archive, with
# Debian's patches applied), read through a private source list: the machine's apt configuration is not touched.
# Idempotent: a PREFIX that holds the same package versions is kept.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work=$(realpath -m "${1:-$HCP_ROOT/build-dist/deps}")
prefix=$work/prefix
packages=(re2 yaml-cpp libzstd zlib)

apt_private=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$work/apt/sources"
             -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache" -o "APT::Sandbox::User=root")
mkdir -p "$work/apt/sources" "$work/apt/lists/partial" "$work/apt/cache" "$work/src"
cat > "$work/apt/sources/debian-src.sources" <<SOURCES
Types: deb-src
URIs: ${HCP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt-get "${apt_private[@]}" update -qq
# The exact source versions apt would hand out, and so whether the prefix is current.
versions=$(for p in "${packages[@]}"; do apt-cache "${apt_private[@]}" showsrc "$p" |
                                       sed -n 's/^Version: //p' | sort -V | tail -1 | sed "s/^/$p /"; done)
if [ -f "$prefix/.versions" ] && [ "$(cat "$prefix/.versions")" = "$versions" ]; then
  exit 0
fi
rm -rf "$prefix" "$work/src" "$work/build"
mkdir -p "$work/src" "$work/build"
(cd "$work/src" && apt-get "${apt_private[@]}" source -qq "${packages[@]}" >/dev/null)

build() {  # NAME SOURCE_DIR CMAKE_ARGS...: a static, position-independent Release build installed into $prefix
  local name=$1 src=$2
  shift 2
  cmake -S "$src" -B "$work/build/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF "$@" >/dev/null
  cmake --build "$work/build/$name" -j "$HCP_JOBS" >/dev/null
  cmake --install "$work/build/$name" >/dev/null
}
src() { find "$work/src" -maxdepth 1 -type d -name "$1-*" | head -1; }
# RE2's Unicode and Perl class tables are generated, as Debian's build does (REBUILD_TABLES=1, from unicode-data).
re2=$(src re2)
perl "$re2/re2/make_perl_groups.pl" > "$re2/re2/perl_groups.cc"
for table in casefold groups; do
  /usr/bin/python3 "$re2/re2/make_unicode_$table.py" > "$re2/re2/unicode_$table.cc"
done
build re2 "$re2" -DRE2_BUILD_TESTING=OFF
build yaml-cpp "$(src yaml-cpp)" -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF -DYAML_CPP_BUILD_CONTRIB=OFF
build zstd "$(src libzstd)/build/cmake" -DZSTD_BUILD_SHARED=OFF -DZSTD_BUILD_PROGRAMS=OFF -DZSTD_BUILD_TESTS=OFF
# zlib with its own configure (Debian's source drops the win32 files its CMake build names), static only.
(cd "$(src zlib)" && CFLAGS="-O2 -fPIC" ./configure --static --prefix="$prefix" >/dev/null &&
 make -j "$HCP_JOBS" libz.a >/dev/null && make install >/dev/null)
echo "$versions" > "$prefix/.versions"

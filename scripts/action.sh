#!/usr/bin/env bash
# The steps of action.yml (the GitHub Action), kept here so that tests/install runs exactly them.
#   action.sh install   puts hcp-lint on the job's PATH (GITHUB_PATH): the release tarball of HCP_ACTION_VERSION
#                       (default: this checkout's version) from HCP_RELEASE_BASE (default: the action repository's
#                       GitHub release v<version>), checked against its SHA256SUMS; when the release has no such
#                       asset, a tools-only build of this checkout (HCP_TOOLS_ONLY) instead.
#   action.sh run       hcp-lint --format FORMAT ARGS PATHS; sarif goes to HCP_ACTION_SARIF (a step output).
# A checksum mismatch or a download that fails for another reason than a missing asset fails the step.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=${RUNNER_TEMP:-/tmp}

checkout_version() {
  sed -n 's/^#define HCP_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$root/capi/include/hcp/hcp.h" | paste -sd.
}

add_path() {  # DIR: on PATH for the later steps of the job, and for this one
  if [ -n "${GITHUB_PATH:-}" ]; then echo "$1" >> "$GITHUB_PATH"; fi
  export PATH="$1:$PATH"
}

# fetch URL FILE: 0 when fetched, 2 when there is no such file (HTTP 404, or a missing file:// path), 1 otherwise.
fetch() {
  local code rc=0
  code=$(curl -sSL --retry 3 -w '%{http_code}' -o "$2" "$1") || rc=$?
  [ "$rc" = 37 ] && return 2  # curl: file:// path not found
  if [ "$rc" != 0 ]; then echo "hcp-lint action: $1: curl exit $rc" >&2; return 1; fi
  case "$code" in
    200 | 000) return 0 ;;  # 000: a file:// URL
    404) return 2 ;;
    *) echo "hcp-lint action: $1: HTTP $code" >&2; return 1 ;;
  esac
}

install_release() {
  local version=$1 base=$2 name="hcp-$1-linux-x86_64" dir="$tmp/hcp-action" status=0
  mkdir -p "$dir"
  fetch "$base/$name.tar.gz" "$dir/$name.tar.gz" || status=$?
  [ "$status" = 0 ] || return "$status"
  fetch "$base/SHA256SUMS" "$dir/SHA256SUMS" || { echo "hcp-lint action: $base/SHA256SUMS missing" >&2; return 1; }
  if ! (cd "$dir" && grep " $name.tar.gz\$" SHA256SUMS | sha256sum -c --status -); then
    echo "hcp-lint action: $name.tar.gz does not match the release's SHA256SUMS" >&2
    return 1
  fi
  tar -xzf "$dir/$name.tar.gz" -C "$dir"
  add_path "$dir/$name/bin"
}

install_from_source() {
  echo "hcp-lint action: no release asset for this version; building the tools from the action's checkout"
  local sudo=() packages=(g++ cmake ninja-build pkg-config libtomlplusplus-dev libyaml-cpp-dev nlohmann-json3-dev
                          libcli11-dev libre2-dev libzstd-dev zlib1g-dev)
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}"
  cmake -S "$root" -B "$tmp/hcp-action-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHCP_TOOLS_ONLY=ON
  cmake --build "$tmp/hcp-action-build"
  add_path "$tmp/hcp-action-build/cli"
}

cmd_install() {
  local version=${HCP_ACTION_VERSION:-}
  [ -n "$version" ] || version=$(checkout_version)
  local base=${HCP_RELEASE_BASE:-https://github.com/${HCP_ACTION_REPOSITORY:?no action repository}/releases/download/v$version}
  local status=0
  install_release "$version" "$base" || status=$?
  case "$status" in
    0) ;;
    2) install_from_source ;;
    *) exit 1 ;;
  esac
  hcp-lint --version
}

cmd_run() {
  local format=${HCP_ACTION_FORMAT:-github} args=() paths=()
  read -r -a args <<< "${HCP_ACTION_ARGS:-}"
  read -r -a paths <<< "${HCP_ACTION_PATHS:-.}"
  case "$format" in
    github) hcp-lint --format github "${args[@]}" "${paths[@]}" ;;
    sarif)
      local out=${HCP_ACTION_SARIF:-hcp-lint.sarif} status=0
      hcp-lint --format sarif "${args[@]}" "${paths[@]}" > "$out" || status=$?
      if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "sarif-file=$out" >> "$GITHUB_OUTPUT"; fi
      return "$status"
      ;;
    *) echo "hcp-lint action: format must be github or sarif, got '$format'" >&2; return 2 ;;
  esac
}

case "${1:-}" in
  install) cmd_install ;;
  run) cmd_run ;;
  *) echo "usage: action.sh install|run" >&2; exit 2 ;;
esac

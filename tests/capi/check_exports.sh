#!/usr/bin/env bash
# Compares the dynamic symbols libhcp.so defines with the checked-in list. Update the list deliberately when the
# C ABI grows: `nm -D --defined-only build/capi/libhcp.so | awk '{print $3}' | sed 's/@.*//' | sort`.
set -euo pipefail
lib=$1
expected=$2
actual=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' | grep -v '^HCP_0$' | sort -u)
if ! diff -u "$expected" <(echo "$actual"); then
  echo "exported symbols of $lib differ from $expected (- expected, + actual)" >&2
  exit 1
fi
echo "exported symbols match ($(echo "$actual" | wc -l) symbols)"

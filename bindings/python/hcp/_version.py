"""The package version, read by the build (pyproject.toml) without importing the native library. A test checks
that it equals the C header's HCP_VERSION_* and EXPECTED_VERSION in _native.py."""

VERSION = "0.7.0"

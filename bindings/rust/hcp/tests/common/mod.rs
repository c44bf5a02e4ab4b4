//! Shared by the test binaries: where the repository's inputs are, and a small JSON reader for its fixtures.
#![allow(dead_code)] // each test binary uses part of it

pub mod json;

use std::path::PathBuf;

/// The root of this checkout (hcp sits at <repo>/bindings/rust/hcp).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Reference data computed with Megatron's own code: $HCP_SHARED_DIR, or shared/ beside the checkout.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("HCP_SHARED_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => repo_root().join("../shared"),
    }
}

pub fn logscan_fixtures() -> PathBuf {
    repo_root().join("tests/logscan/fixtures")
}

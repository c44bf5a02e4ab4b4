//! Shared by the test binaries: where the repository's inputs are, and a small JSON reader for its fixtures.
#![allow(dead_code)] // each test binary uses part of it

pub mod json;
pub mod thread_collectives;

use std::path::PathBuf;

/// The root of this checkout (hcp sits at <repo>/bindings/rust/hcp).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Reference data computed with Megatron's own code (tests/fixtures/README.md).
pub fn fixtures_dir() -> PathBuf {
    repo_root().join("tests/fixtures")
}

pub fn logscan_fixtures() -> PathBuf {
    repo_root().join("tests/logscan/fixtures")
}

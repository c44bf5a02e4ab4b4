//! Safe Rust interface to the hcp C ABI (being written).

//! Raw declarations of the hcp C ABI (`capi/include/hcp/hcp.h`, version 0.7): every function, struct, typedef and
//! constant, named as in C. Everything here is `unsafe` to call and follows the header's conventions; the `hcp`
//! crate is the safe interface over it.
//!
//! The build script links libhcp (see `build.rs` for where it looks). The tests compare every declaration with
//! hcp.h, through a C compiler for the layouts and values, so the two cannot drift apart unnoticed.
#![allow(non_camel_case_types)]

#[macro_use]
mod declared;
mod constants;
mod functions;
mod handles;
mod structs;

pub use constants::*;
pub use declared::{DeclaredConstant, DeclaredField, DeclaredFunction, DeclaredStruct, DeclaredTypedef};
pub use functions::*;
pub use handles::*;
pub use structs::*;

//! Safe Rust interface to hcp, the hierarchical context parallelism toolkit, over its C ABI (hcp-sys):
//!
//! - [`Topology`]: the exact Megatron-Core rank layout with hierarchical CP groups;
//! - [`lint_file`] / [`lint_text`]: training configs against the known context-parallel pitfalls;
//! - [`LogScanner`] / [`scan_paths`]: was hierarchical CP really active in a training log?
//! - [`World`], [`CpContext`], [`attention_simulate`]: context-parallel attention on CPU threads;
//! - [`CallbackComm`] over the caller's [`Collectives`]: CP contexts on the groups a job already has;
//! - [`plan`]: which CP layout for a model on a cluster, ranked with the reasons.
//!
//! Every fallible call returns [`Result`]; an [`Error`] carries hcp's status and the message the library left
//! for the failing call (read on the calling thread right after it). Handles are released on drop, and their
//! Send / Sync follow the thread rules of hcp.h (each `unsafe impl` quotes the sentence that allows it):
//!
//! | type | Send | Sync |
//! | --- | --- | --- |
//! | Topology, LintReport, ScanReport, World | yes | yes |
//! | LogScanner, Comm, CallbackComm, CpContext | yes | no |
//!
//! A scanner or a context is used by one thread at a time; each rank's Comm goes to that rank's thread:
//!
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<hcp::LogScanner>();
//! ```
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<hcp::CpContext<'static>>();
//! ```
//! ```compile_fail
//! fn shared<T: Sync>() {}
//! shared::<hcp::Comm<'static>>();
//! ```
//! A Comm and a CpContext cannot outlive their World:
//! ```compile_fail
//! let comm = {
//!     let world = hcp::World::new(1, std::time::Duration::ZERO).unwrap();
//!     world.comm(0).unwrap()
//! }; // `world` dropped here while still borrowed
//! ```

mod attention;
mod callback_comm;
mod config;
mod element;
mod error;
mod ffi;
mod lint;
mod log;
mod logscan;
mod plan;
mod topology;
mod version;
mod world;

pub use attention::{
    attention_simulate, attention_simulate_with_max_logit, packed_rank_indices, AttnBias, AttnMask, AttnShape, CpComm, CpContext, CpRank, Device, Gradients,
    PackedBatch, SimulateOptions, Softmax,
};
pub use callback_comm::{CallbackComm, Collectives};
pub use config::{Order, ParallelConfig};
pub use element::{Bf16, Element, F16};
pub use error::{Error, Result, Status};
pub use lint::{lint_file, lint_text, Diagnostic, LintOptions, LintReport, Severity};
pub use log::{reset_log_callback, set_log_callback, LogLevel};
pub use logscan::{scan_paths, Event, EventKind, LogScanner, ScanReport};
pub use plan::{plan, PlanOptions};
pub use topology::{GroupKind, GroupSize, Locality, Membership, RankCoords, Topology};
pub use version::{header_version, version, Version};
pub use world::{nccl_unique_id, Comm, World};

/// The raw declarations, for what this crate does not wrap (NCCL communicators, CUDA contexts).
pub use hcp_sys as sys;

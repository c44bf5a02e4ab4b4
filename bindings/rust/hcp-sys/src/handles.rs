//! The opaque handle types. Each is only ever used behind a pointer; the marker keeps the compiler from assuming
//! it is Send, Sync or Unpin (the thread rules are in hcp.h and in the safe crate's wrappers).

use std::marker::{PhantomData, PhantomPinned};

macro_rules! opaque {
    ($( $(#[$attr:meta])* $name:ident ),* $(,)?) => {
        $(
            $(#[$attr])*
            #[repr(C)]
            #[allow(non_camel_case_types)]
            pub struct $name {
                _private: [u8; 0],
                _marker: PhantomData<(*mut u8, PhantomPinned)>,
            }
        )*

        /// The names of the opaque types above, for the test that compares them with hcp.h.
        pub const DECLARED_OPAQUE_TYPES: &[&str] = &[$(stringify!($name)),*];
    };
}

opaque! {
    /// Immutable after creation: queries from any number of threads at once.
    hcp_topology,
    /// Immutable: any number of threads may read one report at once.
    hcp_lint_report,
    /// One thread at a time per scanner.
    hcp_logscanner,
    /// Immutable, readable from any number of threads.
    hcp_logscan_report,
    /// An in-process world; each rank's communicator driven by its own thread.
    hcp_world,
    /// A communicator: borrowed from a world, or created / wrapped over NCCL.
    hcp_comm,
    /// One thread at a time per context.
    hcp_cp_context,
}

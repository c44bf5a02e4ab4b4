//! The integer typedefs of hcp.h (every enumeration is passed as an int32_t) and their named values, and the
//! numeric macros.

use crate::declared::{DeclaredConstant, DeclaredTypedef};
use crate::handles::hcp_comm;
use std::os::raw::{c_char, c_void};

// Declares the aliases and records them for the layout test.
macro_rules! typedefs {
    ($( $(#[$attr:meta])* pub type $name:ident = $ty:ty; )*) => {
        $( $(#[$attr])* #[allow(non_camel_case_types)] pub type $name = $ty; )*

        /// Every type alias above, for the test that compares them with hcp.h.
        pub fn declared_typedefs() -> Vec<DeclaredTypedef> {
            vec![$( DeclaredTypedef {
                name: stringify!($name),
                ty: stringify!($ty),
                size: ::core::mem::size_of::<$name>(),
            } ),*]
        }
    };
}

// Declares the constants and records their values for the layout test.
macro_rules! constants {
    ($( $(#[$attr:meta])* pub const $name:ident : $ty:ty = $value:expr; )*) => {
        $( $(#[$attr])* pub const $name: $ty = $value; )*

        /// Every numeric constant above, for the test that compares them with hcp.h.
        pub fn declared_constants() -> Vec<DeclaredConstant> {
            vec![$( DeclaredConstant { name: stringify!($name), ty: stringify!($ty), value: $name as i64 } ),*]
        }
    };
}

typedefs! {
    /// An `hcp_status_code` value; `HCP_OK` is 0.
    pub type hcp_status = i32;
    pub type hcp_order = i32;
    pub type hcp_group_kind = i32;
    pub type hcp_severity = i32;
    /// The level passed to the log callback (`HCP_LOG_ERROR` .. `HCP_LOG_DEBUG`).
    pub type hcp_log_level = i32;
    pub type hcp_logscan_event_kind = i32;
    pub type hcp_dtype = i32;
    pub type hcp_device = i32;
    /// Attention sinks (`HCP_SOFTMAX_VANILLA` .. `HCP_SOFTMAX_LEARNABLE`, since 0.8).
    pub type hcp_softmax_type = i32;
    pub type hcp_cp_comm = i32;
    /// The log callback; `None` is C's NULL (restores the default, stderr).
    pub type hcp_log_fn = Option<unsafe extern "C" fn(hcp_log_level, *const c_char, *mut c_void)>;
    /// The functions of `hcp_comm_callbacks` (a communicator made of the caller's functions, since 0.8); each
    /// gets the struct's `user` first and returns 0 on success.
    pub type hcp_comm_send_recv_fn = Option<
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, i32, *mut c_void, usize, i32, *mut c_void) -> i32,
    >;
    pub type hcp_comm_stream_fn = Option<unsafe extern "C" fn(*mut c_void, *mut c_void) -> i32>;
    pub type hcp_comm_exchange_fn =
        Option<unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void, usize, *mut c_void) -> i32>;
    pub type hcp_comm_reduce_scatter_fn =
        Option<unsafe extern "C" fn(*mut c_void, *const f32, *mut f32, usize, *mut c_void) -> i32>;
    pub type hcp_comm_split_fn =
        Option<unsafe extern "C" fn(*mut c_void, i32, i32, *mut *mut hcp_comm, *mut c_void) -> i32>;
    pub type hcp_comm_abort_fn = Option<unsafe extern "C" fn(*mut c_void, *const c_char)>;
    pub type hcp_comm_error_message_fn = Option<unsafe extern "C" fn(*mut c_void) -> *const c_char>;
    pub type hcp_comm_release_fn = Option<unsafe extern "C" fn(*mut c_void)>;
}

constants! {
    pub const HCP_VERSION_MAJOR: u32 = 0;
    pub const HCP_VERSION_MINOR: u32 = 7;
    pub const HCP_VERSION_PATCH: u32 = 0;
    /// The header's version; compare with `hcp_version_number()` of the loaded library.
    pub const HCP_VERSION_NUMBER: u32 = HCP_VERSION_MAJOR * 10000 + HCP_VERSION_MINOR * 100 + HCP_VERSION_PATCH;
    pub const HCP_NCCL_UNIQUE_ID_BYTES: usize = 128;
    /// Stands for MPI_COMM_WORLD where an MPI communicator's Fortran handle is expected.
    pub const HCP_MPI_COMM_WORLD: i64 = -1;

    pub const HCP_OK: hcp_status = 0;
    pub const HCP_ERR_INVALID_ARGUMENT: hcp_status = 1;
    pub const HCP_ERR_INVALID_CONFIG: hcp_status = 2;
    pub const HCP_ERR_BUFFER_TOO_SMALL: hcp_status = 3;
    pub const HCP_ERR_OUT_OF_MEMORY: hcp_status = 4;
    pub const HCP_ERR_IO: hcp_status = 5;
    pub const HCP_ERR_PARSE: hcp_status = 6;
    pub const HCP_ERR_UNSUPPORTED: hcp_status = 7;
    pub const HCP_ERR_COMM: hcp_status = 8;
    pub const HCP_ERR_TIMEOUT: hcp_status = 9;
    pub const HCP_ERR_SHAPE: hcp_status = 10;
    pub const HCP_ERR_NOT_FOUND: hcp_status = 11;
    pub const HCP_ERR_INTERNAL: hcp_status = 12;

    pub const HCP_ORDER_TP_CP_EP_DP_PP: hcp_order = 0;
    pub const HCP_ORDER_TP_CP_EP_PP_DP: hcp_order = 1;

    pub const HCP_GROUP_TP: hcp_group_kind = 0;
    pub const HCP_GROUP_CP: hcp_group_kind = 1;
    pub const HCP_GROUP_DP: hcp_group_kind = 2;
    pub const HCP_GROUP_PP: hcp_group_kind = 3;
    pub const HCP_GROUP_DP_CP: hcp_group_kind = 4;
    pub const HCP_GROUP_TP_CP: hcp_group_kind = 5;
    pub const HCP_GROUP_MP: hcp_group_kind = 6;
    pub const HCP_GROUP_TP_DP_CP: hcp_group_kind = 7;
    pub const HCP_GROUP_HCP: hcp_group_kind = 8;

    pub const HCP_SEVERITY_INFO: hcp_severity = 0;
    pub const HCP_SEVERITY_WARNING: hcp_severity = 1;
    pub const HCP_SEVERITY_ERROR: hcp_severity = 2;

    pub const HCP_LOG_ERROR: hcp_log_level = 0;
    pub const HCP_LOG_WARN: hcp_log_level = 1;
    pub const HCP_LOG_INFO: hcp_log_level = 2;
    pub const HCP_LOG_DEBUG: hcp_log_level = 3;

    pub const HCP_LOGSCAN_EVENT_NONE: hcp_logscan_event_kind = 0;
    pub const HCP_LOGSCAN_EVENT_VERDICT: hcp_logscan_event_kind = 1;
    pub const HCP_LOGSCAN_EVENT_FAILURE: hcp_logscan_event_kind = 2;
    pub const HCP_LOGSCAN_EVENT_WARNING: hcp_logscan_event_kind = 3;

    pub const HCP_DTYPE_F32: hcp_dtype = 0;
    pub const HCP_DTYPE_BF16: hcp_dtype = 1;
    pub const HCP_DTYPE_F16: hcp_dtype = 2;

    pub const HCP_DEVICE_CPU: hcp_device = 0;
    pub const HCP_DEVICE_CUDA: hcp_device = 1;

    pub const HCP_SOFTMAX_VANILLA: hcp_softmax_type = 0;
    pub const HCP_SOFTMAX_OFF_BY_ONE: hcp_softmax_type = 1;
    pub const HCP_SOFTMAX_LEARNABLE: hcp_softmax_type = 2;

    pub const HCP_CP_COMM_P2P: hcp_cp_comm = 0;
    pub const HCP_CP_COMM_A2A: hcp_cp_comm = 1;
    /// Needs two hierarchical levels [a2a, p2p].
    pub const HCP_CP_COMM_A2A_P2P: hcp_cp_comm = 2;
    pub const HCP_CP_COMM_ALL_GATHER: hcp_cp_comm = 3;
}

/// "MAJOR.MINOR.PATCH" of the header (its `HCP_VERSION_STRING`).
pub const HCP_VERSION_STRING: &str = "0.7.0";

//! Every function of hcp.h, in the header's order. The conventions (status codes, hcp_last_error, ownership of
//! returned memory, thread rules) are the header's; see its comments.

use crate::constants::*;
use crate::declared::DeclaredFunction;
use crate::handles::*;
use crate::structs::*;
use std::os::raw::{c_char, c_uint, c_void};

// The return type as written, "" when the function returns nothing.
macro_rules! return_type {
    () => {
        ""
    };
    ($ret:ty) => {
        stringify!($ret)
    };
}

// Declares the functions and records their signatures for the test that compares them with hcp.h.
macro_rules! functions {
    ($( $(#[$attr:meta])* pub fn $name:ident( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ty)?; )*) => {
        extern "C" {
            $( $(#[$attr])* pub fn $name($($arg: $ty),*) $(-> $ret)?; )*
        }

        /// Every function above with its signature and address.
        pub fn declared_functions() -> Vec<DeclaredFunction> {
            vec![$( DeclaredFunction {
                name: stringify!($name),
                params: vec![$(stringify!($ty)),*],
                ret: return_type!($($ret)?),
                address: $name as *const (),
            } ),*]
        }
    };
}

functions! {
    // ---- version
    /// The version of the loaded library (compare with `HCP_VERSION_NUMBER`).
    pub fn hcp_version_number() -> c_uint;
    /// "MAJOR.MINOR.PATCH"; static storage.
    pub fn hcp_version_string() -> *const c_char;

    // ---- status and errors
    /// A constant description of a status; never NULL.
    pub fn hcp_status_string(status: hcp_status) -> *const c_char;
    /// The message of the last failed call on this thread, "" if none; valid until the next failing call here.
    pub fn hcp_last_error() -> *const c_char;
    /// Releases memory returned through a `char**`; NULL is accepted.
    pub fn hcp_free(ptr: *mut c_void);

    // ---- parallel configuration
    pub fn hcp_parallel_config_init(config: *mut hcp_parallel_config, struct_size: usize) -> hcp_status;

    // ---- topology
    pub fn hcp_topology_create(out: *mut *mut hcp_topology, config: *const hcp_parallel_config) -> hcp_status;
    pub fn hcp_topology_destroy(topology: *mut hcp_topology);
    pub fn hcp_topology_last_error(out_message: *mut *mut c_char, topology: *const hcp_topology) -> hcp_status;
    pub fn hcp_topology_dp(out_dp: *mut i64, topology: *const hcp_topology) -> hcp_status;
    pub fn hcp_topology_num_levels(out_levels: *mut i32, topology: *const hcp_topology) -> hcp_status;
    pub fn hcp_topology_group_size(
        out_group_size: *mut i64,
        out_group_count: *mut i64,
        topology: *const hcp_topology,
        kind: hcp_group_kind,
        level: i32,
    ) -> hcp_status;
    pub fn hcp_rank_coords_init(coords: *mut hcp_rank_coords, struct_size: usize) -> hcp_status;
    pub fn hcp_topology_coords(out: *mut hcp_rank_coords, topology: *const hcp_topology, rank: i64) -> hcp_status;
    pub fn hcp_topology_membership(
        out_group_index: *mut i64,
        out_rank_in_group: *mut i64,
        topology: *const hcp_topology,
        rank: i64,
        kind: hcp_group_kind,
        level: i32,
    ) -> hcp_status;
    /// A short buffer gives HCP_ERR_BUFFER_TOO_SMALL with the size in `out_needed`.
    pub fn hcp_topology_group_of(
        ranks: *mut i64,
        capacity: usize,
        out_needed: *mut usize,
        topology: *const hcp_topology,
        rank: i64,
        kind: hcp_group_kind,
        level: i32,
    ) -> hcp_status;
    pub fn hcp_topology_groups(
        ranks: *mut i64,
        capacity: usize,
        out_needed: *mut usize,
        topology: *const hcp_topology,
        kind: hcp_group_kind,
        level: i32,
    ) -> hcp_status;
    pub fn hcp_locality_init(locality: *mut hcp_locality, struct_size: usize) -> hcp_status;
    pub fn hcp_topology_locality(
        out: *mut hcp_locality,
        topology: *const hcp_topology,
        kind: hcp_group_kind,
        level: i32,
    ) -> hcp_status;
    /// rank < 0: the whole layout. Release the text with `hcp_free`.
    pub fn hcp_topology_to_json(out_json: *mut *mut c_char, topology: *const hcp_topology, rank: i64) -> hcp_status;
    /// Since 0.7: the layout as one SVG picture; max_nodes <= 0: 16.
    pub fn hcp_topology_to_svg(out_svg: *mut *mut c_char, topology: *const hcp_topology, max_nodes: i64) -> hcp_status;

    // ---- lint
    pub fn hcp_lint_options_init(options: *mut hcp_lint_options, struct_size: usize) -> hcp_status;
    pub fn hcp_lint_diagnostic_init(diagnostic: *mut hcp_lint_diagnostic, struct_size: usize) -> hcp_status;
    pub fn hcp_lint_file(
        out: *mut *mut hcp_lint_report,
        path: *const c_char,
        options: *const hcp_lint_options,
    ) -> hcp_status;
    pub fn hcp_lint_text(
        out: *mut *mut hcp_lint_report,
        text: *const c_char,
        length: usize,
        name: *const c_char,
        options: *const hcp_lint_options,
    ) -> hcp_status;
    pub fn hcp_lint_report_destroy(report: *mut hcp_lint_report);
    pub fn hcp_lint_report_last_error(out_message: *mut *mut c_char, report: *const hcp_lint_report) -> hcp_status;
    pub fn hcp_lint_report_count(out_count: *mut usize, report: *const hcp_lint_report) -> hcp_status;
    pub fn hcp_lint_report_get(
        out: *mut hcp_lint_diagnostic,
        report: *const hcp_lint_report,
        index: usize,
    ) -> hcp_status;
    /// "text", "json", "sarif" or "github"; release with `hcp_free`.
    pub fn hcp_lint_report_render(
        out_text: *mut *mut c_char,
        report: *const hcp_lint_report,
        format: *const c_char,
    ) -> hcp_status;

    // ---- plan (since 0.7)
    pub fn hcp_plan_options_init(options: *mut hcp_plan_options, struct_size: usize) -> hcp_status;
    /// "text", "json" or "html"; top 0: 10 rows. Release with `hcp_free`.
    pub fn hcp_plan(
        out_text: *mut *mut c_char,
        options: *const hcp_plan_options,
        format: *const c_char,
        top: usize,
    ) -> hcp_status;

    // ---- logscan
    pub fn hcp_logscan_options_init(options: *mut hcp_logscan_options, struct_size: usize) -> hcp_status;
    pub fn hcp_logscan_create(out: *mut *mut hcp_logscanner, options: *const hcp_logscan_options) -> hcp_status;
    pub fn hcp_logscan_begin_input(scanner: *mut hcp_logscanner, name: *const c_char) -> hcp_status;
    pub fn hcp_logscan_feed(scanner: *mut hcp_logscanner, data: *const c_void, size: usize) -> hcp_status;
    /// The scanner is spent afterwards (still destroy it).
    pub fn hcp_logscan_finish(out: *mut *mut hcp_logscan_report, scanner: *mut hcp_logscanner) -> hcp_status;
    pub fn hcp_logscan_destroy(scanner: *mut hcp_logscanner);
    pub fn hcp_logscan_last_error(out_message: *mut *mut c_char, scanner: *const hcp_logscanner) -> hcp_status;
    pub fn hcp_logscan_event_init(event: *mut hcp_logscan_event, struct_size: usize) -> hcp_status;
    pub fn hcp_logscan_poll(scanner: *mut hcp_logscanner, out: *mut hcp_logscan_event) -> hcp_status;
    pub fn hcp_logscan_scan_paths(
        out: *mut *mut hcp_logscan_report,
        paths: *const *const c_char,
        num_paths: usize,
        options: *const hcp_logscan_options,
    ) -> hcp_status;
    /// Static storage.
    pub fn hcp_logscan_report_verdict(
        out_verdict: *mut *const c_char,
        report: *const hcp_logscan_report,
    ) -> hcp_status;
    pub fn hcp_logscan_report_render(
        out_text: *mut *mut c_char,
        report: *const hcp_logscan_report,
        format: *const c_char,
    ) -> hcp_status;
    pub fn hcp_logscan_report_destroy(report: *mut hcp_logscan_report);
    pub fn hcp_logscan_report_last_error(
        out_message: *mut *mut c_char,
        report: *const hcp_logscan_report,
    ) -> hcp_status;

    // ---- CP attention: log callback, worlds, communicators, contexts
    pub fn hcp_set_log_callback(callback: hcp_log_fn, user: *mut c_void) -> hcp_status;
    pub fn hcp_tensor_init(tensor: *mut hcp_tensor, struct_size: usize) -> hcp_status;
    /// timeout_ms 0: 60000.
    pub fn hcp_world_create(out: *mut *mut hcp_world, ranks: i32, timeout_ms: i64) -> hcp_status;
    pub fn hcp_world_destroy(world: *mut hcp_world);
    pub fn hcp_world_last_error(out_message: *mut *mut c_char, world: *const hcp_world) -> hcp_status;
    /// Borrowed: owned by the world.
    pub fn hcp_world_comm(out: *mut *mut hcp_comm, world: *mut hcp_world, rank: i32) -> hcp_status;
    pub fn hcp_comm_rank(out_rank: *mut i32, out_size: *mut i32, comm: *const hcp_comm) -> hcp_status;
    pub fn hcp_comm_abort(comm: *mut hcp_comm, reason: *const c_char) -> hcp_status;
    /// Writes HCP_NCCL_UNIQUE_ID_BYTES bytes (C declares the parameter as an array of that size).
    pub fn hcp_nccl_unique_id(out_id: *mut u8) -> hcp_status;
    /// `id` points to HCP_NCCL_UNIQUE_ID_BYTES bytes.
    pub fn hcp_comm_create_nccl(
        out: *mut *mut hcp_comm,
        id: *const u8,
        rank: i32,
        size: i32,
        cuda_stream: *mut c_void,
        timeout_ms: i64,
    ) -> hcp_status;
    pub fn hcp_comm_wrap_nccl(
        out: *mut *mut hcp_comm,
        nccl_comm: *mut c_void,
        cuda_stream: *mut c_void,
        timeout_ms: i64,
    ) -> hcp_status;
    /// MPI (libhcp_mpi.so): `mpi_comm` is a communicator's Fortran handle (MPI_Comm_c2f) or HCP_MPI_COMM_WORLD.
    pub fn hcp_mpi_init(out_initialized_here: *mut i32) -> hcp_status;
    pub fn hcp_mpi_finalize() -> hcp_status;
    pub fn hcp_comm_create_mpi(out: *mut *mut hcp_comm, mpi_comm: i64, timeout_ms: i64) -> hcp_status;
    pub fn hcp_comm_create_nccl_mpi(
        out: *mut *mut hcp_comm,
        mpi_comm: i64,
        cuda_stream: *mut c_void,
        timeout_ms: i64,
    ) -> hcp_status;
    pub fn hcp_comm_callbacks_init(callbacks: *mut hcp_comm_callbacks, struct_size: usize) -> hcp_status;
    pub fn hcp_comm_create_callbacks(out: *mut *mut hcp_comm, callbacks: *const hcp_comm_callbacks) -> hcp_status;
    pub fn hcp_comm_destroy(comm: *mut hcp_comm);
    pub fn hcp_comm_last_error(out_message: *mut *mut c_char, comm: *const hcp_comm) -> hcp_status;
    pub fn hcp_attn_options_init(options: *mut hcp_attn_options, struct_size: usize) -> hcp_status;
    pub fn hcp_cp_context_create(
        out: *mut *mut hcp_cp_context,
        config: *const hcp_parallel_config,
        world_comm: *mut hcp_comm,
        cp_comm: hcp_cp_comm,
    ) -> hcp_status;
    pub fn hcp_cp_context_options_init(options: *mut hcp_cp_context_options, struct_size: usize) -> hcp_status;
    pub fn hcp_cp_context_create_on_groups(
        out: *mut *mut hcp_cp_context,
        cp_group: *mut hcp_comm,
        level_groups: *const *mut hcp_comm,
        num_levels: u32,
        cp_comm: hcp_cp_comm,
        options: *const hcp_cp_context_options,
    ) -> hcp_status;
    pub fn hcp_cp_context_create_with(
        out: *mut *mut hcp_cp_context,
        config: *const hcp_parallel_config,
        world_comm: *mut hcp_comm,
        cp_comm: hcp_cp_comm,
        options: *const hcp_cp_context_options,
    ) -> hcp_status;
    pub fn hcp_cp_context_destroy(context: *mut hcp_cp_context);
    pub fn hcp_cp_context_last_error(out_message: *mut *mut c_char, context: *const hcp_cp_context) -> hcp_status;
    pub fn hcp_cp_context_rank(
        out_cp_rank: *mut i32,
        out_cp_size: *mut i32,
        context: *const hcp_cp_context,
    ) -> hcp_status;
    pub fn hcp_attn_forward(
        context: *mut hcp_cp_context,
        options: *const hcp_attn_options,
        q: *const hcp_tensor,
        k: *const hcp_tensor,
        v: *const hcp_tensor,
        out: *const hcp_tensor,
        lse: *const hcp_tensor,
    ) -> hcp_status;
    pub fn hcp_attn_backward(
        context: *mut hcp_cp_context,
        options: *const hcp_attn_options,
        q: *const hcp_tensor,
        k: *const hcp_tensor,
        v: *const hcp_tensor,
        out: *const hcp_tensor,
        lse: *const hcp_tensor,
        dout: *const hcp_tensor,
        dq: *const hcp_tensor,
        dk: *const hcp_tensor,
        dv: *const hcp_tensor,
    ) -> hcp_status;
    /// The rows of a padded packed batch that CP rank `rank` holds (TE's thd_get_partitioned_indices).
    pub fn hcp_packed_rank_indices(
        cu_seqlens: *const i64,
        cu_seqlens_padded: *const i64,
        num_sequences: u32,
        cp: i32,
        rank: i32,
        out_indices: *mut i64,
        capacity: i64,
        out_count: *mut i64,
    ) -> hcp_status;
    pub fn hcp_attn_simulate_options_init(options: *mut hcp_attn_simulate_options, struct_size: usize) -> hcp_status;
    /// dout NULL: forward only (dq, dk, dv NULL too).
    pub fn hcp_attn_simulate(
        options: *const hcp_attn_simulate_options,
        q: *const hcp_tensor,
        k: *const hcp_tensor,
        v: *const hcp_tensor,
        out: *const hcp_tensor,
        lse: *const hcp_tensor,
        dout: *const hcp_tensor,
        dq: *const hcp_tensor,
        dk: *const hcp_tensor,
        dv: *const hcp_tensor,
    ) -> hcp_status;
}

//! The versioned structs of hcp.h, field for field. Fill them with their `hcp_<struct>_init` function (or zero
//! them and set `struct_size`): zero means "the default" in every optional field, and `reserved*` must stay 0.

use crate::constants::*;
use crate::declared::{DeclaredField, DeclaredStruct};
use std::os::raw::{c_char, c_void};

// Declares the structs #[repr(C)] and records their layout for the layout test.
macro_rules! structs {
    ($( $(#[$attr:meta])* pub struct $name:ident { $( $(#[$fattr:meta])* pub $field:ident : $fty:ty, )* } )*) => {
        $(
            $(#[$attr])*
            #[repr(C)]
            #[derive(Debug, Clone, Copy)]
            #[allow(non_camel_case_types)]
            pub struct $name { $( $(#[$fattr])* pub $field: $fty, )* }
        )*

        /// Every struct above with its Rust layout, for the test that compares it with a C compiler's.
        pub fn declared_structs() -> Vec<DeclaredStruct> {
            vec![$( DeclaredStruct {
                name: stringify!($name),
                size: ::core::mem::size_of::<$name>(),
                align: ::core::mem::align_of::<$name>(),
                fields: vec![$( DeclaredField {
                    name: stringify!($field),
                    ty: stringify!($fty),
                    offset: field_offset!($name, $field),
                    size: field_size!($name, $field),
                } ),*],
            } ),*]
        }
    };
}

structs! {
    /// Since 0.1. Required: world_size, tp, pp, cp (>= 1); the rest 0 for the default.
    pub struct hcp_parallel_config {
        pub struct_size: usize,
        pub world_size: i64,
        pub tp: i64,
        pub pp: i64,
        pub cp: i64,
        /// Must be 1 when cp > 1.
        pub ep: i64,
        pub order: hcp_order,
        /// Entries in hcp_sizes.
        pub num_hcp_levels: u32,
        /// NULL: unset. Copied by `hcp_topology_create`.
        pub hcp_sizes: *const i64,
        /// Ranks per NVLink domain; 0: 8.
        pub gpus_per_node: i64,
    }

    /// A rank's coordinate along each parallel dimension.
    pub struct hcp_rank_coords {
        pub struct_size: usize,
        pub tp: i64,
        pub cp: i64,
        pub dp: i64,
        pub pp: i64,
    }

    /// Whether the groups of a kind stay inside one node.
    pub struct hcp_locality {
        pub struct_size: usize,
        pub group_size: i64,
        /// Last member - first member + 1, in global ranks.
        pub span: i64,
        pub groups: i64,
        /// 0 means every group is inside one node.
        pub groups_crossing_nodes: i64,
    }

    /// Every field after struct_size is optional: NULL / 0 means "not given".
    pub struct hcp_lint_options {
        pub struct_size: usize,
        pub input_format: *const c_char,
        pub overrides: *const *const c_char,
        pub num_overrides: usize,
        pub select: *const c_char,
        pub ignore: *const c_char,
        pub severities: *const c_char,
        pub world_size: i64,
        pub nodes: i64,
        pub gpus_per_node: i64,
        pub te_version: *const c_char,
        pub gpu: *const c_char,
    }

    /// One finding; the strings belong to the report.
    pub struct hcp_lint_diagnostic {
        pub struct_size: usize,
        pub code: *const c_char,
        pub rule: *const c_char,
        pub message: *const c_char,
        pub hint: *const c_char,
        pub file: *const c_char,
        pub line: i32,
        pub col: i32,
        pub severity: hcp_severity,
        /// Written as 0.
        pub reserved0: i32,
    }

    pub struct hcp_logscan_options {
        pub struct_size: usize,
        /// GPU model when the logs do not name it; NULL: from the logs only.
        pub gpu: *const c_char,
        /// Since 0.7: 1 keeps every iteration line's values for the "html" rendering's charts.
        pub series: i32,
        /// Must be 0.
        pub reserved0: i32,
    }

    /// Since 0.7: `hcp_plan`'s inputs; zero (or NULL) leaves a value to the preset's or the plan's default.
    pub struct hcp_plan_options {
        pub struct_size: usize,
        /// A model preset ("llama3-70b", ...) or NULL.
        pub model: *const c_char,
        pub layers: i64,
        pub hidden: i64,
        pub ffn_hidden: i64,
        pub heads: i64,
        pub kv_heads: i64,
        pub head_dim: i64,
        pub vocab: i64,
        /// Required.
        pub seq: i64,
        pub micro_batch: i64,
        pub global_batch: i64,
        /// Sliding window (left); -1: none.
        pub window: i64,
        pub packed: i32,
        pub dtype_bytes: i32,
        /// Required.
        pub nodes: i64,
        pub gpus_per_node: i64,
        /// A GPU preset ("h100", ...) or NULL (then every figure below).
        pub gpu: *const c_char,
        pub peak_tflops: f64,
        pub memory_gib: f64,
        pub nvlink_gbs: f64,
        pub network_gbs: f64,
        /// 0: enumerated.
        pub tp: i64,
        /// 0: enumerated.
        pub pp: i64,
        pub order: *const c_char,
        pub te_version: *const c_char,
        pub full_recompute: i32,
        /// Must be 0.
        pub reserved0: i32,
        pub gemm_efficiency: f64,
        pub attention_efficiency: f64,
        pub memory_fraction: f64,
    }

    /// One live event; the strings belong to the scanner until its next poll, feed, begin_input or finish.
    pub struct hcp_logscan_event {
        pub struct_size: usize,
        pub kind: hcp_logscan_event_kind,
        /// -1 when unknown.
        pub rank: i32,
        pub name: *const c_char,
        pub message: *const c_char,
        /// "" when the event has no place.
        pub file: *const c_char,
        /// 1-based; 0 when none.
        pub line: u64,
    }

    /// A tensor descriptor; strides in elements, 0 for the contiguous stride.
    pub struct hcp_tensor {
        pub struct_size: usize,
        pub data: *mut c_void,
        pub dtype: hcp_dtype,
        pub device: hcp_device,
        pub ndim: i32,
        /// Must be 0.
        pub reserved0: i32,
        pub shape: [i64; 4],
        pub strides: [i64; 4],
    }

    /// Per-call options of forward and backward; `causal` is always read (the init default is 1).
    pub struct hcp_attn_options {
        pub struct_size: usize,
        pub causal: i32,
        /// 0: 1/sqrt(D).
        pub softmax_scale: f32,
        /// 0 or 1: the calling thread only.
        pub kernel_threads: i32,
        /// Must be 0.
        pub reserved0: i32,
        /// Since 0.6: 1: window_left and window_right apply; 0: no window.
        pub sliding_window: i32,
        /// Since 0.6: packed documents (thd); 0: not packed.
        pub num_sequences: u32,
        /// Since 0.6: -1 (unbounded) or >= 0.
        pub window_left: i64,
        /// Since 0.6: -1 (unbounded) or >= 0.
        pub window_right: i64,
        /// Since 0.6: num_sequences + 1 offsets of the real lengths.
        pub cu_seqlens: *const i64,
        /// Since 0.6: where the documents start; NULL: cu_seqlens.
        pub cu_seqlens_padded: *const i64,
        /// Since 0.8: attention sinks; HCP_SOFTMAX_VANILLA: none.
        pub softmax_type: hcp_softmax_type,
        /// Since 0.8: must be 0.
        pub reserved1: i32,
        /// Since 0.8, HCP_SOFTMAX_LEARNABLE: one sink logit per head (host memory).
        pub softmax_offset: *const f32,
        /// Since 0.8, HCP_SOFTMAX_LEARNABLE, backward: the sinks' gradient per head; NULL: not wanted.
        pub d_softmax_offset: *mut f32,
        /// Since 0.8, forward: each head's largest logit over the CP group's batch; NULL: not computed.
        pub max_logit: *mut f32,
        /// Since 0.8: attention bias, float32 host [Bb, Hb, S_local, S] or [1, 1, 1, S]; NULL: none.
        pub attn_bias: *const hcp_tensor,
        /// Since 0.8, backward: the bias's gradient in its shape; NULL: not wanted.
        pub d_attn_bias: *const hcp_tensor,
    }

    /// Where a CP context computes.
    pub struct hcp_cp_context_options {
        pub struct_size: usize,
        pub device: hcp_device,
        /// Must be 0.
        pub reserved0: i32,
        pub cuda_stream: *mut c_void,
    }

    /// A communicator made of the caller's functions (since 0.8): `hcp_comm_create_callbacks`.
    pub struct hcp_comm_callbacks {
        pub struct_size: usize,
        pub user: *mut c_void,
        pub rank: i32,
        pub size: i32,
        pub device: hcp_device,
        /// Must be 0.
        pub reserved0: i32,
        pub cuda_stream: *mut c_void,
        pub send_recv: hcp_comm_send_recv_fn,
        /// None: send_recv completes the exchange.
        pub send_recv_wait: hcp_comm_stream_fn,
        pub all_to_all: hcp_comm_exchange_fn,
        pub all_gather: hcp_comm_exchange_fn,
        pub reduce_scatter_sum_f32: hcp_comm_reduce_scatter_fn,
        pub barrier: hcp_comm_stream_fn,
        /// None: cannot be split (no CP context on it).
        pub split: hcp_comm_split_fn,
        pub abort: hcp_comm_abort_fn,
        pub error_message: hcp_comm_error_message_fn,
        pub release: hcp_comm_release_fn,
    }

    /// Options of `hcp_attn_simulate`; cp and causal are always read, the rest default when 0.
    pub struct hcp_attn_simulate_options {
        pub struct_size: usize,
        pub cp: i32,
        pub cp_comm: hcp_cp_comm,
        pub num_hcp_levels: u32,
        /// Must be 0.
        pub reserved0: i32,
        pub hcp_sizes: *const i64,
        pub causal: i32,
        pub softmax_scale: f32,
        /// 0: 60000.
        pub timeout_ms: i64,
        pub device: hcp_device,
        /// Must be 0.
        pub reserved1: i32,
        /// Since 0.6: 1: window_left and window_right apply; 0: no window.
        pub sliding_window: i32,
        /// Since 0.6: packed documents (thd); 0: not packed.
        pub num_sequences: u32,
        /// Since 0.6: -1 (unbounded) or >= 0.
        pub window_left: i64,
        /// Since 0.6: -1 (unbounded) or >= 0.
        pub window_right: i64,
        /// Since 0.6: num_sequences + 1 offsets of the real lengths.
        pub cu_seqlens: *const i64,
        /// Since 0.6: where the documents start; NULL: cu_seqlens.
        pub cu_seqlens_padded: *const i64,
        /// Since 0.8, as in hcp_attn_options.
        pub softmax_type: hcp_softmax_type,
        /// Must be 0.
        pub reserved2: i32,
        pub softmax_offset: *const f32,
        pub d_softmax_offset: *mut f32,
        pub max_logit: *mut f32,
        /// Since 0.8, as in hcp_attn_options, of the whole sequence.
        pub attn_bias: *const hcp_tensor,
        pub d_attn_bias: *const hcp_tensor,
    }
}

//! hcp plan: which context-parallel layout for a model on a cluster (docs/plan.md).

use crate::error::{check, Result};
use crate::ffi::{c_string, init, opt_ptr, take_string};
use hcp_sys as sys;
use std::ffi::CString;
use std::os::raw::c_char;
use std::ptr;

/// The plan's inputs; `None` (and 0) leave a value to the preset's or the plan's default, as in `hcp_plan_options`.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// A model preset ("llama3-8b", "llama3-70b", "llama3-405b", "qwen2.5-72b").
    pub model: Option<String>,
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
    /// Sliding window (left) in tokens.
    pub window: Option<i64>,
    pub packed: bool,
    /// Required.
    pub nodes: i64,
    pub gpus_per_node: i64,
    /// A GPU preset ("a100", "h100", "h200", "b200", "gb200"); without one, every figure below.
    pub gpu: Option<String>,
    pub peak_tflops: f64,
    pub memory_gib: f64,
    pub nvlink_gbs: f64,
    pub network_gbs: f64,
    pub tp: i64,
    pub pp: i64,
    /// "tp-cp-ep-dp-pp" (None) or "tp-cp-ep-pp-dp".
    pub order: Option<String>,
    pub te_version: Option<String>,
    pub full_recompute: bool,
    /// 0: 2 (bf16).
    pub dtype_bytes: i32,
    /// 0: 0.7, 0.5, 0.9.
    pub gemm_efficiency: f64,
    pub attention_efficiency: f64,
    pub memory_fraction: f64,
}

/// Every layout linted, placed, estimated and ranked: "text" (the first `top` rows), "json" (everything) or
/// "html" (one self-contained page). `top` 0: 10.
pub fn plan(options: &PlanOptions, format: &str, top: usize) -> Result<String> {
    let text = |what: &str, v: &Option<String>| v.as_deref().map(|s| c_string(what, s)).transpose();
    let model: Option<CString> = text("model", &options.model)?;
    let gpu: Option<CString> = text("gpu", &options.gpu)?;
    let te: Option<CString> = text("te_version", &options.te_version)?;
    let order: Option<CString> = text("order", &options.order)?;
    let format = c_string("format", format)?;
    let mut raw: sys::hcp_plan_options = init()?;
    raw.model = opt_ptr(&model);
    // The numeric fields have the same names and meanings on both sides.
    macro_rules! copy {
        ($($field:ident),*) => { $( raw.$field = options.$field; )* };
    }
    copy!(layers, hidden, ffn_hidden, heads, kv_heads, head_dim, vocab, seq, micro_batch, global_batch, nodes);
    copy!(gpus_per_node, peak_tflops, memory_gib, nvlink_gbs, network_gbs, tp, pp, dtype_bytes);
    copy!(gemm_efficiency, attention_efficiency, memory_fraction);
    raw.order = opt_ptr(&order);
    raw.window = options.window.unwrap_or(-1);
    raw.packed = options.packed as i32;
    raw.gpu = opt_ptr(&gpu);
    raw.te_version = opt_ptr(&te);
    raw.full_recompute = options.full_recompute as i32;
    let mut out: *mut c_char = ptr::null_mut();
    check(unsafe { sys::hcp_plan(&mut out, &raw, format.as_ptr(), top) })?;
    Ok(unsafe { take_string(out) })
}

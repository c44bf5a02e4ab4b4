//! Context-parallel attention on the CPU: per-rank contexts over a World, and the whole computation on full
//! tensors (attention_simulate). Tensors are contiguous host slices; their lengths are checked against the shape
//! before the library is called.

use crate::config::ParallelConfig;
use crate::element::Element;
use crate::error::{check, Error, Result};
use crate::ffi::{handle_error, init};
use crate::callback_comm::CallbackComm;
use crate::world::{timeout_ms, Comm};
use hcp_sys as sys;
use std::cell::Cell;
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::ptr;
use std::time::Duration;

/// How the ranks of a CP group exchange keys and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpComm {
    P2p,
    A2a,
    /// Needs two hierarchical levels [a2a, p2p].
    A2aP2p,
    AllGather,
}

impl CpComm {
    fn raw(self) -> sys::hcp_cp_comm {
        match self {
            CpComm::P2p => sys::HCP_CP_COMM_P2P,
            CpComm::A2a => sys::HCP_CP_COMM_A2A,
            CpComm::A2aP2p => sys::HCP_CP_COMM_A2A_P2P,
            CpComm::AllGather => sys::HCP_CP_COMM_ALL_GATHER,
        }
    }
}

/// Where the ranks of a simulation compute (the full tensors stay host memory either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    /// The current CUDA device; `Status::Unsupported` in builds or on machines without it.
    Cuda,
}

impl Device {
    fn raw(self) -> sys::hcp_device {
        match self {
            Device::Cpu => sys::HCP_DEVICE_CPU,
            Device::Cuda => sys::HCP_DEVICE_CUDA,
        }
    }
}

/// q and dq are [batch, seq, heads, head_dim]; k and dk [batch, seq, kv_heads, head_dim]; v and dv
/// [batch, seq, kv_heads, Dv] and out and dout [batch, seq, heads, Dv], Dv = head_dim_v (MLA: v's own head dim,
/// e.g. 128 beside 192) or head_dim when it is 0; lse [batch, heads, seq] f32. `seq` is the rank's local length (its
/// two chunks) for a CpContext and the full length for attention_simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttnShape {
    pub batch: i64,
    pub seq: i64,
    pub heads: i64,
    pub kv_heads: i64,
    pub head_dim: i64,
    pub head_dim_v: i64,
}

impl AttnShape {
    pub fn new(batch: i64, seq: i64, heads: i64, kv_heads: i64, head_dim: i64) -> AttnShape {
        AttnShape { batch, seq, heads, kv_heads, head_dim, head_dim_v: 0 }
    }

    /// The same shape with v's (and out's) head dim `head_dim_v` (MLA).
    pub fn with_head_dim_v(self, head_dim_v: i64) -> AttnShape {
        AttnShape { head_dim_v, ..self }
    }

    /// v's head dim: head_dim_v, or head_dim when that is 0.
    pub fn value_dim(&self) -> i64 {
        if self.head_dim_v != 0 {
            self.head_dim_v
        } else {
            self.head_dim
        }
    }

    /// q and dq.
    pub fn q_dims(&self) -> [i64; 4] {
        [self.batch, self.seq, self.heads, self.head_dim]
    }

    /// k and dk.
    pub fn kv_dims(&self) -> [i64; 4] {
        [self.batch, self.seq, self.kv_heads, self.head_dim]
    }

    /// out and dout.
    pub fn out_dims(&self) -> [i64; 4] {
        [self.batch, self.seq, self.heads, self.value_dim()]
    }

    /// v and dv.
    pub fn v_dims(&self) -> [i64; 4] {
        [self.batch, self.seq, self.kv_heads, self.value_dim()]
    }

    pub fn lse_dims(&self) -> [i64; 3] {
        [self.batch, self.heads, self.seq]
    }

    /// Elements of q (and dq).
    pub fn q_len(&self) -> Result<usize> {
        elements(&self.q_dims())
    }

    /// Elements of k (and dk).
    pub fn kv_len(&self) -> Result<usize> {
        elements(&self.kv_dims())
    }

    /// Elements of out (and dout).
    pub fn out_len(&self) -> Result<usize> {
        elements(&self.out_dims())
    }

    /// Elements of v (and dv).
    pub fn v_len(&self) -> Result<usize> {
        elements(&self.v_dims())
    }

    pub fn lse_len(&self) -> Result<usize> {
        elements(&self.lse_dims())
    }
}

fn elements(dims: &[i64]) -> Result<usize> {
    let mut n: usize = 1;
    for &d in dims {
        let d = usize::try_from(d)
            .map_err(|_| Error::invalid_argument(format!("shape {:?} has a negative extent", dims)))?;
        n = n
            .checked_mul(d)
            .ok_or_else(|| Error::invalid_argument(format!("shape {:?} has more elements than memory", dims)))?;
    }
    Ok(n)
}

fn expect_len(function: &str, what: &str, got: usize, dims: &[i64]) -> Result<()> {
    let want = elements(dims)?;
    if got == want {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "{}: {} has {} elements, its shape {:?} needs {}",
            function, what, got, dims, want
        )))
    }
}

/// A contiguous host tensor over `data` (strides 0: contiguous, hcp.h since 0.5). The library only reads inputs,
/// although `hcp_tensor.data` is a mutable pointer.
fn tensor(data: *const c_void, dtype: sys::hcp_dtype, dims: &[i64]) -> Result<sys::hcp_tensor> {
    let mut t: sys::hcp_tensor = init()?;
    t.data = data as *mut c_void;
    t.dtype = dtype;
    t.device = sys::HCP_DEVICE_CPU;
    t.ndim = dims.len() as i32;
    t.shape[..dims.len()].copy_from_slice(dims);
    Ok(t)
}

// Outputs are passed as pointers from `as_mut_ptr()`, so that what the library writes through was derived from a
// mutable borrow; inputs from `as_ptr()`.
fn q_like<T: Element>(data: *const T, shape: &AttnShape) -> Result<sys::hcp_tensor> {
    tensor(data.cast(), T::DTYPE, &shape.q_dims())
}

fn kv_like<T: Element>(data: *const T, shape: &AttnShape) -> Result<sys::hcp_tensor> {
    tensor(data.cast(), T::DTYPE, &shape.kv_dims())
}

fn out_like<T: Element>(data: *const T, shape: &AttnShape) -> Result<sys::hcp_tensor> {
    tensor(data.cast(), T::DTYPE, &shape.out_dims())
}

fn v_like<T: Element>(data: *const T, shape: &AttnShape) -> Result<sys::hcp_tensor> {
    tensor(data.cast(), T::DTYPE, &shape.v_dims())
}

fn lse_of(data: *const f32, shape: &AttnShape) -> Result<sys::hcp_tensor> {
    tensor(data.cast(), sys::HCP_DTYPE_F32, &shape.lse_dims())
}

/// This rank's position in its CP group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpRank {
    pub rank: i32,
    pub size: i32,
}

/// One rank's CP context on the CPU: the CP group and hierarchical level groups of a config, split from the
/// rank's world communicator. Borrows the World (or the CallbackComm), which must outlive it.
pub struct CpContext<'w> {
    raw: *mut sys::hcp_cp_context,
    _comm: PhantomData<&'w ()>,
    // The raw pointer already makes the type !Sync; this says so where the reason is documented.
    _not_sync: PhantomData<Cell<()>>,
}

// hcp.h: "One thread at a time per context." forward and backward take &mut self, so one thread at a time is
// what the borrow checker allows; the context may move to another thread (Send) but not be shared (not Sync).
unsafe impl<'w> Send for CpContext<'w> {}

impl<'w> CpContext<'w> {
    /// Collective: every rank of the world calls it, each from its own thread, with the same config (whose
    /// world_size must be the world's size). Logs the created groups (see `set_log_callback`).
    pub fn new(comm: &Comm<'w>, config: &ParallelConfig, cp_comm: CpComm) -> Result<CpContext<'w>> {
        Self::create(comm.raw, config, cp_comm)
    }

    /// The same over the caller's collectives (a [`CallbackComm`], collective over its members), which must
    /// outlive the context.
    pub fn on(comm: &'w CallbackComm, config: &ParallelConfig, cp_comm: CpComm) -> Result<CpContext<'w>> {
        Self::create(comm.raw, config, cp_comm)
    }

    /// On groups the caller made, nothing split: `cp`, the CP group in CP rank order, and for `CpComm::A2aP2p` the
    /// level groups `[a2a, p2p]` (empty for the other schemes) with CP rank = a2a rank + a2a size x p2p rank on
    /// every member (Megatron's layout; `Status::InvalidConfig` on every rank otherwise). Collective over `cp`; the
    /// groups must outlive the context.
    pub fn on_groups(cp: &'w CallbackComm, levels: &[&'w CallbackComm], cp_comm: CpComm) -> Result<CpContext<'w>> {
        let raw_levels: Vec<*mut sys::hcp_comm> = levels.iter().map(|c| c.raw).collect();
        let mut raw = ptr::null_mut();
        check(unsafe {
            sys::hcp_cp_context_create_on_groups(
                &mut raw,
                cp.raw,
                raw_levels.as_ptr(),
                raw_levels.len() as u32,
                cp_comm.raw(),
                ptr::null(),
            )
        })?;
        Ok(CpContext { raw, _comm: PhantomData, _not_sync: PhantomData })
    }

    fn create(comm: *mut sys::hcp_comm, config: &ParallelConfig, cp_comm: CpComm) -> Result<CpContext<'w>> {
        let config = config.to_raw()?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::hcp_cp_context_create(&mut raw, &config.raw, comm, cp_comm.raw()) })?;
        Ok(CpContext { raw, _comm: PhantomData, _not_sync: PhantomData })
    }

    pub fn rank(&self) -> Result<CpRank> {
        let (mut rank, mut size) = (0, 0);
        check(unsafe { sys::hcp_cp_context_rank(&mut rank, &mut size, self.raw) })?;
        Ok(CpRank { rank, size })
    }

    /// This rank's dual chunks (chunk r and 2W-1-r of the sequence) of q, k, v in; out and lse out. Collective
    /// over the CP group; ranks that disagree on shapes get `Status::Shape`.
    #[allow(clippy::too_many_arguments)]
    pub fn forward<T: Element>(
        &mut self,
        shape: &AttnShape,
        causal: bool,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &mut [T],
        lse: &mut [f32],
    ) -> Result<()> {
        self.forward_with(shape, &AttnMask::causal(causal), q, k, v, out, lse)
    }

    /// `forward` with a window and packed documents: the shape is then [1, T/cp, H, D] and this rank's rows are
    /// those `packed_rank_indices` gives.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_with<T: Element>(
        &mut self,
        shape: &AttnShape,
        mask: &AttnMask,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &mut [T],
        lse: &mut [f32],
    ) -> Result<()> {
        self.forward_inner(shape, mask, q, k, v, out, lse, None)
    }

    /// `forward_with` that also writes each head's largest logit over the CP group's whole batch to `max_logit`
    /// (Transformer Engine's return_max_logit; one value per head, the same on every rank). Every rank of the
    /// group calls this or none.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_with_max_logit<T: Element>(
        &mut self,
        shape: &AttnShape,
        mask: &AttnMask,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &mut [T],
        lse: &mut [f32],
        max_logit: &mut [f32],
    ) -> Result<()> {
        self.forward_inner(shape, mask, q, k, v, out, lse, Some(max_logit))
    }

    #[allow(clippy::too_many_arguments)]
    fn forward_inner<T: Element>(
        &mut self,
        shape: &AttnShape,
        mask: &AttnMask,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &mut [T],
        lse: &mut [f32],
        max_logit: Option<&mut [f32]>,
    ) -> Result<()> {
        const F: &str = "CpContext::forward";
        expect_len(F, "q", q.len(), &shape.q_dims())?;
        expect_len(F, "k", k.len(), &shape.kv_dims())?;
        expect_len(F, "v", v.len(), &shape.v_dims())?;
        expect_len(F, "out", out.len(), &shape.out_dims())?;
        expect_len(F, "lse", lse.len(), &shape.lse_dims())?;
        let mut options = mask.to_raw()?;
        set_max_logit(&mut options.max_logit, max_logit, shape)?;
        let (tbias, _) = bias_tensors(&mask.bias, None)?;
        options.attn_bias = tensor_ptr(&tbias);
        let (tq, tk, tv) = (q_like(q.as_ptr(), shape)?, kv_like(k.as_ptr(), shape)?, v_like(v.as_ptr(), shape)?);
        let (tout, tlse) = (out_like(out.as_mut_ptr(), shape)?, lse_of(lse.as_mut_ptr(), shape)?);
        check(unsafe { sys::hcp_attn_forward(self.raw, &options, &tq, &tk, &tv, &tout, &tlse) })
    }

    /// From the forward's out and lse and the incoming gradient dout: dq, dk, dv.
    #[allow(clippy::too_many_arguments)]
    pub fn backward<T: Element>(
        &mut self,
        shape: &AttnShape,
        causal: bool,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &[T],
        lse: &[f32],
        dout: &[T],
        dq: &mut [T],
        dk: &mut [T],
        dv: &mut [T],
    ) -> Result<()> {
        self.backward_with(shape, &AttnMask::causal(causal), q, k, v, out, lse, dout, dq, dk, dv)
    }

    /// `backward` with a window, packed documents and attention sinks, as `forward_with`.
    #[allow(clippy::too_many_arguments)]
    pub fn backward_with<T: Element>(
        &mut self,
        shape: &AttnShape,
        mask: &AttnMask,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &[T],
        lse: &[f32],
        dout: &[T],
        dq: &mut [T],
        dk: &mut [T],
        dv: &mut [T],
    ) -> Result<()> {
        self.backward_inner(shape, mask, q, k, v, out, lse, dout, dq, dk, dv, None, None)
    }

    /// `backward_with` for `Softmax::Learnable` sinks that also writes their gradient, one value per head summed
    /// over the whole CP group, to `d_sink`.
    #[allow(clippy::too_many_arguments)]
    pub fn backward_with_sink_gradient<T: Element>(
        &mut self,
        shape: &AttnShape,
        mask: &AttnMask,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &[T],
        lse: &[f32],
        dout: &[T],
        dq: &mut [T],
        dk: &mut [T],
        dv: &mut [T],
        d_sink: &mut [f32],
    ) -> Result<()> {
        self.backward_inner(shape, mask, q, k, v, out, lse, dout, dq, dk, dv, Some(d_sink), None)
    }

    /// `backward_with` with `AttnMask::bias` that also writes the bias's gradient, in its shape, to `d_bias` (a
    /// [1, 1, 1, S] bias's summed over the whole CP group).
    #[allow(clippy::too_many_arguments)]
    pub fn backward_with_bias_gradient<T: Element>(
        &mut self,
        shape: &AttnShape,
        mask: &AttnMask,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &[T],
        lse: &[f32],
        dout: &[T],
        dq: &mut [T],
        dk: &mut [T],
        dv: &mut [T],
        d_bias: &mut [f32],
    ) -> Result<()> {
        self.backward_inner(shape, mask, q, k, v, out, lse, dout, dq, dk, dv, None, Some(d_bias))
    }

    #[allow(clippy::too_many_arguments)]
    fn backward_inner<T: Element>(
        &mut self,
        shape: &AttnShape,
        mask: &AttnMask,
        q: &[T],
        k: &[T],
        v: &[T],
        out: &[T],
        lse: &[f32],
        dout: &[T],
        dq: &mut [T],
        dk: &mut [T],
        dv: &mut [T],
        d_sink: Option<&mut [f32]>,
        d_bias: Option<&mut [f32]>,
    ) -> Result<()> {
        const F: &str = "CpContext::backward";
        for (what, len, dims) in [
            ("q", q.len(), shape.q_dims()),
            ("out", out.len(), shape.out_dims()),
            ("dout", dout.len(), shape.out_dims()),
            ("dq", dq.len(), shape.q_dims()),
            ("k", k.len(), shape.kv_dims()),
            ("v", v.len(), shape.v_dims()),
            ("dk", dk.len(), shape.kv_dims()),
            ("dv", dv.len(), shape.v_dims()),
        ] {
            expect_len(F, what, len, &dims)?;
        }
        expect_len(F, "lse", lse.len(), &shape.lse_dims())?;
        let mut options = mask.to_raw()?;
        set_sink_gradient(&mut options.d_softmax_offset, &mask.softmax, d_sink, shape)?;
        let (tbias, tgrad) = bias_tensors(&mask.bias, d_bias)?;
        options.attn_bias = tensor_ptr(&tbias);
        options.d_attn_bias = tensor_ptr(&tgrad);
        let (tq, tk, tv) = (q_like(q.as_ptr(), shape)?, kv_like(k.as_ptr(), shape)?, v_like(v.as_ptr(), shape)?);
        let tout = out_like(out.as_ptr(), shape)?;
        let (tlse, tdout) = (lse_of(lse.as_ptr(), shape)?, out_like(dout.as_ptr(), shape)?);
        let tdq = q_like(dq.as_mut_ptr(), shape)?;
        let (tdk, tdv) = (kv_like(dk.as_mut_ptr(), shape)?, v_like(dv.as_mut_ptr(), shape)?);
        check(unsafe {
            sys::hcp_attn_backward(self.raw, &options, &tq, &tk, &tv, &tout, &tlse, &tdout, &tdq, &tdk, &tdv)
        })
    }

    /// The message of the last failed call on this context, from whichever thread made it ("" if none).
    pub fn last_error(&self) -> Result<String> {
        handle_error(sys::hcp_cp_context_last_error, self.raw)
    }
}

impl<'w> Drop for CpContext<'w> {
    fn drop(&mut self) {
        unsafe { sys::hcp_cp_context_destroy(self.raw) }
    }
}

/// Sets the window and packed-document fields, which hcp_attn_options and hcp_attn_simulate_options share (hcp.h
/// since 0.6); `?` on a malformed batch.
macro_rules! set_mask {
    ($raw:expr, $window:expr, $packed:expr) => {
        if let Some((left, right)) = $window {
            $raw.sliding_window = 1;
            $raw.window_left = left;
            $raw.window_right = right;
        }
        if let Some(batch) = $packed {
            $raw.num_sequences = batch.documents()?;
            $raw.cu_seqlens = batch.cu_seqlens.as_ptr();
            $raw.cu_seqlens_padded = batch.padded_ptr();
        }
    };
}

/// Attention sinks, as Transformer Engine's softmax_type (hcp.h since 0.8): one more logit per head in every
/// query's softmax denominator, which takes probability mass and carries no value - 0 for `OffByOne`, the given
/// value per head for `Learnable` (gpt-oss's sinks, TE's softmax_offset). The forward's lse is then the sinks'.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Softmax {
    #[default]
    Vanilla,
    OffByOne,
    Learnable(Vec<f32>),
}

/// Sets the sink fields, which hcp_attn_options and hcp_attn_simulate_options share; the offsets point into
/// `softmax`, which the caller keeps borrowed while the options are used.
macro_rules! set_softmax {
    ($raw:expr, $softmax:expr) => {
        match $softmax {
            Softmax::Vanilla => {}
            Softmax::OffByOne => $raw.softmax_type = sys::HCP_SOFTMAX_OFF_BY_ONE,
            Softmax::Learnable(values) => {
                $raw.softmax_type = sys::HCP_SOFTMAX_LEARNABLE;
                $raw.softmax_offset = values.as_ptr();
            }
        }
    };
}

/// Points `slot` (d_softmax_offset) at `d_sink` after checking it against the sinks and the shape.
fn set_sink_gradient(slot: &mut *mut f32, softmax: &Softmax, d_sink: Option<&mut [f32]>, shape: &AttnShape) -> Result<()> {
    let Some(d_sink) = d_sink else { return Ok(()) };
    let Softmax::Learnable(values) = softmax else {
        return Err(Error::invalid_argument("a sink gradient needs Softmax::Learnable sinks".to_string()));
    };
    if d_sink.len() as i64 != shape.heads || values.len() as i64 != shape.heads {
        return Err(Error::invalid_argument(format!(
            "{} sinks and a gradient of {} for {} heads: one of each per head",
            values.len(),
            d_sink.len(),
            shape.heads
        )));
    }
    *slot = d_sink.as_mut_ptr();
    Ok(())
}

/// Points `slot` (the options' max_logit) at `max_logit` after checking its length: one value per head.
fn set_max_logit(slot: &mut *mut f32, max_logit: Option<&mut [f32]>, shape: &AttnShape) -> Result<()> {
    let Some(max_logit) = max_logit else { return Ok(()) };
    if max_logit.len() as i64 != shape.heads {
        return Err(Error::invalid_argument(format!(
            "max_logit holds {} values for {} heads: one per head",
            max_logit.len(),
            shape.heads
        )));
    }
    *slot = max_logit.as_mut_ptr();
    Ok(())
}

/// An attention bias (Transformer Engine's post_scale_bias; hcp.h since 0.8), added to the scaled scores before the
/// softmax: f32 values of `shape` [Bb, Hb, rows, S] - Bb 1 or B, Hb 1 or H; per rank its query rows (S_local) against
/// every key of the sequence, for attention_simulate the whole sequence's rows; or [1, 1, 1, S] (TE's 111s).
#[derive(Debug, Clone, PartialEq)]
pub struct AttnBias {
    pub values: Vec<f32>,
    pub shape: [i64; 4],
}

impl AttnBias {
    pub fn new(values: Vec<f32>, shape: [i64; 4]) -> AttnBias {
        AttnBias { values, shape }
    }
}

/// The descriptors of a bias and of its gradient (same shape), checked against the values' lengths; None without
/// a bias. They point into `bias` and `grad`, which the caller keeps borrowed while they are used.
fn bias_tensors(
    bias: &Option<AttnBias>,
    grad: Option<&mut [f32]>,
) -> Result<(Option<sys::hcp_tensor>, Option<sys::hcp_tensor>)> {
    let Some(bias) = bias else {
        return match grad {
            Some(_) => Err(Error::invalid_argument("a bias gradient needs a bias".to_string())),
            None => Ok((None, None)),
        };
    };
    expect_len("attention bias", "values", bias.values.len(), &bias.shape)?;
    let t = tensor(bias.values.as_ptr().cast(), sys::HCP_DTYPE_F32, &bias.shape)?;
    let g = match grad {
        Some(g) => {
            expect_len("attention bias", "gradient", g.len(), &bias.shape)?;
            Some(tensor(g.as_mut_ptr().cast(), sys::HCP_DTYPE_F32, &bias.shape)?)
        }
        None => None,
    };
    Ok((Some(t), g))
}

fn tensor_ptr(t: &Option<sys::hcp_tensor>) -> *const sys::hcp_tensor {
    t.as_ref().map_or(ptr::null(), |t| t as *const sys::hcp_tensor)
}

/// What a per-rank call masks: causal, a sliding window (left, right; -1 unbounded) and packed documents
/// (hcp.h since 0.6); and its attention sinks and bias (since 0.8).
#[derive(Debug, Clone, PartialEq)]
pub struct AttnMask {
    pub causal: bool,
    pub window: Option<(i64, i64)>,
    pub packed: Option<PackedBatch>,
    pub softmax: Softmax,
    pub bias: Option<AttnBias>,
}

impl AttnMask {
    pub fn causal(causal: bool) -> AttnMask {
        AttnMask { causal, window: None, packed: None, softmax: Softmax::Vanilla, bias: None }
    }

    /// This rank's query rows of an attention bias against every key of the sequence.
    pub fn bias(mut self, bias: AttnBias) -> Self {
        self.bias = Some(bias);
        self
    }

    pub fn softmax(mut self, softmax: Softmax) -> Self {
        self.softmax = softmax;
        self
    }

    pub fn window(mut self, left: i64, right: i64) -> Self {
        self.window = Some((left, right));
        self
    }

    pub fn packed(mut self, batch: PackedBatch) -> Self {
        self.packed = Some(batch);
        self
    }

    /// The C options; they point into `self.packed`, which the caller keeps borrowed while they are used.
    fn to_raw(&self) -> Result<sys::hcp_attn_options> {
        let mut options: sys::hcp_attn_options = init()?;
        options.causal = self.causal as i32;
        set_mask!(options, self.window, &self.packed);
        set_softmax!(options, &self.softmax);
        Ok(options)
    }
}

/// Options of attention_simulate; every `None` is left as `hcp_attn_simulate_options_init` sets it (p2p,
/// causal, scale 1/sqrt(D), 60 s, CPU).
#[derive(Debug, Clone, PartialEq)]
pub struct SimulateOptions {
    /// The number of in-process ranks (>= 1).
    pub cp: i32,
    pub cp_comm: Option<CpComm>,
    /// For a2a+p2p: [a2a, p2p].
    pub hcp_sizes: Option<Vec<i64>>,
    pub causal: Option<bool>,
    pub softmax_scale: Option<f32>,
    pub timeout: Option<Duration>,
    pub device: Option<Device>,
    /// Sliding window (left, right), each -1 for unbounded (hcp.h since 0.6).
    pub window: Option<(i64, i64)>,
    /// Packed documents (thd): the tensors are then [1, T, H, D] with T the padded total (hcp.h since 0.6).
    pub packed: Option<PackedBatch>,
    /// Attention sinks (hcp.h since 0.8); the learnable sinks' gradient goes to `Gradients::d_sink`.
    pub softmax: Softmax,
    /// Attention bias of the whole sequence (hcp.h since 0.8); its gradient goes to `Gradients::d_bias`.
    pub bias: Option<AttnBias>,
}

/// Packed documents, as Transformer Engine's cu_seqlens and cu_seqlens_padded: N + 1 offsets from 0 of the real
/// lengths, and (None: the same) where each document starts, every padded length divisible by 2 x cp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedBatch {
    pub cu_seqlens: Vec<i64>,
    pub cu_seqlens_padded: Option<Vec<i64>>,
}

impl PackedBatch {
    fn documents(&self) -> Result<u32> {
        if self.cu_seqlens.len() < 2 {
            return Err(Error::invalid_argument("cu_seqlens needs at least two offsets".to_string()));
        }
        if let Some(padded) = &self.cu_seqlens_padded {
            if padded.len() != self.cu_seqlens.len() {
                return Err(Error::invalid_argument("cu_seqlens and cu_seqlens_padded differ in length".to_string()));
            }
        }
        u32::try_from(self.cu_seqlens.len() - 1).map_err(|_| Error::invalid_argument("too many documents".to_string()))
    }

    fn padded_ptr(&self) -> *const i64 {
        self.cu_seqlens_padded.as_ref().map_or(std::ptr::null(), |p| p.as_ptr())
    }
}

/// The rows of the padded packed batch that CP rank `rank` of `cp` holds, in its local order (Transformer
/// Engine's thd_get_partitioned_indices): per document, chunk rank then chunk 2cp-1-rank.
pub fn packed_rank_indices(batch: &PackedBatch, cp: i32, rank: i32) -> Result<Vec<i64>> {
    let documents = batch.documents()?;
    let padded = batch.cu_seqlens_padded.as_ref().unwrap_or(&batch.cu_seqlens);
    let total = *padded.last().unwrap_or(&0);
    let capacity = if cp > 0 { (total / i64::from(cp)).max(0) } else { 0 };
    let mut out = vec![0i64; capacity as usize + 1];
    let mut count = 0i64;
    check(unsafe {
        sys::hcp_packed_rank_indices(
            batch.cu_seqlens.as_ptr(),
            batch.padded_ptr(),
            documents,
            cp,
            rank,
            out.as_mut_ptr(),
            capacity,
            &mut count,
        )
    })?;
    out.truncate(count as usize);
    Ok(out)
}

impl SimulateOptions {
    pub fn new(cp: i32) -> SimulateOptions {
        SimulateOptions {
            cp,
            cp_comm: None,
            hcp_sizes: None,
            causal: None,
            softmax_scale: None,
            timeout: None,
            device: None,
            window: None,
            packed: None,
            softmax: Softmax::Vanilla,
            bias: None,
        }
    }

    pub fn softmax(mut self, softmax: Softmax) -> Self {
        self.softmax = softmax;
        self
    }

    pub fn bias(mut self, bias: AttnBias) -> Self {
        self.bias = Some(bias);
        self
    }

    pub fn window(mut self, left: i64, right: i64) -> Self {
        self.window = Some((left, right));
        self
    }

    pub fn packed(mut self, batch: PackedBatch) -> Self {
        self.packed = Some(batch);
        self
    }

    pub fn cp_comm(mut self, cp_comm: CpComm) -> Self {
        self.cp_comm = Some(cp_comm);
        self
    }

    pub fn hcp_sizes(mut self, sizes: &[i64]) -> Self {
        self.hcp_sizes = Some(sizes.to_vec());
        self
    }

    pub fn causal(mut self, causal: bool) -> Self {
        self.causal = Some(causal);
        self
    }

    pub fn softmax_scale(mut self, scale: f32) -> Self {
        self.softmax_scale = Some(scale);
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub fn device(mut self, device: Device) -> Self {
        self.device = Some(device);
        self
    }

    /// The C struct; it points into `self.hcp_sizes` and `self.packed`, which the caller keeps borrowed while it is
    /// used.
    fn to_raw(&self) -> Result<sys::hcp_attn_simulate_options> {
        let mut raw: sys::hcp_attn_simulate_options = init()?;
        raw.cp = self.cp;
        if let Some(comm) = self.cp_comm {
            raw.cp_comm = comm.raw();
        }
        if let Some(sizes) = &self.hcp_sizes {
            raw.num_hcp_levels = u32::try_from(sizes.len())
                .map_err(|_| Error::invalid_argument(format!("{} hcp_sizes do not fit in 32 bits", sizes.len())))?;
            raw.hcp_sizes = sizes.as_ptr();
        }
        if let Some(causal) = self.causal {
            raw.causal = causal as i32;
        }
        if let Some(scale) = self.softmax_scale {
            raw.softmax_scale = scale;
        }
        if let Some(timeout) = self.timeout {
            raw.timeout_ms = timeout_ms(timeout);
        }
        if let Some(device) = self.device {
            raw.device = device.raw();
        }
        set_mask!(raw, self.window, &self.packed);
        set_softmax!(raw, &self.softmax);
        Ok(raw)
    }
}

/// The backward pass of a simulation: the incoming gradient and where dq, dk, dv go - and, for
/// `Softmax::Learnable` sinks, their gradient (one value per head).
pub struct Gradients<'a, T> {
    pub dout: &'a [T],
    pub dq: &'a mut [T],
    pub dk: &'a mut [T],
    pub dv: &'a mut [T],
    pub d_sink: Option<&'a mut [f32]>,
    /// With `SimulateOptions::bias`: the bias's gradient, in its shape.
    pub d_bias: Option<&'a mut [f32]>,
}

impl<'a, T> Gradients<'a, T> {
    pub fn new(dout: &'a [T], dq: &'a mut [T], dk: &'a mut [T], dv: &'a mut [T]) -> Self {
        Gradients { dout, dq, dk, dv, d_sink: None, d_bias: None }
    }

    pub fn with_bias_gradient(mut self, d_bias: &'a mut [f32]) -> Self {
        self.d_bias = Some(d_bias);
        self
    }

    pub fn with_sink_gradient(mut self, d_sink: &'a mut [f32]) -> Self {
        self.d_sink = Some(d_sink);
        self
    }
}

/// The whole CP computation on `options.cp` in-process ranks: full q [B, S, H, D], k, v [B, S, Hkv, D] in; full
/// out and lse [B, H, S] out; with `gradients`, also the full dq, dk, dv.
#[allow(clippy::too_many_arguments)]
pub fn attention_simulate<T: Element>(
    options: &SimulateOptions,
    shape: &AttnShape,
    q: &[T],
    k: &[T],
    v: &[T],
    out: &mut [T],
    lse: &mut [f32],
    gradients: Option<Gradients<'_, T>>,
) -> Result<()> {
    simulate_inner(options, shape, q, k, v, out, lse, gradients, None)
}

/// `attention_simulate` that also writes each head's largest logit over the batch to `max_logit` (Transformer
/// Engine's return_max_logit; one value per head).
#[allow(clippy::too_many_arguments)]
pub fn attention_simulate_with_max_logit<T: Element>(
    options: &SimulateOptions,
    shape: &AttnShape,
    q: &[T],
    k: &[T],
    v: &[T],
    out: &mut [T],
    lse: &mut [f32],
    gradients: Option<Gradients<'_, T>>,
    max_logit: &mut [f32],
) -> Result<()> {
    simulate_inner(options, shape, q, k, v, out, lse, gradients, Some(max_logit))
}

#[allow(clippy::too_many_arguments)]
fn simulate_inner<T: Element>(
    options: &SimulateOptions,
    shape: &AttnShape,
    q: &[T],
    k: &[T],
    v: &[T],
    out: &mut [T],
    lse: &mut [f32],
    gradients: Option<Gradients<'_, T>>,
    max_logit: Option<&mut [f32]>,
) -> Result<()> {
    const F: &str = "attention_simulate";
    expect_len(F, "q", q.len(), &shape.q_dims())?;
    expect_len(F, "k", k.len(), &shape.kv_dims())?;
    expect_len(F, "v", v.len(), &shape.v_dims())?;
    expect_len(F, "out", out.len(), &shape.out_dims())?;
    expect_len(F, "lse", lse.len(), &shape.lse_dims())?;
    if let Some(g) = &gradients {
        expect_len(F, "dout", g.dout.len(), &shape.out_dims())?;
        expect_len(F, "dq", g.dq.len(), &shape.q_dims())?;
        expect_len(F, "dk", g.dk.len(), &shape.kv_dims())?;
        expect_len(F, "dv", g.dv.len(), &shape.v_dims())?;
    }
    let mut raw_options = options.to_raw()?;
    set_max_logit(&mut raw_options.max_logit, max_logit, shape)?;
    let (tq, tk, tv) = (q_like(q.as_ptr(), shape)?, kv_like(k.as_ptr(), shape)?, v_like(v.as_ptr(), shape)?);
    let (tout, tlse) = (out_like(out.as_mut_ptr(), shape)?, lse_of(lse.as_mut_ptr(), shape)?);
    let (tbias, _) = bias_tensors(&options.bias, None)?;
    raw_options.attn_bias = tensor_ptr(&tbias);
    let tgrad: Option<sys::hcp_tensor>;  // lives until the call: raw_options points at it
    let grads = match gradients {
        Some(g) => Some({
            set_sink_gradient(&mut raw_options.d_softmax_offset, &options.softmax, g.d_sink, shape)?;
            if g.d_bias.is_some() {
                tgrad = bias_tensors(&options.bias, g.d_bias)?.1;
                raw_options.d_attn_bias = tensor_ptr(&tgrad);
            }
            [
            out_like(g.dout.as_ptr(), shape)?,
            q_like(g.dq.as_mut_ptr(), shape)?,
            kv_like(g.dk.as_mut_ptr(), shape)?,
            v_like(g.dv.as_mut_ptr(), shape)?,
            ]
        }),
        None => None,
    };
    let grad = |i: usize| grads.as_ref().map_or(ptr::null(), |g| &g[i] as *const sys::hcp_tensor);
    check(unsafe {
        sys::hcp_attn_simulate(&raw_options, &tq, &tk, &tv, &tout, &tlse, grad(0), grad(1), grad(2), grad(3))
    })
}

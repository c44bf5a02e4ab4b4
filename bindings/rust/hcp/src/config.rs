//! The parallel configuration shared by Topology and CpContext.

use crate::error::{Error, Result};
use crate::ffi::init;
use hcp_sys as sys;
use std::marker::PhantomData;

/// How ranks are laid out along the parallel dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// Megatron's default.
    TpCpEpDpPp,
    /// `--use-tp-pp-dp-mapping`.
    TpCpEpPpDp,
}

impl Order {
    pub(crate) fn raw(self) -> sys::hcp_order {
        match self {
            Order::TpCpEpDpPp => sys::HCP_ORDER_TP_CP_EP_DP_PP,
            Order::TpCpEpPpDp => sys::HCP_ORDER_TP_CP_EP_PP_DP,
        }
    }
}

/// world_size and the parallel sizes. Every `None` is left as `hcp_parallel_config_init` sets it (tp, pp, cp,
/// ep 1; order TP-CP-EP-DP-PP; no hierarchical sizes; 8 GPUs per node). Fields are public; the methods of the
/// same names set them in a chain: `ParallelConfig::new(16).tp(2).cp(4).hcp_sizes(&[2, 2])`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParallelConfig {
    pub world_size: i64,
    pub tp: Option<i64>,
    pub pp: Option<i64>,
    pub cp: Option<i64>,
    /// Must be 1 when cp > 1.
    pub ep: Option<i64>,
    pub order: Option<Order>,
    /// Megatron's hierarchical_context_parallel_sizes; their product must equal cp.
    pub hcp_sizes: Option<Vec<i64>>,
    /// Ranks per NVLink domain, for locality.
    pub gpus_per_node: Option<i64>,
}

impl ParallelConfig {
    pub fn new(world_size: i64) -> ParallelConfig {
        ParallelConfig { world_size, ..ParallelConfig::default() }
    }

    pub fn tp(mut self, tp: i64) -> Self {
        self.tp = Some(tp);
        self
    }

    pub fn pp(mut self, pp: i64) -> Self {
        self.pp = Some(pp);
        self
    }

    pub fn cp(mut self, cp: i64) -> Self {
        self.cp = Some(cp);
        self
    }

    pub fn ep(mut self, ep: i64) -> Self {
        self.ep = Some(ep);
        self
    }

    pub fn order(mut self, order: Order) -> Self {
        self.order = Some(order);
        self
    }

    pub fn hcp_sizes(mut self, sizes: &[i64]) -> Self {
        self.hcp_sizes = Some(sizes.to_vec());
        self
    }

    pub fn gpus_per_node(mut self, gpus_per_node: i64) -> Self {
        self.gpus_per_node = Some(gpus_per_node);
        self
    }

    /// The C struct; it points into `self.hcp_sizes`, hence the borrow.
    pub(crate) fn to_raw(&self) -> Result<RawConfig<'_>> {
        let mut raw: sys::hcp_parallel_config = init()?;
        raw.world_size = self.world_size;
        let set = |field: &mut i64, value: Option<i64>| {
            if let Some(v) = value {
                *field = v;
            }
        };
        set(&mut raw.tp, self.tp);
        set(&mut raw.pp, self.pp);
        set(&mut raw.cp, self.cp);
        set(&mut raw.ep, self.ep);
        set(&mut raw.gpus_per_node, self.gpus_per_node);
        if let Some(order) = self.order {
            raw.order = order.raw();
        }
        if let Some(sizes) = &self.hcp_sizes {
            raw.num_hcp_levels = u32::try_from(sizes.len())
                .map_err(|_| Error::invalid_argument(format!("{} hcp_sizes do not fit in 32 bits", sizes.len())))?;
            raw.hcp_sizes = sizes.as_ptr();
        }
        Ok(RawConfig { raw, _sizes: PhantomData })
    }
}

/// An hcp_parallel_config valid while the ParallelConfig it points into is borrowed.
pub(crate) struct RawConfig<'a> {
    pub(crate) raw: sys::hcp_parallel_config,
    _sizes: PhantomData<&'a [i64]>,
}

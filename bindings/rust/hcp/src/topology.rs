//! The exact Megatron-Core rank layout, hierarchical CP groups included.

use crate::config::ParallelConfig;
use crate::error::{check, Error, Result};
use crate::ffi::{handle_error, init, take_string};
use hcp_sys as sys;
use std::os::raw::c_char;
use std::ptr;

/// A kind of process group (Megatron's names in the comments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupKind {
    /// TENSOR_MODEL_PARALLEL_GROUP
    Tp,
    /// CONTEXT_PARALLEL_GROUP
    Cp,
    /// DATA_PARALLEL_GROUP
    Dp,
    /// PIPELINE_MODEL_PARALLEL_GROUP
    Pp,
    /// DATA_PARALLEL_GROUP_WITH_CP
    DpCp,
    /// TENSOR_AND_CONTEXT_PARALLEL_GROUP
    TpCp,
    /// MODEL_PARALLEL_GROUP
    Mp,
    /// TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP
    TpDpCp,
    /// HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L{level}; the only kind that reads `level`.
    Hcp,
}

impl GroupKind {
    pub const ALL: [GroupKind; 9] = [
        GroupKind::Tp,
        GroupKind::Cp,
        GroupKind::Dp,
        GroupKind::Pp,
        GroupKind::DpCp,
        GroupKind::TpCp,
        GroupKind::Mp,
        GroupKind::TpDpCp,
        GroupKind::Hcp,
    ];

    pub(crate) fn raw(self) -> sys::hcp_group_kind {
        match self {
            GroupKind::Tp => sys::HCP_GROUP_TP,
            GroupKind::Cp => sys::HCP_GROUP_CP,
            GroupKind::Dp => sys::HCP_GROUP_DP,
            GroupKind::Pp => sys::HCP_GROUP_PP,
            GroupKind::DpCp => sys::HCP_GROUP_DP_CP,
            GroupKind::TpCp => sys::HCP_GROUP_TP_CP,
            GroupKind::Mp => sys::HCP_GROUP_MP,
            GroupKind::TpDpCp => sys::HCP_GROUP_TP_DP_CP,
            GroupKind::Hcp => sys::HCP_GROUP_HCP,
        }
    }
}

/// Members per group and number of groups of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupSize {
    pub size: i64,
    pub count: i64,
}

/// A rank's coordinate along each parallel dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankCoords {
    pub tp: i64,
    pub cp: i64,
    pub dp: i64,
    pub pp: i64,
}

/// Which group a rank is in (index in Megatron's enumeration order) and its position inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Membership {
    pub group_index: i64,
    pub rank_in_group: i64,
}

/// Whether the groups of a kind stay inside one node of gpus_per_node consecutive ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locality {
    pub group_size: i64,
    /// Last member - first member + 1, in global ranks.
    pub span: i64,
    pub groups: i64,
    pub groups_crossing_nodes: i64,
}

impl Locality {
    pub fn intra_node(&self) -> bool {
        self.groups_crossing_nodes == 0
    }
}

/// A validated parallel configuration and its groups (computed on demand, O(levels) memory).
pub struct Topology {
    raw: *mut sys::hcp_topology,
}

// hcp.h: "Immutable after creation: every query may be called from any number of threads at once. Destroy must
// not run concurrently with a query on the same handle." Every query takes &self and Drop takes the value, so a
// Topology can be moved to (Send) and shared between (Sync) threads.
unsafe impl Send for Topology {}
unsafe impl Sync for Topology {}

impl Topology {
    /// Validates the config; `Status::InvalidConfig` names the violated condition with the values.
    pub fn new(config: &ParallelConfig) -> Result<Topology> {
        let raw_config = config.to_raw()?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::hcp_topology_create(&mut raw, &raw_config.raw) })?;
        Ok(Topology { raw })
    }

    pub fn dp(&self) -> Result<i64> {
        let mut dp = 0;
        check(unsafe { sys::hcp_topology_dp(&mut dp, self.raw) })?;
        Ok(dp)
    }

    /// Number of hierarchical levels (0 when hcp_sizes is unset).
    pub fn num_levels(&self) -> Result<i32> {
        let mut levels = 0;
        check(unsafe { sys::hcp_topology_num_levels(&mut levels, self.raw) })?;
        Ok(levels)
    }

    /// `level` is read for `GroupKind::Hcp` only.
    pub fn group_size(&self, kind: GroupKind, level: i32) -> Result<GroupSize> {
        let (mut size, mut count) = (0, 0);
        check(unsafe { sys::hcp_topology_group_size(&mut size, &mut count, self.raw, kind.raw(), level) })?;
        Ok(GroupSize { size, count })
    }

    pub fn coords(&self, rank: i64) -> Result<RankCoords> {
        let mut out: sys::hcp_rank_coords = init()?;
        check(unsafe { sys::hcp_topology_coords(&mut out, self.raw, rank) })?;
        Ok(RankCoords { tp: out.tp, cp: out.cp, dp: out.dp, pp: out.pp })
    }

    pub fn membership(&self, rank: i64, kind: GroupKind, level: i32) -> Result<Membership> {
        let (mut group_index, mut rank_in_group) = (0, 0);
        check(unsafe {
            sys::hcp_topology_membership(&mut group_index, &mut rank_in_group, self.raw, rank, kind.raw(), level)
        })?;
        Ok(Membership { group_index, rank_in_group })
    }

    /// The members of `rank`'s group, in Megatron's order.
    pub fn group_of(&self, rank: i64, kind: GroupKind, level: i32) -> Result<Vec<i64>> {
        let size = self.group_size(kind, level)?.size;
        fill_ranks(size, |buf, capacity, needed| unsafe {
            sys::hcp_topology_group_of(buf, capacity, needed, self.raw, rank, kind.raw(), level)
        })
    }

    /// Every group of a kind, in Megatron's order.
    pub fn groups(&self, kind: GroupKind, level: i32) -> Result<Vec<Vec<i64>>> {
        let GroupSize { size, count } = self.group_size(kind, level)?;
        let flat = fill_ranks(size.saturating_mul(count), |buf, capacity, needed| unsafe {
            sys::hcp_topology_groups(buf, capacity, needed, self.raw, kind.raw(), level)
        })?;
        let size = usize::try_from(size).map_err(|_| Error::invalid_argument("negative group size"))?;
        Ok(if size == 0 { Vec::new() } else { flat.chunks(size).map(|g| g.to_vec()).collect() })
    }

    pub fn locality(&self, kind: GroupKind, level: i32) -> Result<Locality> {
        let mut out: sys::hcp_locality = init()?;
        check(unsafe { sys::hcp_topology_locality(&mut out, self.raw, kind.raw(), level) })?;
        Ok(Locality {
            group_size: out.group_size,
            span: out.span,
            groups: out.groups,
            groups_crossing_nodes: out.groups_crossing_nodes,
        })
    }

    /// JSON of the whole layout (None: the keys of `hcp groups --format json`) or of one rank.
    pub fn to_json(&self, rank: Option<i64>) -> Result<String> {
        if rank.map_or(false, |r| r < 0) {
            // C reads any negative rank as "the whole layout"; Some(-1) is more likely a bug than a request for it.
            return Err(Error::invalid_argument(format!("Topology::to_json: rank {} is negative", rank.unwrap())));
        }
        let mut text: *mut c_char = ptr::null_mut();
        check(unsafe { sys::hcp_topology_to_json(&mut text, self.raw, rank.unwrap_or(-1)) })?;
        Ok(unsafe { take_string(text) })
    }

    /// The layout as one self-contained SVG picture (`hcp groups --svg`); at most `max_nodes` nodes drawn (None: 16).
    pub fn to_svg(&self, max_nodes: Option<i64>) -> Result<String> {
        let mut text: *mut c_char = ptr::null_mut();
        check(unsafe { sys::hcp_topology_to_svg(&mut text, self.raw, max_nodes.unwrap_or(0)) })?;
        Ok(unsafe { take_string(text) })
    }

    /// The message of the last failed call on this topology, from whichever thread made it ("" if none).
    pub fn last_error(&self) -> Result<String> {
        handle_error(sys::hcp_topology_last_error, self.raw)
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        unsafe { sys::hcp_topology_destroy(self.raw) }
    }
}

/// Runs a call of the group_of / groups buffer protocol with room for `expected` ranks, and once more with the
/// size the library asks for should it differ.
fn fill_ranks(expected: i64, mut call: impl FnMut(*mut i64, usize, *mut usize) -> sys::hcp_status) -> Result<Vec<i64>> {
    let mut capacity = usize::try_from(expected).unwrap_or(0);
    loop {
        let mut buf = vec![0i64; capacity];
        let mut needed = 0usize;
        let status = call(buf.as_mut_ptr(), capacity, &mut needed);
        if status == sys::HCP_ERR_BUFFER_TOO_SMALL && needed > capacity {
            capacity = needed;
            continue;
        }
        check(status)?;
        buf.truncate(needed);
        return Ok(buf);
    }
}

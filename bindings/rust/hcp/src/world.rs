//! An in-process world of communicators, one per rank, for running CP attention on threads.

use crate::error::{check, Error, Result};
use crate::ffi::{c_string, handle_error};
use hcp_sys as sys;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `ranks` communicators in this process. Each rank is driven by its own thread: `comm(rank)` lends a rank's
/// communicator to one borrower at a time, and the borrow (and every CpContext made from it) ends before the
/// world is destroyed.
pub struct World {
    raw: *mut sys::hcp_world,
    /// Whether each rank's communicator is lent out (hcp.h allows one thread per communicator at a time).
    lent: Vec<AtomicBool>,
}

// hcp.h on hcp_world_comm: "Borrowed: owned by the world. Any thread may fetch it." and on hcp_world_last_error:
// "Safe from any thread, also while other threads use the handle." The world itself is only read after creation,
// so &World may be shared between the ranks' threads (Sync) and the World moved (Send). "Destroy only after every
// rank's thread is done with it": every Comm and CpContext borrows the World, so Drop cannot run before they end.
unsafe impl Send for World {}
unsafe impl Sync for World {}

impl World {
    /// An operation that does not complete within `timeout` fails with `Status::Timeout`; a failing rank makes
    /// the others fail with `Status::Comm`. `Duration::ZERO` is the library's default (60 s); hcp accepts up to
    /// 2^31 - 1 ms, and a part of a millisecond is rounded up.
    pub fn new(ranks: i32, timeout: Duration) -> Result<World> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::hcp_world_create(&mut raw, ranks, timeout_ms(timeout)) })?;
        let lent = (0..ranks.max(0)).map(|_| AtomicBool::new(false)).collect();
        Ok(World { raw, lent })
    }

    pub fn size(&self) -> i32 {
        self.lent.len() as i32
    }

    /// Rank `rank`'s communicator, lent until the Comm is dropped; `Status::InvalidArgument` for a rank out of
    /// range or one already lent.
    pub fn comm(&self, rank: i32) -> Result<Comm<'_>> {
        let mut raw = ptr::null_mut();
        // The library checks the rank and leaves the message on the world.
        check(unsafe { sys::hcp_world_comm(&mut raw, self.raw, rank) })?;
        let flag = self
            .lent
            .get(rank as usize)
            .ok_or_else(|| Error::new(crate::Status::Internal, format!("World::comm: hcp lent rank {}", rank)))?;
        if flag.swap(true, Ordering::AcqRel) {
            return Err(Error::invalid_argument(format!(
                "World::comm: rank {}'s communicator is already lent out (hcp.h: one thread per communicator at \
                 a time); drop the other Comm first",
                rank
            )));
        }
        Ok(Comm { raw, lent: flag, _world: PhantomData })
    }

    /// The message of the last failed call on this world, from whichever thread made it ("" if none).
    pub fn last_error(&self) -> Result<String> {
        handle_error(sys::hcp_world_last_error, self.raw)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        unsafe { sys::hcp_world_destroy(self.raw) }
    }
}

/// Milliseconds for hcp, a part of one rounded up (so that only Duration::ZERO means "the default"). Past i64
/// the library's own range check gives the error, with its message.
pub(crate) fn timeout_ms(timeout: Duration) -> i64 {
    let mut ms = timeout.as_millis();
    if timeout.subsec_nanos() % 1_000_000 != 0 {
        ms += 1;
    }
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// One rank's communicator, borrowed from its World.
pub struct Comm<'w> {
    pub(crate) raw: *mut sys::hcp_comm,
    lent: &'w AtomicBool,
    _world: PhantomData<&'w World>,
}

// hcp.h on hcp_world: "each must be driven by its own thread (one thread per communicator at a time)". A Comm is
// the only handle to its rank's communicator while it lives (World::comm lends each rank once), so moving it to
// the rank's thread is fine (Send); sharing it is not (not Sync: the raw pointer field keeps it so).
unsafe impl<'w> Send for Comm<'w> {}

impl<'w> Comm<'w> {
    /// Marks this rank as failed; every other rank's operations then fail with `Status::Comm`.
    pub fn abort(&self, reason: &str) -> Result<()> {
        let reason = c_string("reason", reason)?;
        check(unsafe { sys::hcp_comm_abort(self.raw, reason.as_ptr()) })
    }

    /// The message of the last failed call that took this communicator ("" if none).
    pub fn last_error(&self) -> Result<String> {
        handle_error(sys::hcp_comm_last_error, self.raw)
    }
}

impl<'w> Drop for Comm<'w> {
    fn drop(&mut self) {
        // Owned by the world: nothing to destroy, only the loan to end.
        self.lent.store(false, Ordering::Release);
    }
}

/// The bytes of a fresh ncclUniqueId for `hcp_comm_create_nccl` (rank 0 makes it and sends it to the others).
/// `Status::Unsupported` in builds without the GPU path or without a CUDA device.
pub fn nccl_unique_id() -> Result<[u8; sys::HCP_NCCL_UNIQUE_ID_BYTES]> {
    let mut id = [0u8; sys::HCP_NCCL_UNIQUE_ID_BYTES];
    check(unsafe { sys::hcp_nccl_unique_id(id.as_mut_ptr()) })?;
    Ok(id)
}

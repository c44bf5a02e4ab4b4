//! A communicator made of the caller's collectives (hcp_comm_callbacks): CP contexts then move their data through
//! the groups a job already has (a trainer's own collectives, MPI or NCCL bindings of its own), on the same ranks.
//! Implement [`Collectives`], wrap it in a [`CallbackComm`] and make the contexts with [`CpContext::on`].
//!
//! [`CpContext::on`]: crate::CpContext::on

use crate::error::{check, Result};
use crate::ffi::{c_string, handle_error};
use hcp_sys as sys;
use std::ffi::CString;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Mutex;

/// The exchanges hcp needs, as the caller implements them over host memory. Every method is called from the
/// thread that drives the communicator, one at a time, except `abort`, which may come from any thread while
/// another call runs (hence `&self` and `Sync`). An `Err` (or a panic) fails hcp's call on this rank with
/// `Status::Comm` naming the method and the message, and hcp then calls `abort`, which must make the other
/// members' pending and later calls fail rather than wait. A method that never returns blocks hcp: give the
/// collectives a timeout.
pub trait Collectives: Send + Sync {
    /// This member's place in the group, 0 .. size.
    fn rank(&self) -> i32;
    fn size(&self) -> i32;
    /// One ring step: `send` to rank `dst`, rank `src`'s bytes into `recv`.
    fn send_recv(&self, send: &[u8], dst: i32, recv: &mut [u8], src: i32) -> std::result::Result<(), String>;
    /// Chunk j of `send` (size equal chunks) to rank j; rank j's chunk into chunk j of `recv`.
    fn all_to_all(&self, send: &[u8], recv: &mut [u8]) -> std::result::Result<(), String>;
    /// Every rank's `send` into `recv`, in rank order.
    fn all_gather(&self, send: &[u8], recv: &mut [u8]) -> std::result::Result<(), String>;
    /// `send` holds size blocks of recv.len() floats; `recv` gets the sum over ranks of block `rank`, added in rank
    /// order (the same bits on every run).
    fn reduce_scatter_sum_f32(&self, send: &[f32], recv: &mut [f32]) -> std::result::Result<(), String>;
    fn barrier(&self) -> std::result::Result<(), String>;
    /// Collective: the members with this color (>= 0), ordered by (key, rank), as a new group; `None` for a
    /// negative color. The default cannot split, and then no CP context can be made on the communicator.
    fn split(&self, _color: i32, _key: i32) -> std::result::Result<Option<Box<dyn Collectives>>, String> {
        Err("this communicator cannot be split (Collectives::split is not implemented)".to_string())
    }
    /// This rank failed for `reason`: make the other members' calls fail.
    fn abort(&self, reason: &str);
}

/// What hcp passes back as `user`: the collectives and the message of their last failure. Freed by `release`.
struct State {
    collectives: Box<dyn Collectives>,
    error: Mutex<CString>,
}

unsafe fn state<'a>(user: *mut c_void) -> &'a State {
    &*(user as *const State)
}

/// Runs a method for a C caller: an `Err` or a panic (which must not cross into C) is this rank's failure.
fn call(user: *mut c_void, method: &str, f: impl FnOnce(&dyn Collectives) -> std::result::Result<(), String>) -> i32 {
    let s = unsafe { state(user) };
    let (code, message) = match catch_unwind(AssertUnwindSafe(|| f(&*s.collectives))) {
        Ok(Ok(())) => return 0,
        Ok(Err(message)) => (1, message),
        Err(_) => (2, "panicked".to_string()),
    };
    let text = CString::new(format!("{}: {}", method, message).replace('\0', " ")).unwrap_or_default();
    if let Ok(mut error) = s.error.lock() {
        *error = text;
    }
    code
}

unsafe fn bytes<'a>(p: *const c_void, n: usize) -> &'a [u8] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(p as *const u8, n)
    }
}

unsafe fn bytes_mut<'a>(p: *mut c_void, n: usize) -> &'a mut [u8] {
    if n == 0 || p.is_null() {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(p as *mut u8, n)
    }
}

unsafe extern "C" fn send_recv_fn(
    user: *mut c_void,
    send: *const c_void,
    send_bytes: usize,
    dst: i32,
    recv: *mut c_void,
    recv_bytes: usize,
    src: i32,
    _stream: *mut c_void,
) -> i32 {
    call(user, "send_recv", |c| c.send_recv(bytes(send, send_bytes), dst, bytes_mut(recv, recv_bytes), src))
}

unsafe extern "C" fn all_to_all_fn(
    user: *mut c_void,
    send: *const c_void,
    recv: *mut c_void,
    chunk: usize,
    _stream: *mut c_void,
) -> i32 {
    call(user, "all_to_all", |c| {
        let n = chunk * c.size() as usize;
        c.all_to_all(bytes(send, n), bytes_mut(recv, n))
    })
}

unsafe extern "C" fn all_gather_fn(
    user: *mut c_void,
    send: *const c_void,
    recv: *mut c_void,
    chunk: usize,
    _stream: *mut c_void,
) -> i32 {
    call(user, "all_gather", |c| c.all_gather(bytes(send, chunk), bytes_mut(recv, chunk * c.size() as usize)))
}

unsafe extern "C" fn reduce_scatter_fn(
    user: *mut c_void,
    send: *const f32,
    recv: *mut f32,
    count: usize,
    _stream: *mut c_void,
) -> i32 {
    call(user, "reduce_scatter_sum_f32", |c| {
        let total = count * c.size() as usize;
        let send: &[f32] = if total == 0 { &[] } else { std::slice::from_raw_parts(send, total) };
        let recv: &mut [f32] = if count == 0 { &mut [] } else { std::slice::from_raw_parts_mut(recv, count) };
        c.reduce_scatter_sum_f32(send, recv)
    })
}

unsafe extern "C" fn barrier_fn(user: *mut c_void, _stream: *mut c_void) -> i32 {
    call(user, "barrier", |c| c.barrier())
}

unsafe extern "C" fn split_fn(
    user: *mut c_void,
    color: i32,
    key: i32,
    out: *mut *mut sys::hcp_comm,
    _stream: *mut c_void,
) -> i32 {
    call(user, "split", |c| match c.split(color, key)? {
        Some(group) if color >= 0 => {
            // hcp owns the new communicator from here (and releases `group` with it).
            *out = create(group).map_err(|e| e.to_string())?;
            Ok(())
        }
        _ => Ok(()),
    })
}

unsafe extern "C" fn abort_fn(user: *mut c_void, reason: *const c_char) {
    let reason =
        if reason.is_null() { String::new() } else { std::ffi::CStr::from_ptr(reason).to_string_lossy().into_owned() };
    let s = state(user);
    let _ = catch_unwind(AssertUnwindSafe(|| s.collectives.abort(&reason)));
}

unsafe extern "C" fn error_message_fn(user: *mut c_void) -> *const c_char {
    // Kept until the next failure of this member, which comes from the same thread after hcp has read this.
    match state(user).error.lock() {
        Ok(error) => error.as_ptr(),
        Err(_) => ptr::null(),
    }
}

unsafe extern "C" fn release_fn(user: *mut c_void) {
    drop(Box::from_raw(user as *mut State));
}

/// A new hcp_comm over `collectives`, owned by whoever gets it (the caller, or hcp for a split group).
fn create(collectives: Box<dyn Collectives>) -> Result<*mut sys::hcp_comm> {
    let mut cb: sys::hcp_comm_callbacks = unsafe { std::mem::zeroed() };
    check(unsafe { sys::hcp_comm_callbacks_init(&mut cb, std::mem::size_of::<sys::hcp_comm_callbacks>()) })?;
    cb.rank = collectives.rank();
    cb.size = collectives.size();
    cb.send_recv = Some(send_recv_fn);
    cb.all_to_all = Some(all_to_all_fn);
    cb.all_gather = Some(all_gather_fn);
    cb.reduce_scatter_sum_f32 = Some(reduce_scatter_fn);
    cb.barrier = Some(barrier_fn);
    cb.split = Some(split_fn);
    cb.abort = Some(abort_fn);
    cb.error_message = Some(error_message_fn);
    cb.release = Some(release_fn);
    let user = Box::into_raw(Box::new(State { collectives, error: Mutex::new(CString::default()) }));
    cb.user = user as *mut c_void;
    let mut raw = ptr::null_mut();
    let made = check(unsafe { sys::hcp_comm_create_callbacks(&mut raw, &cb) });
    if made.is_err() {
        drop(unsafe { Box::from_raw(user) }); // hcp made nothing, so it releases nothing
    }
    made.map(|_| raw)
}

/// A world communicator over the caller's [`Collectives`]; destroyed on drop, after every context made on it
/// (the contexts borrow it).
pub struct CallbackComm {
    pub(crate) raw: *mut sys::hcp_comm,
}

// hcp.h: a communicator is "one thread at a time (its rank's)", abort from any thread; Collectives is Send + Sync,
// so the communicator may move to its rank's thread (Send) but is not shared (not Sync: the raw pointer).
unsafe impl Send for CallbackComm {}

impl CallbackComm {
    pub fn new<C: Collectives + 'static>(collectives: C) -> Result<CallbackComm> {
        Self::from_box(Box::new(collectives))
    }

    /// The same from a boxed Collectives (what `Collectives::split` returns).
    pub fn from_box(collectives: Box<dyn Collectives>) -> Result<CallbackComm> {
        Ok(CallbackComm { raw: create(collectives)? })
    }

    /// Marks this rank as failed (hcp calls the collectives' abort).
    pub fn abort(&self, reason: &str) -> Result<()> {
        let reason = c_string("reason", reason)?;
        check(unsafe { sys::hcp_comm_abort(self.raw, reason.as_ptr()) })
    }

    /// The message of the last failed call that took this communicator ("" if none).
    pub fn last_error(&self) -> Result<String> {
        handle_error(sys::hcp_comm_last_error, self.raw)
    }
}

impl Drop for CallbackComm {
    fn drop(&mut self) {
        unsafe { sys::hcp_comm_destroy(self.raw) }
    }
}

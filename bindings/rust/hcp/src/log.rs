//! The runtime's log lines ("[hcp] rank 5: created CONTEXT_PARALLEL_GROUP ...") delivered to a Rust closure.
//!
//! One C callback (a trampoline) is installed; the closure lives in a Rust mutex. Replacing the closure takes
//! the mutex, which the trampoline holds while the old closure runs, so the old one is never freed while it runs.
//! hcp.h lets a callback call hcp_set_log_callback; a closure that calls set_log_callback (on the thread that
//! runs it, which holds the mutex) leaves the replacement for the trampoline to install once it returns.

use crate::error::{check, Result};
use hcp_sys as sys;
use std::cell::{Cell, RefCell};
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Mutex;

/// The level of a line; the threshold comes from the environment variable HCP_LOG_LEVEL (default info).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogLevel {
    Error,
    Warning,
    Info,
    Debug,
    /// A level this binding does not know.
    Unknown(i32),
}

impl LogLevel {
    fn from_raw(level: i32) -> LogLevel {
        match level {
            sys::HCP_LOG_ERROR => LogLevel::Error,
            sys::HCP_LOG_WARN => LogLevel::Warning,
            sys::HCP_LOG_INFO => LogLevel::Info,
            sys::HCP_LOG_DEBUG => LogLevel::Debug,
            other => LogLevel::Unknown(other),
        }
    }
}

type Callback = Box<dyn FnMut(LogLevel, &str) + Send + 'static>;

static CALLBACK: Mutex<Option<Callback>> = Mutex::new(None);

thread_local! {
    /// Whether this thread is inside the trampoline (and so holds CALLBACK).
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
    /// A replacement asked for from inside the callback: Some(None) removes the closure.
    static PENDING: RefCell<Option<Option<Callback>>> = const { RefCell::new(None) };
}

/// Sends every log line of the runtime to `callback` instead of stderr. hcp calls it one line at a time, never
/// twice at once, possibly on another thread than the one that logged; keep it short, since the thread
/// delivering waits for it. It may call any hcp function, including this one. A panic in it is caught and the
/// line dropped (unwinding into C is not allowed).
pub fn set_log_callback<F>(callback: F) -> Result<()>
where
    F: FnMut(LogLevel, &str) + Send + 'static,
{
    replace(Some(Box::new(callback)))?;
    check(unsafe { sys::hcp_set_log_callback(Some(trampoline), ptr::null_mut()) })
}

/// Restores the default: lines go to stderr.
pub fn reset_log_callback() -> Result<()> {
    check(unsafe { sys::hcp_set_log_callback(None, ptr::null_mut()) })?;
    // After the C call returns, hcp will not call the trampoline again; the closure can go.
    replace(None)
}

fn replace(callback: Option<Callback>) -> Result<()> {
    if IN_CALLBACK.with(|inside| inside.get()) {
        PENDING.with(|pending| *pending.borrow_mut() = Some(callback));
        return Ok(());
    }
    let old = {
        let mut current = CALLBACK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        std::mem::replace(&mut *current, callback)
    };
    drop(old); // outside the lock: its Drop may log
    Ok(())
}

unsafe extern "C" fn trampoline(level: i32, line: *const c_char, _user: *mut c_void) {
    if line.is_null() {
        return;
    }
    let text = CStr::from_ptr(line).to_string_lossy();
    let level = LogLevel::from_raw(level);
    let mut current = CALLBACK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    IN_CALLBACK.with(|inside| inside.set(true));
    if let Some(callback) = current.as_mut() {
        if catch_unwind(AssertUnwindSafe(|| callback(level, &text))).is_err() {
            eprintln!("[hcp] the Rust log callback panicked on: {}", text);
        }
    }
    IN_CALLBACK.with(|inside| inside.set(false));
    let pending = PENDING.with(|pending| pending.borrow_mut().take());
    let old = match pending {
        Some(replacement) => std::mem::replace(&mut *current, replacement),
        None => None,
    };
    drop(current);
    drop(old);
}

//! Crossing into C: strings in both directions, structs filled by their hcp_<struct>_init, and the per-handle
//! last error.

use crate::error::{check, Error, Result};
use hcp_sys as sys;
use std::ffi::{CStr, CString};
use std::mem::{size_of, MaybeUninit};
use std::os::raw::c_char;
use std::path::Path;
use std::ptr;

/// A Rust string as a C string; an interior NUL would cut it short, so it is refused (`what` names the argument).
pub(crate) fn c_string(what: &str, text: &str) -> Result<CString> {
    CString::new(text).map_err(|e| {
        Error::invalid_argument(format!("{} contains a NUL byte at {}: C strings end there", what, e.nul_position()))
    })
}

/// A path as the bytes the OS uses (hcp opens it with the C library).
pub(crate) fn c_path(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::invalid_argument(format!("path {:?} contains a NUL byte", path)))
}

/// A copy of a library-owned string (NULL reads as ""); not UTF-8 bytes are replaced.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string valid for the duration of the call.
pub(crate) unsafe fn copy_str(text: *const c_char) -> String {
    if text.is_null() {
        String::new()
    } else {
        CStr::from_ptr(text).to_string_lossy().into_owned()
    }
}

/// Copies a string the library returned through a `char**` and releases it with hcp_free, as hcp.h requires.
///
/// # Safety
/// `text` is NULL or memory the library handed to the caller.
pub(crate) unsafe fn take_string(text: *mut c_char) -> String {
    let copy = copy_str(text);
    sys::hcp_free(text.cast());
    copy
}

/// A raw struct of hcp.h that has an hcp_<struct>_init function.
///
/// # Safety
/// `init` must be that function, and Self the struct it fills.
pub(crate) unsafe trait Versioned: Sized {
    unsafe fn init(value: *mut Self, struct_size: usize) -> sys::hcp_status;
}

macro_rules! versioned {
    ($($ty:ident => $init:ident),* $(,)?) => {
        $( unsafe impl Versioned for sys::$ty {
            unsafe fn init(value: *mut Self, struct_size: usize) -> sys::hcp_status {
                sys::$init(value, struct_size)
            }
        } )*
    };
}

versioned! {
    hcp_parallel_config => hcp_parallel_config_init,
    hcp_rank_coords => hcp_rank_coords_init,
    hcp_locality => hcp_locality_init,
    hcp_lint_options => hcp_lint_options_init,
    hcp_lint_diagnostic => hcp_lint_diagnostic_init,
    hcp_logscan_options => hcp_logscan_options_init,
    hcp_logscan_event => hcp_logscan_event_init,
    hcp_plan_options => hcp_plan_options_init,
    hcp_tensor => hcp_tensor_init,
    hcp_attn_options => hcp_attn_options_init,
    hcp_cp_context_options => hcp_cp_context_options_init,
    hcp_attn_simulate_options => hcp_attn_simulate_options_init,
}

/// A struct with the library's defaults, struct_size set to the whole struct.
pub(crate) fn init<T: Versioned>() -> Result<T> {
    // Zeroed first: every field of these structs is valid as zero (zero is also hcp's "the default"), so the value
    // is sound to use whatever init writes; init then writes every field the size covers, i.e. all of them.
    let mut value = MaybeUninit::<T>::zeroed();
    check(unsafe { T::init(value.as_mut_ptr(), size_of::<T>()) })?;
    Ok(unsafe { value.assume_init() })
}

/// The message of the last failed call that took `handle`, via its hcp_<handle>_last_error.
pub(crate) fn handle_error<H>(
    last_error: unsafe extern "C" fn(*mut *mut c_char, *const H) -> sys::hcp_status,
    handle: *const H,
) -> Result<String> {
    let mut text: *mut c_char = ptr::null_mut();
    check(unsafe { last_error(&mut text, handle) })?;
    Ok(unsafe { take_string(text) })
}

/// A list of C strings kept alive together with the array of pointers to them that C reads.
pub(crate) struct CStringArray {
    _strings: Vec<CString>,
    pointers: Vec<*const c_char>,
}

impl CStringArray {
    pub(crate) fn new(strings: Vec<CString>) -> CStringArray {
        // The pointers stay valid when the Vec moves: each CString's bytes live in their own heap allocation.
        let pointers = strings.iter().map(|s| s.as_ptr()).collect();
        CStringArray { _strings: strings, pointers }
    }

    pub(crate) fn as_ptr(&self) -> *const *const c_char {
        self.pointers.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.pointers.len()
    }
}

/// The pointer of an optional C string (NULL for None).
pub(crate) fn opt_ptr(text: &Option<CString>) -> *const c_char {
    text.as_ref().map_or(ptr::null(), |s| s.as_ptr())
}

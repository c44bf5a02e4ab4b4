//! The error of every fallible call: hcp's status code and the library's message.

use hcp_sys as sys;
use std::ffi::CStr;
use std::fmt;

/// A non-zero `hcp_status`. Codes are pinned by hcp.h and never reused; a code this binding does not know (from a
/// newer library) is kept as `Unknown` rather than guessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// NULL pointer, unknown enum value, bad struct size, out-of-range rank; also slices that do not fit the shape.
    InvalidArgument,
    /// The parallel configuration violates an upstream condition.
    InvalidConfig,
    BufferTooSmall,
    OutOfMemory,
    /// A file could not be opened or read.
    Io,
    /// An input could not be parsed.
    Parse,
    /// Not available in this build, or unknown non-zero struct fields.
    Unsupported,
    /// A communicator operation failed.
    Comm,
    /// A communicator operation did not complete in time.
    Timeout,
    /// Tensor shapes that do not divide or disagree between ranks.
    Shape,
    /// A named or requested item does not exist.
    NotFound,
    /// A bug in hcp.
    Internal,
    /// Any other value, including `HCP_OK` (0), which is not an error.
    Unknown(i32),
}

impl Status {
    pub fn from_raw(code: sys::hcp_status) -> Status {
        match code {
            sys::HCP_ERR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::HCP_ERR_INVALID_CONFIG => Status::InvalidConfig,
            sys::HCP_ERR_BUFFER_TOO_SMALL => Status::BufferTooSmall,
            sys::HCP_ERR_OUT_OF_MEMORY => Status::OutOfMemory,
            sys::HCP_ERR_IO => Status::Io,
            sys::HCP_ERR_PARSE => Status::Parse,
            sys::HCP_ERR_UNSUPPORTED => Status::Unsupported,
            sys::HCP_ERR_COMM => Status::Comm,
            sys::HCP_ERR_TIMEOUT => Status::Timeout,
            sys::HCP_ERR_SHAPE => Status::Shape,
            sys::HCP_ERR_NOT_FOUND => Status::NotFound,
            sys::HCP_ERR_INTERNAL => Status::Internal,
            other => Status::Unknown(other),
        }
    }

    pub fn raw(self) -> sys::hcp_status {
        match self {
            Status::InvalidArgument => sys::HCP_ERR_INVALID_ARGUMENT,
            Status::InvalidConfig => sys::HCP_ERR_INVALID_CONFIG,
            Status::BufferTooSmall => sys::HCP_ERR_BUFFER_TOO_SMALL,
            Status::OutOfMemory => sys::HCP_ERR_OUT_OF_MEMORY,
            Status::Io => sys::HCP_ERR_IO,
            Status::Parse => sys::HCP_ERR_PARSE,
            Status::Unsupported => sys::HCP_ERR_UNSUPPORTED,
            Status::Comm => sys::HCP_ERR_COMM,
            Status::Timeout => sys::HCP_ERR_TIMEOUT,
            Status::Shape => sys::HCP_ERR_SHAPE,
            Status::NotFound => sys::HCP_ERR_NOT_FOUND,
            Status::Internal => sys::HCP_ERR_INTERNAL,
            Status::Unknown(code) => code,
        }
    }

    /// The library's short description ("invalid argument"), which it gives for unknown values too.
    pub fn description(self) -> &'static str {
        // hcp.h: "A short constant description of a status; never NULL, also for unknown values" - static storage.
        let text = unsafe { CStr::from_ptr(sys::hcp_status_string(self.raw())) };
        text.to_str().unwrap_or("(not UTF-8)")
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// A failed call: its status and the message that names the function, the argument and the violated rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }

    /// The error of a call that just returned `status` on this thread, with this thread's `hcp_last_error()`.
    /// Must run on the thread that made the call, before any other hcp call (every wrapper calls it right after).
    pub(crate) fn from_last(status: sys::hcp_status) -> Error {
        // hcp.h: "never NULL. Valid until the next failing call on this thread" - copied at once.
        let message = unsafe { CStr::from_ptr(sys::hcp_last_error()) }.to_string_lossy().into_owned();
        Error { status: Status::from_raw(status), message }
    }

    /// A misuse this binding catches before calling the library.
    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(Status::InvalidArgument, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.status)
        } else {
            write!(f, "{}: {}", self.status, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// Ok for `HCP_OK`, otherwise the error with this thread's message.
pub(crate) fn check(status: sys::hcp_status) -> Result<()> {
    if status == sys::HCP_OK {
        Ok(())
    } else {
        Err(Error::from_last(status))
    }
}

//! hcp-logscan: was hierarchical CP really active? Scan files, or bytes as a training process writes them.

use crate::error::{check, Error, Result};
use crate::ffi::{c_path, c_string, copy_str, handle_error, init, opt_ptr, take_string, CStringArray};
use hcp_sys as sys;
use std::cell::Cell;
use std::ffi::CString;
use std::marker::PhantomData;
use std::os::raw::c_char;
use std::path::Path;
use std::ptr;

/// The options struct and the GPU name it points to.
struct RawOptions {
    raw: sys::hcp_logscan_options,
    _gpu: Option<CString>,
}

fn options(gpu: Option<&str>) -> Result<RawOptions> {
    let gpu = gpu.map(|g| c_string("gpu", g)).transpose()?;
    let mut raw: sys::hcp_logscan_options = init()?;
    raw.gpu = opt_ptr(&gpu);
    Ok(RawOptions { raw, _gpu: gpu })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The verdict, once the evidence settles it and whenever it changes.
    Verdict,
    Failure,
    Warning,
    /// A kind this binding does not know (a newer library).
    Unknown(i32),
}

/// A live event, copied out of the scanner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// The rank it was seen on, when known.
    pub rank: Option<i32>,
    /// Verdict: "cp-silently-off", ...; failure or warning: its kind ("cuda-oom", "nccl-timeout").
    pub name: String,
    /// Verdict: the first reason; failure or warning: the line or a summary.
    pub message: String,
    /// Where it was seen; None when the event has no place.
    pub file: Option<String>,
    /// 1-based line, when known.
    pub line: Option<u64>,
}

/// A streaming scanner: feed raw bytes (plain, zstd or gzip, any chunking) as they come; poll for live events;
/// finish for the report.
pub struct LogScanner {
    raw: *mut sys::hcp_logscanner,
    // The raw pointer already makes the type !Sync; this says so where the reason is documented.
    _not_sync: PhantomData<Cell<()>>,
}

// hcp.h: "A streaming scanner ... One thread at a time per scanner; scanners are independent." Every call that
// uses the scanner takes &mut self (or self), so the borrow checker gives one thread at a time: it may move to
// another thread (Send) but not be shared (not Sync).
unsafe impl Send for LogScanner {}

impl LogScanner {
    /// `gpu`: the GPU model when the logs do not name it ("h200"); None: from the logs only.
    pub fn new(gpu: Option<&str>) -> Result<LogScanner> {
        let options = options(gpu)?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::hcp_logscan_create(&mut raw, &options.raw) })?;
        Ok(LogScanner { raw, _not_sync: PhantomData })
    }

    /// Starts a new input (file, rank, stream) with its own decoder and line numbers. Optional: feeding without
    /// it starts one named "<stream>".
    pub fn begin_input(&mut self, name: &str) -> Result<()> {
        let name = c_string("name", name)?;
        check(unsafe { sys::hcp_logscan_begin_input(self.raw, name.as_ptr()) })
    }

    pub fn feed(&mut self, data: &[u8]) -> Result<()> {
        check(unsafe { sys::hcp_logscan_feed(self.raw, data.as_ptr().cast(), data.len()) })
    }

    /// The next event since the last poll; None when nothing is new.
    pub fn poll(&mut self) -> Result<Option<Event>> {
        let mut e: sys::hcp_logscan_event = init()?;
        check(unsafe { sys::hcp_logscan_poll(self.raw, &mut e) })?;
        let kind = match e.kind {
            sys::HCP_LOGSCAN_EVENT_NONE => return Ok(None),
            sys::HCP_LOGSCAN_EVENT_VERDICT => EventKind::Verdict,
            sys::HCP_LOGSCAN_EVENT_FAILURE => EventKind::Failure,
            sys::HCP_LOGSCAN_EVENT_WARNING => EventKind::Warning,
            other => EventKind::Unknown(other),
        };
        // hcp.h: the strings "stay valid until the next poll, feed, begin_input or finish" - copied now, under
        // the &mut borrow that rules those out.
        let file = unsafe { copy_str(e.file) };
        Ok(Some(Event {
            kind,
            rank: if e.rank >= 0 { Some(e.rank) } else { None },
            name: unsafe { copy_str(e.name) },
            message: unsafe { copy_str(e.message) },
            file: if file.is_empty() { None } else { Some(file) },
            line: if e.line > 0 { Some(e.line) } else { None },
        }))
    }

    /// Every event since the last poll.
    pub fn poll_all(&mut self) -> Result<Vec<Event>> {
        let mut events = Vec::new();
        while let Some(e) = self.poll()? {
            events.push(e);
        }
        Ok(events)
    }

    /// Ends the inputs and computes the verdict. The scanner is spent, so this consumes it: feeding it again
    /// (`Status::InvalidArgument` in C) cannot be written.
    ///
    /// ```compile_fail
    /// let mut scanner = hcp::LogScanner::new(None).unwrap();
    /// let report = scanner.finish().unwrap();
    /// scanner.feed(b"more").unwrap(); // use of moved value
    /// ```
    pub fn finish(self) -> Result<ScanReport> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::hcp_logscan_finish(&mut raw, self.raw) })?;
        Ok(ScanReport { raw })
    }

    /// The message of the last failed call on this scanner ("" if none).
    pub fn last_error(&self) -> Result<String> {
        handle_error(sys::hcp_logscan_last_error, self.raw)
    }
}

impl Drop for LogScanner {
    fn drop(&mut self) {
        // A finished scanner is spent but still owned: hcp_logscan_destroy releases it either way.
        unsafe { sys::hcp_logscan_destroy(self.raw) }
    }
}

/// Scans files and directories (recursively). Unreadable inputs are listed in the report, not errors; no paths
/// at all is `Status::InvalidArgument`. The first call installs hcp's process-wide SIGBUS handler (see hcp.h).
pub fn scan_paths<P: AsRef<Path>>(paths: &[P], gpu: Option<&str>) -> Result<ScanReport> {
    let paths = CStringArray::new(paths.iter().map(|p| c_path(p.as_ref())).collect::<Result<Vec<_>>>()?);
    let options = options(gpu)?;
    let mut raw = ptr::null_mut();
    check(unsafe { sys::hcp_logscan_scan_paths(&mut raw, paths.as_ptr(), paths.len(), &options.raw) })?;
    Ok(ScanReport { raw })
}

/// The result of a scan.
pub struct ScanReport {
    raw: *mut sys::hcp_logscan_report,
}

// hcp.h: "The result: immutable, readable from any number of threads." Reads take &self, Drop the value.
unsafe impl Send for ScanReport {}
unsafe impl Sync for ScanReport {}

impl ScanReport {
    /// "hcp-active", "hcp-not-active", "cp-silently-off", "dynamic-cp", "flat-cp", "no-cp" or "unknown".
    pub fn verdict(&self) -> Result<String> {
        let mut verdict: *const c_char = ptr::null();
        check(unsafe { sys::hcp_logscan_report_verdict(&mut verdict, self.raw) })?;
        if verdict.is_null() {
            return Err(Error::new(crate::Status::Internal, "hcp_logscan_report_verdict gave NULL"));
        }
        // Static storage (hcp.h), copied anyway to give an owned String like every other accessor.
        Ok(unsafe { copy_str(verdict) })
    }

    /// "text", "json" (the full report) or "github"; another format is `Status::InvalidArgument`.
    pub fn render(&self, format: &str) -> Result<String> {
        let format = c_string("format", format)?;
        let mut text: *mut c_char = ptr::null_mut();
        check(unsafe { sys::hcp_logscan_report_render(&mut text, self.raw, format.as_ptr()) })?;
        Ok(unsafe { take_string(text) })
    }

    /// The message of the last failed call on this report, from whichever thread made it ("" if none).
    pub fn last_error(&self) -> Result<String> {
        handle_error(sys::hcp_logscan_report_last_error, self.raw)
    }
}

impl Drop for ScanReport {
    fn drop(&mut self) {
        unsafe { sys::hcp_logscan_report_destroy(self.raw) }
    }
}

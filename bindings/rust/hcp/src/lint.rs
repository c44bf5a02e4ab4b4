//! hcp-lint: training configs (TOML, YAML, overrides, Megatron-LM launch scripts, Python recipes) against the
//! known context-parallel pitfalls.

use crate::error::{check, Result};
use crate::ffi::{c_path, c_string, copy_str, handle_error, init, opt_ptr, take_string, CStringArray};
use hcp_sys as sys;
use std::ffi::CString;
use std::fmt;
use std::os::raw::c_char;
use std::path::Path;
use std::ptr;

/// Options of a lint call; every `None` / empty field is "not given".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintOptions {
    /// "auto" (None), "toml", "yaml", "overrides", "megatron", "python".
    pub input_format: Option<String>,
    /// Hydra-style overrides applied on top of the input, e.g. "model.x=1".
    pub overrides: Vec<String>,
    /// Comma-separated rule codes or prefixes; None: every rule.
    pub select: Option<String>,
    pub ignore: Option<String>,
    /// "HCP011=error,HCP019=info".
    pub severities: Option<String>,
    pub world_size: Option<i64>,
    pub nodes: Option<i64>,
    pub gpus_per_node: Option<i64>,
    /// Transformer Engine version, e.g. "2.4.0".
    pub te_version: Option<String>,
    /// GPU model, e.g. "h100".
    pub gpu: Option<String>,
}

/// The C struct and the strings it points to.
struct RawLintOptions {
    raw: sys::hcp_lint_options,
    _strings: Vec<Option<CString>>,
    _overrides: CStringArray,
}

impl LintOptions {
    fn to_raw(&self) -> Result<RawLintOptions> {
        let opt = |what: &str, text: &Option<String>| -> Result<Option<CString>> {
            text.as_ref().map(|t| c_string(what, t)).transpose()
        };
        let strings = vec![
            opt("input_format", &self.input_format)?,
            opt("select", &self.select)?,
            opt("ignore", &self.ignore)?,
            opt("severities", &self.severities)?,
            opt("te_version", &self.te_version)?,
            opt("gpu", &self.gpu)?,
        ];
        let overrides =
            CStringArray::new(self.overrides.iter().map(|o| c_string("an override", o)).collect::<Result<Vec<_>>>()?);
        let mut raw: sys::hcp_lint_options = init()?;
        raw.input_format = opt_ptr(&strings[0]);
        raw.select = opt_ptr(&strings[1]);
        raw.ignore = opt_ptr(&strings[2]);
        raw.severities = opt_ptr(&strings[3]);
        raw.te_version = opt_ptr(&strings[4]);
        raw.gpu = opt_ptr(&strings[5]);
        if overrides.len() > 0 {
            raw.overrides = overrides.as_ptr();
            raw.num_overrides = overrides.len();
        }
        raw.world_size = self.world_size.unwrap_or(raw.world_size);
        raw.nodes = self.nodes.unwrap_or(raw.nodes);
        raw.gpus_per_node = self.gpus_per_node.unwrap_or(raw.gpus_per_node);
        Ok(RawLintOptions { raw, _strings: strings, _overrides: overrides })
    }
}

/// Lints one file, its format detected from extension and content unless `options.input_format` says.
/// `Status::Io` when it cannot be read, `Status::Parse` when it cannot be parsed ("path:line:col: ..." in the
/// message); findings are not errors.
pub fn lint_file(path: impl AsRef<Path>, options: &LintOptions) -> Result<LintReport> {
    let path = c_path(path.as_ref())?;
    let options = options.to_raw()?;
    let mut raw = ptr::null_mut();
    check(unsafe { sys::hcp_lint_file(&mut raw, path.as_ptr(), &options.raw) })?;
    Ok(LintReport { raw })
}

/// Lints a text; `name` (None: "<text>") is used in locations and for format detection.
pub fn lint_text(text: &str, name: Option<&str>, options: &LintOptions) -> Result<LintReport> {
    let name = name.map(|n| c_string("name", n)).transpose()?;
    let options = options.to_raw()?;
    let mut raw = ptr::null_mut();
    // The text is passed with its length, so it needs no terminating NUL.
    check(unsafe { sys::hcp_lint_text(&mut raw, text.as_ptr().cast(), text.len(), opt_ptr(&name), &options.raw) })?;
    Ok(LintReport { raw })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Info,
    Warning,
    Error,
    /// A value this binding does not know (a newer library).
    Unknown(i32),
}

impl Severity {
    fn from_raw(raw: sys::hcp_severity) -> Severity {
        match raw {
            sys::HCP_SEVERITY_INFO => Severity::Info,
            sys::HCP_SEVERITY_WARNING => Severity::Warning,
            sys::HCP_SEVERITY_ERROR => Severity::Error,
            other => Severity::Unknown(other),
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Severity::Info => f.write_str("info"),
            Severity::Warning => f.write_str("warning"),
            Severity::Error => f.write_str("error"),
            Severity::Unknown(v) => write!(f, "severity {}", v),
        }
    }
}

/// One finding, copied out of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// "HCP001"
    pub code: String,
    /// "a2a-p2p-without-sizes"
    pub rule: String,
    pub message: String,
    /// "" when none.
    pub hint: String,
    pub file: String,
    /// 1-based; 0 when the finding has no line.
    pub line: i32,
    pub col: i32,
    pub severity: Severity,
}

impl fmt::Display for Diagnostic {
    /// The CLI's first line: `cfg.toml:3:1: error[HCP001]: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.col)?;
        } else {
            write!(f, "{}: ", self.file)?;
        }
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)
    }
}

/// The findings of one lint call.
pub struct LintReport {
    raw: *mut sys::hcp_lint_report,
}

// hcp.h: "The result of one lint call. Immutable: any number of threads may read one report at once." Reads take
// &self and Drop takes the value: Send and Sync.
unsafe impl Send for LintReport {}
unsafe impl Sync for LintReport {}

impl LintReport {
    pub fn len(&self) -> Result<usize> {
        let mut count = 0;
        check(unsafe { sys::hcp_lint_report_count(&mut count, self.raw) })?;
        Ok(count)
    }

    pub fn is_empty(&self) -> Result<bool> {
        self.len().map(|n| n == 0)
    }

    /// Finding `index` (0-based, sorted by position).
    pub fn get(&self, index: usize) -> Result<Diagnostic> {
        let mut d: sys::hcp_lint_diagnostic = init()?;
        check(unsafe { sys::hcp_lint_report_get(&mut d, self.raw, index) })?;
        // hcp.h: "The strings belong to the report and stay valid until it is destroyed" - copied while borrowed.
        unsafe {
            Ok(Diagnostic {
                code: copy_str(d.code),
                rule: copy_str(d.rule),
                message: copy_str(d.message),
                hint: copy_str(d.hint),
                file: copy_str(d.file),
                line: d.line,
                col: d.col,
                severity: Severity::from_raw(d.severity),
            })
        }
    }

    pub fn diagnostics(&self) -> Result<Vec<Diagnostic>> {
        (0..self.len()?).map(|i| self.get(i)).collect()
    }

    /// "text" (no colour), "json", "sarif" or "github"; another format is `Status::InvalidArgument`.
    pub fn render(&self, format: &str) -> Result<String> {
        let format = c_string("format", format)?;
        let mut text: *mut c_char = ptr::null_mut();
        check(unsafe { sys::hcp_lint_report_render(&mut text, self.raw, format.as_ptr()) })?;
        Ok(unsafe { take_string(text) })
    }

    /// The message of the last failed call on this report, from whichever thread made it ("" if none).
    pub fn last_error(&self) -> Result<String> {
        handle_error(sys::hcp_lint_report_last_error, self.raw)
    }
}

impl Drop for LintReport {
    fn drop(&mut self) {
        unsafe { sys::hcp_lint_report_destroy(self.raw) }
    }
}

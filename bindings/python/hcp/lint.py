"""hcp-lint over the C ABI: lint a config file or text and get Diagnostic objects."""

import ctypes
import os
from dataclasses import dataclass

from . import _native
from ._native import check, lib
from .errors import HcpIOError, InvalidArgumentError

SEVERITIES = {0: "info", 1: "warning", 2: "error"}


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    rule: str
    message: str
    file: str
    line: int
    col: int
    hint: str

    def __str__(self):
        where = f"{self.file}:{self.line}:{self.col}" if self.line else self.file
        return f"{where}: {self.severity}[{self.code}]: {self.message}"


class LintReport:
    """The findings of one lint call; render() gives the CLI's text, json, sarif or github output."""

    def __init__(self, handle):
        self._handle = handle
        count = ctypes.c_size_t()
        check(lib.hcp_lint_report_count(ctypes.byref(count), handle))
        self.diagnostics = [self._get(i) for i in range(count.value)]

    def _get(self, index):
        d = _native.LintDiagnostic()
        d.struct_size = ctypes.sizeof(d)
        check(lib.hcp_lint_report_get(ctypes.byref(d), self._handle, index))
        text = lambda p: p.decode("utf-8", "replace") if p else ""  # noqa: E731
        return Diagnostic(text(d.code), SEVERITIES.get(d.severity, str(d.severity)), text(d.rule), text(d.message),
                          text(d.file), d.line, d.col, text(d.hint))

    def render(self, format="text"):
        out = ctypes.c_void_p()
        check(lib.hcp_lint_report_render(ctypes.byref(out), self._handle, format.encode()))
        return _native.take_string(out)

    def close(self):
        if self._handle:
            lib.hcp_lint_report_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


def _csv(value):
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    return ",".join(value).encode()


def _count(name, value):
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0 or value >= 1 << 63:
        raise InvalidArgumentError(f"{name} must be a positive integer (got {value!r})", 1)
    return value


def _names_a_file(path_or_text):
    """Whether lint() was given a path: a PathLike, or a one-line string that is not config text. A one-line string
    that names no file and is no override (`key=value`) or JSON is a mistyped path, never config text."""
    if isinstance(path_or_text, os.PathLike):
        return True
    if not isinstance(path_or_text, str) or "\n" in path_or_text:
        return False
    if os.path.exists(path_or_text):
        return True
    text = path_or_text.strip()
    if "=" in text or text.startswith(("{", "#")) or not text:
        return False
    raise HcpIOError(f"{path_or_text}: no such file (to lint a config given as text, use hcp.lint_text)",
                     HcpIOError.status)


def lint_report(path_or_text, *, name=None, input_format=None, overrides=(), select=None, ignore=None,
                severity=None, world_size=None, nodes=None, gpus_per_node=None, te_version=None, gpu=None,
                _text=False):
    """Lints a file (a path, or a one-line string naming an existing file) or a config text (several lines, an
    override `key=value`, JSON); returns a LintReport. A one-line string that names no file raises HcpIOError:
    use lint_text_report for a one-line config text.

    severity: {"HCP011": "error", ...}. Raises HcpIOError / ParseError when the input cannot be read or parsed.
    """
    opts = _native.LintOptions()
    opts.struct_size = ctypes.sizeof(opts)
    keep = []  # the byte strings must outlive the call
    def c_str(value):
        if value is None:
            return None
        b = value.encode() if isinstance(value, str) else bytes(value)
        keep.append(b)
        return b
    opts.input_format = c_str(input_format)
    encoded = [c_str(o) for o in overrides]
    array = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
    opts.overrides = array
    opts.num_overrides = len(encoded)
    opts.select, opts.ignore = c_str(_csv(select)), c_str(_csv(ignore))
    if severity:
        opts.severities = c_str(",".join(f"{k}={v}" for k, v in severity.items()))
    opts.world_size, opts.nodes = _count("world_size", world_size), _count("nodes", nodes)
    opts.gpus_per_node = _count("gpus_per_node", gpus_per_node)
    opts.te_version, opts.gpu = c_str(te_version), c_str(gpu)

    handle = ctypes.c_void_p()
    if not _text and _names_a_file(path_or_text):
        check(lib.hcp_lint_file(ctypes.byref(handle), os.fsencode(path_or_text), ctypes.byref(opts)))
    else:
        data = path_or_text.encode() if isinstance(path_or_text, str) else bytes(path_or_text)
        check(lib.hcp_lint_text(ctypes.byref(handle), data, len(data), c_str(name), ctypes.byref(opts)))
    return LintReport(handle)


def lint_text_report(text, **options):
    """Lints `text` as a config, whatever it looks like; returns a LintReport (options as lint_report)."""
    return lint_report(text, _text=True, **options)


def lint_text(text, **options):
    """Lints `text` as a config and returns its Diagnostic objects (options as lint_report)."""
    report = lint_text_report(text, **options)
    try:
        return report.diagnostics
    finally:
        report.close()


def lint(path_or_text, **options):
    """Lints a config file or text and returns its Diagnostic objects (see lint_report for the options)."""
    report = lint_report(path_or_text, **options)
    try:
        return report.diagnostics
    finally:
        report.close()

"""Loads libhcp and declares the C ABI for ctypes. Internal: use the classes in the package instead."""

import ctypes
import os
import pathlib

from .errors import HcpError, InvalidArgumentError, error_for_status

# The C ABI version these bindings were written against (hcp/hcp.h HCP_VERSION_NUMBER).
EXPECTED_VERSION = (0, 7)
# The soname's version: MAJOR.MINOR while the major is 0 (a minor release may change the ABI), MAJOR from 1.0 on.
_SONAME_VERSION = "%d.%d" % EXPECTED_VERSION if EXPECTED_VERSION[0] == 0 else "%d" % EXPECTED_VERSION[0]


class ParallelConfig(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("world_size", ctypes.c_int64),
        ("tp", ctypes.c_int64),
        ("pp", ctypes.c_int64),
        ("cp", ctypes.c_int64),
        ("ep", ctypes.c_int64),
        ("order", ctypes.c_int32),
        ("num_hcp_levels", ctypes.c_uint32),
        ("hcp_sizes", ctypes.POINTER(ctypes.c_int64)),
        ("gpus_per_node", ctypes.c_int64),
    ]


class RankCoords(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t)] + [(n, ctypes.c_int64) for n in ("tp", "cp", "dp", "pp")]


class Locality(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t)] + [
        (n, ctypes.c_int64) for n in ("group_size", "span", "groups", "groups_crossing_nodes")]


class LogscanEvent(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("kind", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("name", ctypes.c_char_p),
        ("message", ctypes.c_char_p),
        ("file", ctypes.c_char_p),
        ("line", ctypes.c_uint64),
    ]


class LintOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("input_format", ctypes.c_char_p),
        ("overrides", ctypes.POINTER(ctypes.c_char_p)),
        ("num_overrides", ctypes.c_size_t),
        ("select", ctypes.c_char_p),
        ("ignore", ctypes.c_char_p),
        ("severities", ctypes.c_char_p),
        ("world_size", ctypes.c_int64),
        ("nodes", ctypes.c_int64),
        ("gpus_per_node", ctypes.c_int64),
        ("te_version", ctypes.c_char_p),
        ("gpu", ctypes.c_char_p),
    ]


class LintDiagnostic(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t)] + [
        (n, ctypes.c_char_p) for n in ("code", "rule", "message", "hint", "file")] + [
        (n, ctypes.c_int32) for n in ("line", "col", "severity", "reserved0")]


class LogscanOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("gpu", ctypes.c_char_p), ("series", ctypes.c_int32),
                ("reserved0", ctypes.c_int32)]


class PlanOptions(ctypes.Structure):
    _fields_ = ([("struct_size", ctypes.c_size_t), ("model", ctypes.c_char_p)] +
                [(n, ctypes.c_int64) for n in ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim",
                                               "vocab", "seq", "micro_batch", "global_batch", "window")] +
                [("packed", ctypes.c_int32), ("dtype_bytes", ctypes.c_int32), ("nodes", ctypes.c_int64),
                 ("gpus_per_node", ctypes.c_int64), ("gpu", ctypes.c_char_p)] +
                [(n, ctypes.c_double) for n in ("peak_tflops", "memory_gib", "nvlink_gbs", "network_gbs")] +
                [("tp", ctypes.c_int64), ("pp", ctypes.c_int64), ("order", ctypes.c_char_p),
                 ("te_version", ctypes.c_char_p), ("full_recompute", ctypes.c_int32), ("reserved0", ctypes.c_int32)] +
                [(n, ctypes.c_double) for n in ("gemm_efficiency", "attention_efficiency", "memory_fraction")])


class Tensor(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("device", ctypes.c_int32), ("ndim", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 4),
                ("strides", ctypes.c_int64 * 4)]


# Packed sequences and the sliding window (since 0.6), the same fields in both attention option structs.
_MASK_FIELDS = [("sliding_window", ctypes.c_int32), ("num_sequences", ctypes.c_uint32),
                ("window_left", ctypes.c_int64), ("window_right", ctypes.c_int64),
                ("cu_seqlens", ctypes.POINTER(ctypes.c_int64)), ("cu_seqlens_padded", ctypes.POINTER(ctypes.c_int64))]


# Attention sinks, the maximum logit and the attention bias (since 0.8), the same fields in both, after a padding
# field of each struct's own name.
def _sink_fields(reserved):
    return [("softmax_type", ctypes.c_int32), (reserved, ctypes.c_int32),
            ("softmax_offset", ctypes.POINTER(ctypes.c_float)), ("d_softmax_offset", ctypes.POINTER(ctypes.c_float)),
            ("max_logit", ctypes.POINTER(ctypes.c_float)),
            ("attn_bias", ctypes.POINTER(Tensor)), ("d_attn_bias", ctypes.POINTER(Tensor))]


class AttnOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("causal", ctypes.c_int32), ("softmax_scale", ctypes.c_float),
                ("kernel_threads", ctypes.c_int32), ("reserved0", ctypes.c_int32)] + _MASK_FIELDS + \
        _sink_fields("reserved1")


class AttnSimulateOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("cp", ctypes.c_int32), ("cp_comm", ctypes.c_int32),
                ("num_hcp_levels", ctypes.c_uint32), ("reserved0", ctypes.c_int32),
                ("hcp_sizes", ctypes.POINTER(ctypes.c_int64)), ("causal", ctypes.c_int32),
                ("softmax_scale", ctypes.c_float), ("timeout_ms", ctypes.c_int64), ("device", ctypes.c_int32),
                ("reserved1", ctypes.c_int32)] + _MASK_FIELDS + _sink_fields("reserved2")


class CpContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("device", ctypes.c_int32), ("reserved0", ctypes.c_int32),
                ("cuda_stream", ctypes.c_void_p)]


# hcp_comm_callbacks: the caller's functions as C function pointers (each gets `user` first; 0 is success).
_VOIDP, _SIZE, _I32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32
COMM_SEND_RECV_FN = ctypes.CFUNCTYPE(_I32, _VOIDP, _VOIDP, _SIZE, _I32, _VOIDP, _SIZE, _I32, _VOIDP)
COMM_STREAM_FN = ctypes.CFUNCTYPE(_I32, _VOIDP, _VOIDP)
COMM_EXCHANGE_FN = ctypes.CFUNCTYPE(_I32, _VOIDP, _VOIDP, _VOIDP, _SIZE, _VOIDP)
COMM_REDUCE_SCATTER_FN = ctypes.CFUNCTYPE(_I32, _VOIDP, _VOIDP, _VOIDP, _SIZE, _VOIDP)
COMM_SPLIT_FN = ctypes.CFUNCTYPE(_I32, _VOIDP, _I32, _I32, ctypes.POINTER(ctypes.c_void_p), _VOIDP)
COMM_ABORT_FN = ctypes.CFUNCTYPE(None, _VOIDP, ctypes.c_char_p)
COMM_ERROR_MESSAGE_FN = ctypes.CFUNCTYPE(_VOIDP, _VOIDP)  # a char* the callee keeps alive
COMM_RELEASE_FN = ctypes.CFUNCTYPE(None, _VOIDP)


class CommCallbacks(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("user", ctypes.c_void_p),
        ("rank", ctypes.c_int32),
        ("size", ctypes.c_int32),
        ("device", ctypes.c_int32),
        ("reserved0", ctypes.c_int32),
        ("cuda_stream", ctypes.c_void_p),
        ("send_recv", COMM_SEND_RECV_FN),
        ("send_recv_wait", COMM_STREAM_FN),
        ("all_to_all", COMM_EXCHANGE_FN),
        ("all_gather", COMM_EXCHANGE_FN),
        ("reduce_scatter_sum_f32", COMM_REDUCE_SCATTER_FN),
        ("barrier", COMM_STREAM_FN),
        ("split", COMM_SPLIT_FN),
        ("abort", COMM_ABORT_FN),
        ("error_message", COMM_ERROR_MESSAGE_FN),
        ("release", COMM_RELEASE_FN),
    ]


# The C function that fills each struct with its defaults (hcp_<name>_init).
_INIT_NAMES = {ParallelConfig: "parallel_config", RankCoords: "rank_coords", Locality: "locality",
               LintOptions: "lint_options", LintDiagnostic: "lint_diagnostic", LogscanOptions: "logscan_options",
               LogscanEvent: "logscan_event", Tensor: "tensor", AttnOptions: "attn_options",
               AttnSimulateOptions: "attn_simulate_options", CpContextOptions: "cp_context_options",
               PlanOptions: "plan_options", CommCallbacks: "comm_callbacks"}

_I64P = ctypes.POINTER(ctypes.c_int64)
_SIZEP = ctypes.POINTER(ctypes.c_size_t)
_HANDLE = ctypes.c_void_p

# name: (restype, argtypes); every function returning c_int returns an hcp_status.
_PROTOTYPES = {
    "hcp_version_number": (ctypes.c_uint, []),
    "hcp_version_string": (ctypes.c_char_p, []),
    "hcp_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "hcp_last_error": (ctypes.c_char_p, []),
    "hcp_free": (None, [ctypes.c_void_p]),
    "hcp_topology_create": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.POINTER(ParallelConfig)]),
    "hcp_topology_destroy": (None, [_HANDLE]),
    "hcp_topology_dp": (ctypes.c_int, [_I64P, _HANDLE]),
    "hcp_topology_num_levels": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int32), _HANDLE]),
    "hcp_topology_group_size": (ctypes.c_int, [_I64P, _I64P, _HANDLE, ctypes.c_int, ctypes.c_int32]),
    "hcp_topology_coords": (ctypes.c_int, [ctypes.POINTER(RankCoords), _HANDLE, ctypes.c_int64]),
    "hcp_topology_membership": (ctypes.c_int, [_I64P, _I64P, _HANDLE, ctypes.c_int64, ctypes.c_int, ctypes.c_int32]),
    "hcp_topology_group_of": (ctypes.c_int, [_I64P, ctypes.c_size_t, _SIZEP, _HANDLE, ctypes.c_int64, ctypes.c_int,
                                             ctypes.c_int32]),
    "hcp_topology_groups": (ctypes.c_int, [_I64P, ctypes.c_size_t, _SIZEP, _HANDLE, ctypes.c_int, ctypes.c_int32]),
    "hcp_topology_locality": (ctypes.c_int, [ctypes.POINTER(Locality), _HANDLE, ctypes.c_int, ctypes.c_int32]),
    "hcp_topology_to_json": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), _HANDLE, ctypes.c_int64]),
    "hcp_topology_to_svg": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), _HANDLE, ctypes.c_int64]),
    "hcp_plan": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(PlanOptions), ctypes.c_char_p,
                                ctypes.c_size_t]),
    "hcp_lint_file": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.c_char_p, ctypes.POINTER(LintOptions)]),
    "hcp_lint_text": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                     ctypes.POINTER(LintOptions)]),
    "hcp_lint_report_destroy": (None, [_HANDLE]),
    "hcp_lint_report_count": (ctypes.c_int, [_SIZEP, _HANDLE]),
    "hcp_lint_report_get": (ctypes.c_int, [ctypes.POINTER(LintDiagnostic), _HANDLE, ctypes.c_size_t]),
    "hcp_lint_report_render": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), _HANDLE, ctypes.c_char_p]),
    "hcp_logscan_create": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.POINTER(LogscanOptions)]),
    "hcp_logscan_begin_input": (ctypes.c_int, [_HANDLE, ctypes.c_char_p]),
    "hcp_logscan_feed": (ctypes.c_int, [_HANDLE, ctypes.c_void_p, ctypes.c_size_t]),
    "hcp_logscan_finish": (ctypes.c_int, [ctypes.POINTER(_HANDLE), _HANDLE]),
    "hcp_logscan_destroy": (None, [_HANDLE]),
    "hcp_logscan_poll": (ctypes.c_int, [_HANDLE, ctypes.POINTER(LogscanEvent)]),
    "hcp_logscan_scan_paths": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                              ctypes.POINTER(LogscanOptions)]),
    "hcp_logscan_report_verdict": (ctypes.c_int, [ctypes.POINTER(ctypes.c_char_p), _HANDLE]),
    "hcp_logscan_report_render": (ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), _HANDLE, ctypes.c_char_p]),
    "hcp_logscan_report_destroy": (None, [_HANDLE]),
    "hcp_world_create": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.c_int32, ctypes.c_int64]),
    "hcp_world_destroy": (None, [_HANDLE]),
    "hcp_world_comm": (ctypes.c_int, [ctypes.POINTER(_HANDLE), _HANDLE, ctypes.c_int32]),
    "hcp_comm_abort": (ctypes.c_int, [_HANDLE, ctypes.c_char_p]),
    "hcp_cp_context_create": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.POINTER(ParallelConfig), _HANDLE,
                                             ctypes.c_int]),
    "hcp_cp_context_create_with": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.POINTER(ParallelConfig), _HANDLE,
                                                  ctypes.c_int, ctypes.POINTER(CpContextOptions)]),
    "hcp_cp_context_destroy": (None, [_HANDLE]),
    "hcp_nccl_unique_id": (ctypes.c_int, [ctypes.POINTER(ctypes.c_uint8)]),
    "hcp_comm_create_nccl": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.POINTER(ctypes.c_uint8), ctypes.c_int32,
                                            ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64]),
    "hcp_comm_wrap_nccl": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]),
    "hcp_comm_destroy": (None, [_HANDLE]),
    "hcp_comm_create_callbacks": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.POINTER(CommCallbacks)]),
    "hcp_cp_context_create_on_groups": (ctypes.c_int, [ctypes.POINTER(_HANDLE), _HANDLE, ctypes.POINTER(_HANDLE),
                                                        ctypes.c_uint32, ctypes.c_int32,
                                                        ctypes.POINTER(CpContextOptions)]),
    "hcp_comm_rank": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32), _HANDLE]),
    "hcp_mpi_init": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int32)]),
    "hcp_mpi_finalize": (ctypes.c_int, []),
    "hcp_comm_create_mpi": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.c_int64, ctypes.c_int64]),
    "hcp_comm_create_nccl_mpi": (ctypes.c_int, [ctypes.POINTER(_HANDLE), ctypes.c_int64, ctypes.c_void_p,
                                                ctypes.c_int64]),
    "hcp_cp_context_rank": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32), _HANDLE]),
    "hcp_attn_forward": (ctypes.c_int, [_HANDLE, ctypes.POINTER(AttnOptions)] + [ctypes.POINTER(Tensor)] * 5),
    "hcp_attn_backward": (ctypes.c_int, [_HANDLE, ctypes.POINTER(AttnOptions)] + [ctypes.POINTER(Tensor)] * 9),
    "hcp_attn_simulate": (ctypes.c_int, [ctypes.POINTER(AttnSimulateOptions)] + [ctypes.POINTER(Tensor)] * 9),
    "hcp_packed_rank_indices": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                                               ctypes.c_uint32, ctypes.c_int32, ctypes.c_int32,
                                               ctypes.POINTER(ctypes.c_int64), ctypes.c_int64,
                                               ctypes.POINTER(ctypes.c_int64)]),
    **{f"hcp_{name}_init": (ctypes.c_int, [ctypes.POINTER(cls), ctypes.c_size_t]) for cls, name in _INIT_NAMES.items()},
}


def _candidates():
    env = os.environ.get("HCP_LIBRARY")
    if env:
        yield pathlib.Path(env)
        return
    here = pathlib.Path(__file__).resolve().parent
    # A wheel carries its own copy beside this file.
    bundled = here / "lib" / f"libhcp.so.{_SONAME_VERSION}"
    if bundled.exists():
        yield bundled
    # The build tree of a source checkout: bindings/python/hcp -> repository root -> build*/capi/libhcp.so
    if len(here.parents) > 2:
        for build in sorted(here.parents[2].glob("build*")):
            yield build / "capi" / "libhcp.so"
    # The system loader's search path (an installed library: the libhcp0.N package, or cmake --install).
    yield pathlib.Path(f"libhcp.so.{_SONAME_VERSION}")


def _load():
    tried = []
    for path in _candidates():
        if path.is_absolute() and not path.exists():
            tried.append(f"{path} (missing)")
            continue
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as exc:
            tried.append(f"{path} ({exc})")
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        version = lib.hcp_version_number()
        found = (version // 10000, version // 100 % 100)
        if found != EXPECTED_VERSION:
            raise HcpError(f"{path} is hcp C ABI {found[0]}.{found[1]}, these bindings need "
                           f"{EXPECTED_VERSION[0]}.{EXPECTED_VERSION[1]}")
        return lib
    raise HcpError("cannot load libhcp; set HCP_LIBRARY to its path. Tried: " + "; ".join(tried))


lib = _load()


# Integer field types by ctypes code: (lowest, highest) value.
_INT_RANGES = {code: ((-(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1) if code.islower() else (0, (1 << (8 * size)) - 1))
               for code, size in (("b", 1), ("h", 2), ("i", 4), ("l", 8), ("q", 8),
                                  ("B", 1), ("H", 2), ("I", 4), ("L", 8), ("Q", 8))}


def set_field(struct, name, value):
    """Sets an integer field only to a value it can hold: ctypes would otherwise wrap 2**64 + 32 to 32 silently."""
    ftype = dict(struct._fields_)[name]
    rng = _INT_RANGES.get(getattr(ftype, "_type_", None))
    if rng is not None:
        if not isinstance(value, int):
            raise InvalidArgumentError(f"{name} must be an integer, got {value!r}", 1)
        if not rng[0] <= value <= rng[1]:
            raise InvalidArgumentError(f"{name} = {value} does not fit ({rng[0]} to {rng[1]})", 1)
    setattr(struct, name, value)


def new(cls, **fields):
    """A struct with the library's defaults (its hcp_<name>_init), then the given fields."""
    value = cls()
    check(getattr(lib, f"hcp_{_INIT_NAMES[cls]}_init")(ctypes.byref(value), ctypes.sizeof(cls)))
    for name, v in fields.items():
        set_field(value, name, v)
    return value


def check(status):
    """Raises the exception class of a non-zero status with the library's last error message."""
    if status != 0:
        raise error_for_status(status, lib.hcp_last_error().decode("utf-8", "replace"))


def take_string(ptr):
    """Copies a library-owned NUL-terminated string and releases it with hcp_free."""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8")
    finally:
        lib.hcp_free(ptr)

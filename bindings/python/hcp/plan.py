"""hcp plan over the C ABI: which context-parallel layout for a model on a cluster (docs/plan.md)."""

import ctypes
import json

from . import _native
from ._native import PlanOptions, check, lib
from .errors import InvalidArgumentError

_TEXT = ("model", "gpu", "order", "te_version")
_FLAGS = ("packed", "full_recompute")


def plan(format="json", top=10, **options):
    """Ranks every context-parallel layout of a model on a cluster. Keywords are the fields of hcp_plan_options
    (model, layers, hidden, ffn_hidden, heads, kv_heads, head_dim, vocab, seq, micro_batch, global_batch, window,
    packed, dtype_bytes, nodes, gpus_per_node, gpu, peak_tflops, memory_gib, nvlink_gbs, network_gbs, tp, pp,
    order, te_version, full_recompute, gemm_efficiency, attention_efficiency, memory_fraction). Returns the parsed
    JSON report for format "json", else the text or the HTML page.

    >>> r = plan(model="llama3-70b", seq=131072, nodes=16, gpu="h100", full_recompute=True)
    >>> r["ranked"][0]["layout"]["describe"]
    'tp 2, pp 4, cp 16 p2p'
    """
    known = {name for name, _ in PlanOptions._fields_} - {"struct_size", "reserved0"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InvalidArgumentError(f"plan: unknown option(s) {', '.join(unknown)}", 1)
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise InvalidArgumentError(f"plan: top must be a positive integer, got {top!r}", 1)
    raw = _native.new(PlanOptions)
    for name, value in options.items():
        if value is None:
            continue
        if name in _TEXT:
            value = str(value).encode()
        elif name in _FLAGS:
            value = 1 if value else 0
        _native.set_field(raw, name, value)
    out = ctypes.c_void_p()
    check(lib.hcp_plan(ctypes.byref(out), ctypes.byref(raw), format.encode(), top))
    text = _native.take_string(out)
    return json.loads(text) if format == "json" else text

"""Context-parallel attention over the C ABI: attention_simulate (W in-process ranks on full tensors) and the
per-rank API (World or NcclComm, CpContext). Host tensors are buffer-protocol objects (array.array, memoryview,
bytearray, numpy arrays when numpy is installed) holding contiguous [B, S, H, D] data: fp32 ('f'), or bf16 / fp16
as 16-bit integers ('H') with dtype="bf16" / "fp16"; results come back as array.array ('f' or 'H'). On a CUDA
context (device="cuda") tensors are device pointers passed as integers (e.g. torch's tensor.data_ptr()), outputs
included. The ctypes calls release the GIL, so several Python threads can drive the ranks of one World."""

import array
import ctypes
import threading

from ._native import AttnOptions, AttnSimulateOptions, CpContextOptions, ParallelConfig, Tensor, check, lib, new
from .errors import HcpError

COMMS = {"p2p": 0, "a2a": 1, "a2a+p2p": 2, "all_gather": 3}
DEVICES = {"cpu": 0, "cuda": 1}
_DTYPES = {"fp32": (0, "f", 4), "bf16": (1, "H", 2), "fp16": (2, "H", 2)}


def _device(name):
    if name not in DEVICES:
        raise ValueError(f"device must be one of {sorted(DEVICES)}, got {name!r}")
    return DEVICES[name]


def _dtype(name):
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {name!r}")
    return _DTYPES[name]


def _comm(name):
    if name not in COMMS:
        raise ValueError(f"comm must be one of {sorted(COMMS)}, got {name!r}")
    return COMMS[name]


def _address(obj, nbytes, writable):
    """The address of a contiguous buffer of at least nbytes, and the object that keeps it alive."""
    view = memoryview(obj)
    if not view.c_contiguous:
        raise ValueError("tensors must be contiguous")
    view = view.cast("B")
    if view.nbytes != nbytes:
        raise ValueError(f"buffer holds {view.nbytes} bytes, {nbytes} expected")
    if view.readonly:
        if writable:
            raise ValueError("output buffers must be writable")
        keep = (ctypes.c_char * nbytes).from_buffer_copy(view)
    else:
        keep = (ctypes.c_char * nbytes).from_buffer(view)
    return ctypes.addressof(keep), keep


def _tensor(obj, shape, dtype_code, elem, writable, keep, device=0, seq_first=False):
    """A descriptor of a host buffer, or (device 1) of a device pointer given as an integer. seq_first: the
    [B, S, H, D] shape describes [S, B, H, D] memory (Transformer Engine's sbhd), by its strides."""
    if device:
        if not isinstance(obj, int) or obj == 0:
            raise ValueError("CUDA tensors are device pointers given as non-zero integers")
        addr = obj
    else:
        nbytes = elem
        for n in shape:
            nbytes *= n
        addr, holder = _address(obj, nbytes, writable)
        keep.append(holder)
    t = new(Tensor)
    t.data = addr
    t.dtype = dtype_code
    t.device = device
    t.ndim = len(shape)
    stride = 1
    for i in reversed(range(len(shape))):
        t.shape[i] = shape[i]
        t.strides[i] = stride
        stride *= shape[i]
    if seq_first:  # token s of batch b at (s B + b) rows of H x D
        b, _, h, d = shape
        t.strides[0], t.strides[1] = h * d, b * h * d
    return t


def _int64s(values, keep):
    """A C array of int64 kept alive by `keep`, or None."""
    if values is None:
        return None
    arr = (ctypes.c_int64 * len(values))(*(int(x) for x in values))
    keep.append(arr)
    return ctypes.cast(arr, ctypes.POINTER(ctypes.c_int64))


def _mask(options, cu_seqlens, cu_seqlens_padded, window, keep):
    """Puts packed documents (cu_seqlens offsets of the real lengths, cu_seqlens_padded where each starts) and a
    sliding window (left, right; -1 unbounded) on an options struct."""
    if window is not None:
        left, right = window
        options.sliding_window, options.window_left, options.window_right = 1, int(left), int(right)
    if cu_seqlens is not None:
        if cu_seqlens_padded is not None and len(cu_seqlens_padded) != len(cu_seqlens):
            raise ValueError("cu_seqlens and cu_seqlens_padded must have the same length")
        options.num_sequences = len(cu_seqlens) - 1
        options.cu_seqlens = _int64s(cu_seqlens, keep)
        options.cu_seqlens_padded = _int64s(cu_seqlens_padded, keep)
    elif cu_seqlens_padded is not None:
        raise ValueError("cu_seqlens_padded needs cu_seqlens")
    return options


SOFTMAX_TYPES = {"vanilla": 0, "off-by-one": 1, "learnable": 2}


def _sinks(options, softmax, sink, d_sink, heads, keep):
    """Puts attention sinks (Transformer Engine's softmax_type) on an options struct: "vanilla", "off-by-one" (a
    logit 0 in every softmax) or "learnable" (sink: one logit per head; d_sink: a writable buffer of as many
    float32 the backward writes the sinks' gradient into, or None)."""
    if softmax not in SOFTMAX_TYPES:
        raise ValueError(f"softmax must be one of {sorted(SOFTMAX_TYPES)}, got {softmax!r}")
    options.softmax_type = SOFTMAX_TYPES[softmax]
    if softmax != "learnable":
        if sink is not None or d_sink is not None:
            raise ValueError("sink and d_sink go with softmax='learnable'")
        return options
    values = [float(x) for x in (sink if sink is not None else [])]
    if len(values) != heads:
        raise ValueError(f"softmax='learnable' needs sink with one value per head ({heads}), got {len(values)}")
    offsets = (ctypes.c_float * heads)(*values)
    keep.append(offsets)
    options.softmax_offset = ctypes.cast(offsets, ctypes.POINTER(ctypes.c_float))
    options.d_softmax_offset = _out_floats(d_sink, heads, "d_sink", keep)
    return options


def _out_floats(buffer, count, name, keep):
    """A float* into `buffer` (writable, at least `count` float32) for the library to write; None for None."""
    if buffer is None:
        return None
    view = memoryview(buffer).cast("B")
    if view.readonly or view.nbytes < 4 * count:
        raise ValueError(f"{name} must be a writable buffer of {count} float32 values")
    values = (ctypes.c_float * count).from_buffer(view)
    keep.append(values)
    return ctypes.cast(values, ctypes.POINTER(ctypes.c_float))


def _max_logit(options, buffer, heads, keep):
    """Asks the forward for each head's largest logit into `buffer` (writable, `heads` float32); None: not."""
    options.max_logit = _out_floats(buffer, heads, "max_logit", keep)
    return options


def _bias(options, bias, bias_shape, d_bias, device, keep):
    """Puts an attention bias (Transformer Engine's post_scale_bias; float32, 4-D: [Bb, Hb, rows, S]) on an options
    struct, and d_bias, a writable buffer of as many float32 for its gradient (or None). bias_shape: the bias's
    shape when it is not a 4-D buffer."""
    if bias is None:
        if d_bias is not None:
            raise ValueError("d_bias goes with bias")
        return options
    shape = tuple(int(n) for n in bias_shape) if bias_shape is not None else tuple(memoryview(bias).shape)
    if len(shape) != 4 or min(shape) < 1:
        raise ValueError(f"bias must be 4-dimensional ([Bb, Hb, rows, S]; pass bias_shape=), got shape {shape}")
    t = _tensor(bias, shape, 0, 4, False, keep, device)
    keep.append(t)
    options.attn_bias = ctypes.pointer(t)
    if d_bias is not None:
        g = _tensor(d_bias, shape, 0, 4, True, keep, device)
        keep.append(g)
        options.d_attn_bias = ctypes.pointer(g)
    return options


def pad_for_cp(cu_seqlens, cp):
    """cu_seqlens_padded with every document padded to a multiple of 2 x cp (what Transformer Engine requires)."""
    padded, unit = [0], 2 * int(cp)
    for start, end in zip(cu_seqlens, cu_seqlens[1:]):
        padded.append(padded[-1] + (end - start + unit - 1) // unit * unit)
    return padded


def packed_rank_indices(cu_seqlens, cp, rank, cu_seqlens_padded=None):
    """The rows of the padded packed batch that CP rank `rank` holds, in its order (TE's
    thd_get_partitioned_indices): per document, chunk rank then chunk 2cp-1-rank."""
    keep = []
    padded = cu_seqlens_padded if cu_seqlens_padded is not None else cu_seqlens
    capacity = max(0, padded[-1] // max(1, int(cp)))
    out = (ctypes.c_int64 * max(1, capacity))()
    count = ctypes.c_int64()
    check(lib.hcp_packed_rank_indices(_int64s(cu_seqlens, keep), _int64s(cu_seqlens_padded, keep),
                                      len(cu_seqlens) - 1, int(cp), int(rank), out, capacity, ctypes.byref(count)))
    return list(out[:count.value])


def _shape_of(obj, shape, seq_first=False):
    if shape is not None:
        return tuple(int(n) for n in shape)
    view_shape = memoryview(obj).shape
    if len(view_shape) != 4:
        raise ValueError("pass shape=(B, S, H, D) for buffers that are not 4-dimensional")
    return (view_shape[1], view_shape[0]) + tuple(view_shape[2:]) if seq_first else tuple(view_shape)


def attention_simulate(q, k, v, cp, comm="p2p", hcp_sizes=None, causal=True, dout=None, shape=None, kv_heads=None,
                       dtype="fp32", softmax_scale=0.0, timeout_ms=60000, device="cpu", cu_seqlens=None,
                       cu_seqlens_padded=None, window=None, softmax="vanilla", sink=None, max_logit=False,
                       layout="bshd", head_dim_v=None, bias=None, bias_shape=None):
    """Runs CP attention on `cp` in-process ranks; returns a dict with out, lse ([B, H, S] fp32) and, with dout,
    dq, dk, dv (and d_sink, the sinks' gradient, with softmax="learnable"). softmax: attention sinks, "vanilla",
    "off-by-one" or "learnable" with sink, one logit per head. max_logit=True adds "max_logit": each head's largest
    logit over the batch (Transformer Engine's return_max_logit). layout="sbhd": q, k, v, dout and the outputs are
    [S, B, H, D] (Transformer Engine's and Megatron's default; shape stays (B, S, H, D)); lse stays [B, H, S]. shape: (B, S, H, D) of q when q is not a 4-D buffer; kv_heads: k's heads (default H).
    head_dim_v: v's head dim where it differs from q's and k's (MLA, e.g. 192 and 128; default: v's own last
    dimension, or D with shape=); out, dout and dv then have it. bias: an attention bias (Transformer Engine's
    post_scale_bias), float32 [Bb, Hb, S, S] or [1, 1, 1, S] (Bb 1 or B, Hb 1 or H; bias_shape= when it is not a
    4-D buffer), added to the scaled scores; with dout the result has "d_bias", its gradient in its shape. Not with
    packed documents; CPU only.
    device="cuda" runs every rank on the current GPU (bf16/fp16, head dims multiples of 8 up to 256); the tensors
    stay host buffers.
    Packed documents: cu_seqlens (offsets of the real lengths) and cu_seqlens_padded (where each starts, padded
    lengths divisible by 2 x cp; default cu_seqlens) with shape (1, T, H, D), T the padded total. window=(left,
    right) limits each query to keys left before and right after it (-1: unbounded)."""
    code, fmt, elem = _dtype(dtype)
    if layout not in ("bshd", "sbhd"):
        raise ValueError(f"layout must be bshd or sbhd, got {layout!r}")
    sf = layout == "sbhd"
    b, s, h, d = _shape_of(q, shape, sf)
    hkv = h if kv_heads is None else int(kv_heads)
    dv = d if head_dim_v is None else int(head_dim_v)
    if shape is None:
        hkv = memoryview(k).shape[2]
        if head_dim_v is None:
            dv = memoryview(v).shape[3]
    q_shape, kv_shape = (b, s, h, d), (b, s, hkv, d)
    o_shape, v_shape = (b, s, h, dv), (b, s, hkv, dv)
    if min(b, s, h, hkv, d, dv) < 1:
        raise ValueError(f"shape (B, S, H, D) = {q_shape}, kv heads {hkv} and head_dim_v {dv} must be positive")
    keep = []
    # The inputs first: their buffers must hold the shape, which bounds the outputs allocated after them (a shape
    # larger than q raises here, not as a MemoryError for outputs of that shape).
    q_t, k_t, v_t = (_tensor(q, q_shape, code, elem, False, keep, seq_first=sf),
                     _tensor(k, kv_shape, code, elem, False, keep, seq_first=sf),
                     _tensor(v, v_shape, code, elem, False, keep, seq_first=sf))
    dout_t = None if dout is None else _tensor(dout, o_shape, code, elem, False, keep, seq_first=sf)
    out = array.array(fmt, bytes(b * s * h * dv * elem))
    lse = array.array("f", bytes(b * h * s * 4))
    tensors = [q_t, k_t, v_t, _tensor(out, o_shape, code, elem, True, keep, seq_first=sf),
               _tensor(lse, (b, h, s), 0, 4, True, keep)]
    result = {"out": out, "lse": lse}
    if dout is not None:
        result["dq"] = array.array(fmt, bytes(b * s * h * d * elem))
        result["dk"] = array.array(fmt, bytes(b * s * hkv * d * elem))
        result["dv"] = array.array(fmt, bytes(b * s * hkv * dv * elem))
        tensors += [dout_t, _tensor(result["dq"], q_shape, code, elem, True, keep, seq_first=sf),
                    _tensor(result["dk"], kv_shape, code, elem, True, keep, seq_first=sf),
                    _tensor(result["dv"], v_shape, code, elem, True, keep, seq_first=sf)]
    ptrs = [ctypes.byref(t) for t in tensors] + [None] * (9 - len(tensors))
    sizes = (ctypes.c_int64 * len(hcp_sizes or []))(*(hcp_sizes or []))
    o = new(AttnSimulateOptions, cp=int(cp), cp_comm=_comm(comm), num_hcp_levels=len(hcp_sizes or []),
            hcp_sizes=ctypes.cast(sizes, ctypes.POINTER(ctypes.c_int64)) if hcp_sizes else None,
            causal=1 if causal else 0, softmax_scale=float(softmax_scale), timeout_ms=int(timeout_ms),
            device=_device(device))
    _mask(o, cu_seqlens, cu_seqlens_padded, window, keep)
    if softmax == "learnable" and dout is not None:
        result["d_sink"] = array.array("f", bytes(4 * h))
    _sinks(o, softmax, sink, result.get("d_sink"), h, keep)
    if max_logit:
        result["max_logit"] = array.array("f", bytes(4 * h))
    _max_logit(o, result.get("max_logit"), h, keep)
    if bias is not None and dout is not None:
        n = memoryview(bias).cast("B").nbytes // 4 if bias_shape is None else _count(bias_shape)
        result["d_bias"] = array.array("f", bytes(4 * n))
    _bias(o, bias, bias_shape, result.get("d_bias"), 0, keep)
    check(lib.hcp_attn_simulate(ctypes.byref(o), *ptrs))
    return result


class World:
    """An in-process world of `ranks` communicators; drive each rank from its own thread."""

    def __init__(self, ranks, timeout_ms=60000):
        self._handle = ctypes.c_void_p()
        check(lib.hcp_world_create(ctypes.byref(self._handle), int(ranks), int(timeout_ms)))
        self.size = int(ranks)

    def comm(self, rank):
        handle = ctypes.c_void_p()
        check(lib.hcp_world_comm(ctypes.byref(handle), self._handle, int(rank)))
        return handle

    def close(self):
        if self._handle:
            lib.hcp_world_destroy(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()


def nccl_unique_id():
    """The 128 bytes of a fresh ncclUniqueId (rank 0 creates it and sends it to the other ranks)."""
    buf = (ctypes.c_uint8 * 128)()
    check(lib.hcp_nccl_unique_id(buf))
    return bytes(buf)


class _OwnedComm:
    """A communicator the caller owns (hcp_comm_destroy on close or collection); `_handle` is set first thing."""

    _handle = ctypes.c_void_p()

    @property
    def handle(self):
        return self._handle

    def close(self):
        if self._handle:
            lib.hcp_comm_destroy(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()


class NcclComm(_OwnedComm):
    """A world communicator over NCCL (one rank per GPU; device memory; operations ordered on cuda_stream, an
    integer cudaStream_t, 0 for the default stream - the same stream as the CpContext's). Create it from a unique
    id, or wrap an existing ncclComm_t with NcclComm.wrap(pointer)."""

    def __init__(self, unique_id, rank, size, cuda_stream=0, timeout_ms=60000, _wrap=None):
        self._handle = ctypes.c_void_p()
        if _wrap is not None:
            check(lib.hcp_comm_wrap_nccl(ctypes.byref(self._handle), ctypes.c_void_p(_wrap),
                                         ctypes.c_void_p(cuda_stream or None), int(timeout_ms)))
            return
        if len(unique_id) != 128:
            raise ValueError("unique_id must be the 128 bytes of nccl_unique_id()")
        id_buf = (ctypes.c_uint8 * 128)(*unique_id)
        check(lib.hcp_comm_create_nccl(ctypes.byref(self._handle), id_buf, int(rank), int(size),
                                       ctypes.c_void_p(cuda_stream or None), int(timeout_ms)))

    @classmethod
    def wrap(cls, nccl_comm, cuda_stream=0, timeout_ms=60000):
        return cls(None, 0, 0, cuda_stream, timeout_ms, _wrap=int(nccl_comm))



MPI_COMM_WORLD = -1  # hcp.h's HCP_MPI_COMM_WORLD


def mpi_init():
    """Initialises MPI unless the process has (mpi4py's import does); True when this call did."""
    here = ctypes.c_int32()
    check(lib.hcp_mpi_init(ctypes.byref(here)))
    return bool(here.value)


def mpi_finalize():
    """Finalises MPI when mpi_init() initialised it; close every MpiComm first."""
    check(lib.hcp_mpi_finalize())


class MpiComm(_OwnedComm):
    """A world communicator over MPI: one rank per process (mpirun, srun). `comm`: an mpi4py communicator (its
    Fortran handle, comm.py2f(), reaches the library), or None for MPI_COMM_WORLD - mpi4py is not needed then.
    MPI is initialised first when the process has not. With nccl=True, an NCCL communicator started over MPI
    (rank 0 makes the unique id, MPI broadcasts it) on cuda_stream instead."""

    def __init__(self, comm=None, timeout_ms=60000, nccl=False, cuda_stream=0):
        self._handle = ctypes.c_void_p()
        mpi_init()
        fortran = MPI_COMM_WORLD if comm is None else int(comm.py2f())
        if nccl:
            check(lib.hcp_comm_create_nccl_mpi(ctypes.byref(self._handle), fortran,
                                               ctypes.c_void_p(cuda_stream or None), int(timeout_ms)))
        else:
            check(lib.hcp_comm_create_mpi(ctypes.byref(self._handle), fortran, int(timeout_ms)))
        rank, size = ctypes.c_int32(), ctypes.c_int32()
        check(lib.hcp_comm_rank(ctypes.byref(rank), ctypes.byref(size), self._handle))
        self.rank, self.size = rank.value, size.value



def _handle_of(comm):
    """The hcp_comm address of an NcclComm, MpiComm, CallbackComm or World.comm() handle."""
    handle = getattr(comm, "handle", comm)
    return handle.value if isinstance(handle, ctypes.c_void_p) else handle


class _Release:
    """Releases a lock already taken when the with-block ends."""

    def __init__(self, lock):
        self._lock = lock

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._lock.release()


class CpContext:
    """One rank's CP groups and scheme (collective: every rank of the world creates its context concurrently).
    world_comm: World.comm(rank), an NcclComm, an MpiComm or a CallbackComm. device="cuda" computes on the current
    GPU on cuda_stream.
    A context is its rank's: one call at a time, from one thread. A call made while another is running on the same
    context raises HcpError at once (waiting could deadlock the collective)."""

    def __init__(self, world_comm, world_size, cp, comm="p2p", hcp_sizes=None, tp=1, pp=1, device="cpu",
                 cuda_stream=0):
        self._handle = ctypes.c_void_p()  # first: close() runs even when the constructor fails
        self._busy = threading.Lock()
        world_comm = getattr(world_comm, "handle", world_comm)  # an NcclComm, MpiComm or CallbackComm
        self._device = _device(device)
        self._sizes = (ctypes.c_int64 * len(hcp_sizes or []))(*(hcp_sizes or []))
        config = new(ParallelConfig, world_size=world_size, tp=tp, pp=pp, cp=cp)
        if hcp_sizes:
            config.num_hcp_levels = len(hcp_sizes)
            config.hcp_sizes = ctypes.cast(self._sizes, ctypes.POINTER(ctypes.c_int64))
        options = new(CpContextOptions, device=self._device, cuda_stream=cuda_stream or None)
        self._handle = ctypes.c_void_p()
        check(lib.hcp_cp_context_create_with(ctypes.byref(self._handle), ctypes.byref(config), world_comm,
                                             _comm(comm), ctypes.byref(options)))
        self._read_rank()

    def _read_rank(self):
        rank, size = ctypes.c_int32(), ctypes.c_int32()
        check(lib.hcp_cp_context_rank(ctypes.byref(rank), ctypes.byref(size), self._handle))
        self.cp_rank, self.cp_size = rank.value, size.value

    @classmethod
    def on_groups(cls, cp_group, level_groups=(), comm="p2p", device="cpu", cuda_stream=0):
        """A context on groups the caller made, nothing split: cp_group (a CallbackComm, MpiComm, ... in CP rank
        order) and, for comm="a2a+p2p", level_groups [a2a, p2p] with CP rank = a2a rank + a2a size x p2p rank
        (Megatron's layout). Collective over cp_group; the groups must outlive the context."""
        self = cls.__new__(cls)
        self._handle = ctypes.c_void_p()
        self._busy = threading.Lock()
        self._device = _device(device)
        self._sizes = None
        levels = (ctypes.c_void_p * max(1, len(level_groups)))(*[_handle_of(g) for g in level_groups])
        options = new(CpContextOptions, device=self._device, cuda_stream=cuda_stream or None)
        check(lib.hcp_cp_context_create_on_groups(ctypes.byref(self._handle), _handle_of(cp_group),
                                                  levels, len(level_groups), _comm(comm), ctypes.byref(options)))
        self._read_rank()
        return self

    def _one_call(self):
        if not self._busy.acquire(blocking=False):
            raise HcpError("CpContext: a call is already running on this context in another thread (a context is "
                           "its rank's, one call at a time)")
        return _Release(self._busy)

    def _outputs(self, given, shapes, fmts, elems):
        """The output buffers: the caller's (writable buffers on the CPU, device pointers on CUDA), else new arrays
        on the CPU."""
        if self._device:
            if any(g is None for g in given):
                raise ValueError("a CUDA context needs every output as a device pointer")
            return list(given)
        return [g if g is not None else array.array(f, bytes(_count(sh) * e))
                for g, sh, f, e in zip(given, shapes, fmts, elems)]

    def forward(self, q, k, v, shape, kv_heads=None, causal=True, dtype="fp32", out=None, lse=None, cu_seqlens=None,
                cu_seqlens_padded=None, window=None, softmax="vanilla", sink=None, max_logit=None, head_dim_v=None,
                bias=None, bias_shape=None):
        """This rank's dual chunks q [B, S/W, H, D], k, v in; returns (out, lse). On CUDA pass out and lse. Packed
        documents (B = 1, this rank's rows as packed_rank_indices gives them), windows and attention sinks (softmax,
        sink) as attention_simulate. out and lse may be the caller's writable buffers on the CPU too (written in
        place, no copy). max_logit: a writable buffer of H float32 (host memory) that gets each head's largest
        logit over the CP group's whole batch (every rank asks for it or none). head_dim_v: v's and out's head dim
        where it differs from D (MLA). bias: this rank's query rows of an attention bias against every key of the
        sequence, float32 [Bb, Hb, S/W, S] or [1, 1, 1, S] (Transformer Engine's layout under CP; bias_shape= when
        it is not a 4-D buffer)."""
        code, fmt, elem = _dtype(dtype)
        b, s, h, d = shape
        hkv = h if kv_heads is None else kv_heads
        dv = d if head_dim_v is None else int(head_dim_v)
        keep = []
        out, lse = self._outputs([out, lse], [(b, s, h, dv), (b, h, s)], [fmt, "f"], [elem, 4])
        dev = self._device
        ts = [_tensor(q, (b, s, h, d), code, elem, False, keep, dev),
              _tensor(k, (b, s, hkv, d), code, elem, False, keep, dev),
              _tensor(v, (b, s, hkv, dv), code, elem, False, keep, dev),
              _tensor(out, (b, s, h, dv), code, elem, True, keep, dev),
              _tensor(lse, (b, h, s), 0, 4, True, keep, dev)]
        opts = _mask(new(AttnOptions, causal=1 if causal else 0), cu_seqlens, cu_seqlens_padded, window, keep)
        _sinks(opts, softmax, sink, None, h, keep)
        _max_logit(opts, max_logit, h, keep)
        _bias(opts, bias, bias_shape, None, dev, keep)
        with self._one_call():
            check(lib.hcp_attn_forward(self._handle, ctypes.byref(opts), *[ctypes.byref(t) for t in ts]))
        return out, lse

    def backward(self, q, k, v, out, lse, dout, shape, kv_heads=None, causal=True, dtype="fp32", dq=None, dk=None,
                 dv=None, cu_seqlens=None, cu_seqlens_padded=None, window=None, softmax="vanilla", sink=None,
                 d_sink=None, head_dim_v=None, bias=None, bias_shape=None, d_bias=None):
        """From the forward's out and lse and the gradient dout: returns (dq, dk, dv). On CUDA pass dq, dk, dv.
        With softmax="learnable", d_sink (a writable buffer of H float32, host memory) gets the sinks' gradient
        summed over the CP group. head_dim_v: as in forward (v, out, dout and dv have it). bias as in forward;
        d_bias: a writable buffer of as many float32 that gets its gradient (a [1, 1, 1, S] bias's summed over the
        CP group)."""
        code, fmt, elem = _dtype(dtype)
        b, s, h, d = shape
        hkv = h if kv_heads is None else kv_heads
        dvh = d if head_dim_v is None else int(head_dim_v)
        qs, kvs, os_, vs = (b, s, h, d), (b, s, hkv, d), (b, s, h, dvh), (b, s, hkv, dvh)
        keep = []
        dq, dk, dv = self._outputs([dq, dk, dv], [qs, kvs, vs], [fmt] * 3, [elem] * 3)
        dev = self._device
        ts = [_tensor(q, qs, code, elem, False, keep, dev), _tensor(k, kvs, code, elem, False, keep, dev),
              _tensor(v, vs, code, elem, False, keep, dev), _tensor(out, os_, code, elem, False, keep, dev),
              _tensor(lse, (b, h, s), 0, 4, False, keep, dev), _tensor(dout, os_, code, elem, False, keep, dev),
              _tensor(dq, qs, code, elem, True, keep, dev), _tensor(dk, kvs, code, elem, True, keep, dev),
              _tensor(dv, vs, code, elem, True, keep, dev)]
        opts = _mask(new(AttnOptions, causal=1 if causal else 0), cu_seqlens, cu_seqlens_padded, window, keep)
        _sinks(opts, softmax, sink, d_sink, h, keep)
        _bias(opts, bias, bias_shape, d_bias, dev, keep)
        with self._one_call():
            check(lib.hcp_attn_backward(self._handle, ctypes.byref(opts), *[ctypes.byref(t) for t in ts]))
        return dq, dk, dv

    def close(self):
        if self._handle:
            with self._one_call():
                lib.hcp_cp_context_destroy(self._handle)
                self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()


def _count(shape):
    n = 1
    for x in shape:
        n *= x
    return n

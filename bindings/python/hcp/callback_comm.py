"""A communicator made of the caller's collectives (hcp_comm_callbacks): CP contexts then move their data through
the groups a framework already has (torch.distributed, JAX, a trainer's own), on the same ranks as the rest of the
job. Subclass Collectives, wrap it in CallbackComm, and give that to CpContext as the world communicator."""

import ctypes
import itertools
import threading

from .attention import _OwnedComm, _device
from ._native import (COMM_ABORT_FN, COMM_ERROR_MESSAGE_FN, COMM_EXCHANGE_FN, COMM_REDUCE_SCATTER_FN,
                      COMM_RELEASE_FN, COMM_SEND_RECV_FN, COMM_SPLIT_FN, COMM_STREAM_FN, CommCallbacks, check, lib,
                      new)


class Collectives:
    """The exchanges hcp needs, as the caller implements them. `rank` and `size` are this member's place in the
    group. Host buffers come as writable memoryviews of bytes (floats for reduce_scatter_sum_f32); with
    device="cuda" they come as integer device pointers with their byte counts instead, ordered on the stream.
    Raise to fail: hcp then fails the call on this rank (HcpError naming the method and the exception) and calls
    abort(), which must make the other members' pending and later calls fail rather than wait. A method that never
    returns blocks hcp: give the collectives a timeout."""

    rank = 0
    size = 1

    def send_recv(self, send, dst, recv, src):
        """One ring step: send `send` to rank dst and receive rank src's bytes into `recv`."""
        raise NotImplementedError

    def all_to_all(self, send, recv):
        """Chunk j of `send` (size equal chunks) to rank j; rank j's chunk into chunk j of `recv`."""
        raise NotImplementedError

    def all_gather(self, send, recv):
        """Every rank's `send` into `recv` in rank order."""
        raise NotImplementedError

    def reduce_scatter_sum_f32(self, send, recv):
        """`send` holds size blocks of len(recv) floats; `recv` gets the sum over ranks of block `rank`."""
        raise NotImplementedError

    def barrier(self):
        raise NotImplementedError

    def split(self, color, key):
        """Collective: the members with this color (>= 0), ordered by (key, rank), as a new Collectives; None for
        a negative color. Not overriding it means no CP context can be created on this communicator."""
        raise NotImplementedError

    def abort(self, reason):
        """This rank failed (reason, a str): make the other members' calls fail."""
        raise NotImplementedError


# Every live communicator's state by the integer hcp passes back as `user`: its Collectives, the C function
# objects (ctypes frees a callback whose object is collected) and its last error. Released by hcp (release).
_live = {}
_live_lock = threading.Lock()
_ids = itertools.count(1)


class _State:
    def __init__(self, collectives, device, cuda_stream):
        self.collectives = collectives
        self.device = device
        self.cuda_stream = cuda_stream  # the groups split from it order their work on the same stream
        self.error = ctypes.create_string_buffer(1)
        self.functions = []


def _state(user):
    with _live_lock:
        return _live[user]


def _bytes(address, nbytes):
    if nbytes == 0 or not address:
        return memoryview(bytearray(0))
    return memoryview((ctypes.c_char * nbytes).from_address(address)).cast("B")


def _guarded(method_name):
    """A C function calling the Collectives method through `call`; an exception is this rank's failure."""
    def wrap(call):
        def function(user, *args):
            state = _state(user)
            try:
                call(state, *args)
                return 0
            except BaseException as exc:  # noqa: BLE001 - a C caller cannot take a Python exception
                text = f"{method_name}: {type(exc).__name__}: {exc}".encode("utf-8", "replace")
                state.error = ctypes.create_string_buffer(text)
                return 1
        return function
    return wrap


def _buffer(state, address, nbytes):
    return (address or 0, nbytes) if state.device else _bytes(address, nbytes)


@_guarded("send_recv")
def _send_recv(state, send, send_bytes, dst, recv, recv_bytes, src, _stream):
    state.collectives.send_recv(_buffer(state, send, send_bytes), dst, _buffer(state, recv, recv_bytes), src)


@_guarded("all_to_all")
def _all_to_all(state, send, recv, chunk, _stream):
    n = chunk * state.collectives.size
    state.collectives.all_to_all(_buffer(state, send, n), _buffer(state, recv, n))


@_guarded("all_gather")
def _all_gather(state, send, recv, chunk, _stream):
    state.collectives.all_gather(_buffer(state, send, chunk), _buffer(state, recv, chunk * state.collectives.size))


@_guarded("reduce_scatter_sum_f32")
def _reduce_scatter(state, send, recv, count, _stream):
    size = state.collectives.size
    if state.device:
        state.collectives.reduce_scatter_sum_f32((send or 0, 4 * count * size), (recv or 0, 4 * count))
    else:
        state.collectives.reduce_scatter_sum_f32(_bytes(send, 4 * count * size).cast("f"),
                                                 _bytes(recv, 4 * count).cast("f"))


@_guarded("barrier")
def _barrier(state, _stream):
    state.collectives.barrier()


@_guarded("split")
def _split(state, color, key, out, _stream):
    group = state.collectives.split(color, key)
    if group is not None and color >= 0:
        out[0] = _create(group, state.device, state.cuda_stream)  # hcp owns it from here


def _abort(user, reason):
    try:
        _state(user).collectives.abort(reason.decode("utf-8", "replace") if reason else "")
    except BaseException:  # noqa: BLE001 - nothing to tell: hcp fails this rank's call already
        pass


def _error_message(user):
    return ctypes.addressof(_state(user).error)


def _release(user):
    with _live_lock:
        _live.pop(user, None)


# The C function objects, made once: they find their communicator through `user`.
_FUNCTIONS = dict(send_recv=COMM_SEND_RECV_FN(_send_recv), all_to_all=COMM_EXCHANGE_FN(_all_to_all),
                  all_gather=COMM_EXCHANGE_FN(_all_gather),
                  reduce_scatter_sum_f32=COMM_REDUCE_SCATTER_FN(_reduce_scatter), barrier=COMM_STREAM_FN(_barrier),
                  split=COMM_SPLIT_FN(_split), abort=COMM_ABORT_FN(_abort),
                  error_message=COMM_ERROR_MESSAGE_FN(_error_message), release=COMM_RELEASE_FN(_release))


def _create(collectives, device, cuda_stream):
    """A new hcp_comm (a void* handle) over `collectives`; registered first so that hcp's release finds it."""
    user = next(_ids)
    with _live_lock:
        _live[user] = _State(collectives, device, cuda_stream)
    callbacks = new(CommCallbacks, rank=int(collectives.rank), size=int(collectives.size), device=device)
    callbacks.user = user
    callbacks.cuda_stream = cuda_stream or None
    for name, function in _FUNCTIONS.items():
        if name == "split" and type(collectives).split is Collectives.split:
            continue  # not overridden: no split function (CP contexts say so)
        setattr(callbacks, name, function)
    handle = ctypes.c_void_p()
    try:
        check(lib.hcp_comm_create_callbacks(ctypes.byref(handle), ctypes.byref(callbacks)))
    except BaseException:
        _release(user)
        raise
    return handle.value


class CallbackComm(_OwnedComm):
    """A world communicator over the caller's Collectives. device="cuda": the buffers are device memory ordered on
    cuda_stream (an integer cudaStream_t). Close it (or let it be collected) after the contexts made on it."""

    def __init__(self, collectives, device="cpu", cuda_stream=0):
        self._handle = ctypes.c_void_p(_create(collectives, _device(device), cuda_stream))
        self.rank, self.size = int(collectives.rank), int(collectives.size)


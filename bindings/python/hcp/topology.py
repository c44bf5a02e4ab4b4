"""The exact Megatron-Core rank layout with hierarchical CP groups, over the C ABI."""

import ctypes
import json

from . import _native
from ._native import check, lib
from .errors import InvalidArgumentError

GROUP_KINDS = {"tp": 0, "cp": 1, "dp": 2, "pp": 3, "dp_cp": 4, "tp_cp": 5, "mp": 6, "tp_dp_cp": 7, "hcp": 8}
ORDERS = {"tp-cp-ep-dp-pp": 0, "tp-cp-ep-pp-dp": 1}


_INT64 = (-(1 << 63), (1 << 63) - 1)


def _int(name, value):
    """An int that fits in int64_t (ctypes would silently wrap a larger one)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{name} must be an integer (got {value!r})", 1)
    if not _INT64[0] <= value <= _INT64[1]:
        raise InvalidArgumentError(f"{name} ({value}) does not fit in 64 bits", 1)
    return value


def _level(value):
    value = _int("level", value)
    if not -(1 << 31) <= value < (1 << 31):
        raise InvalidArgumentError(f"level ({value}) out of range", 1)
    return value


def _kind(name):
    try:
        return GROUP_KINDS[name]
    except (KeyError, TypeError):
        raise InvalidArgumentError(
            f"unknown group kind {name!r} (expected one of {', '.join(GROUP_KINDS)})", 1) from None


class Topology:
    """A validated parallel configuration and its groups.

    >>> t = Topology(world_size=16, tp=2, cp=4, hcp_sizes=[2, 2])
    >>> t.groups("cp")[:2]
    [[0, 2, 4, 6], [1, 3, 5, 7]]
    >>> t.group_of(5, "hcp", level=0)
    [5, 7]

    Safe to query from several threads at once. Raises InvalidConfigError naming the violated condition.
    """

    def __init__(self, world_size, tp=1, pp=1, cp=1, ep=1, order="tp-cp-ep-dp-pp", hcp_sizes=None,
                 gpus_per_node=8):
        if order not in ORDERS:
            raise InvalidArgumentError(f"unknown order {order!r} (expected one of {', '.join(ORDERS)})", 1)
        config = _native.ParallelConfig()
        config.struct_size = ctypes.sizeof(config)
        config.world_size = _int("world_size", world_size)
        config.tp, config.pp, config.cp, config.ep = _int("tp", tp), _int("pp", pp), _int("cp", cp), _int("ep", ep)
        config.order = ORDERS[order]
        config.gpus_per_node = _int("gpus_per_node", gpus_per_node)
        if hcp_sizes is not None:
            sizes = [_int("hcp_sizes entry", v) for v in hcp_sizes]
            self._sizes = (ctypes.c_int64 * max(len(sizes), 1))(*sizes)
            config.hcp_sizes = ctypes.cast(self._sizes, ctypes.POINTER(ctypes.c_int64))
            config.num_hcp_levels = len(sizes)
        self._handle = ctypes.c_void_p()
        check(lib.hcp_topology_create(ctypes.byref(self._handle), ctypes.byref(config)))

    def close(self):
        """Releases the native handle (also done when the object is collected)."""
        if getattr(self, "_handle", None) and self._handle.value:
            lib.hcp_topology_destroy(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _h(self):
        if not self._handle.value:
            raise InvalidArgumentError("topology is closed", 1)
        return self._handle

    @property
    def dp(self):
        out = ctypes.c_int64()
        check(lib.hcp_topology_dp(ctypes.byref(out), self._h()))
        return out.value

    @property
    def num_levels(self):
        out = ctypes.c_int32()
        check(lib.hcp_topology_num_levels(ctypes.byref(out), self._h()))
        return out.value

    def _size_and_count(self, kind, level):
        size, count = ctypes.c_int64(), ctypes.c_int64()
        check(lib.hcp_topology_group_size(ctypes.byref(size), ctypes.byref(count), self._h(), _kind(kind),
                                          _level(level)))
        return size.value, count.value

    def group_size(self, kind, level=0):
        """Members per group of `kind`."""
        return self._size_and_count(kind, level)[0]

    def group_count(self, kind, level=0):
        """Number of groups of `kind`."""
        return self._size_and_count(kind, level)[1]

    def coords(self, rank):
        """{'tp': .., 'cp': .., 'dp': .., 'pp': ..} of a global rank."""
        out = _native.RankCoords()
        out.struct_size = ctypes.sizeof(out)
        check(lib.hcp_topology_coords(ctypes.byref(out), self._h(), _int("rank", rank)))
        return {"tp": out.tp, "cp": out.cp, "dp": out.dp, "pp": out.pp}

    def membership(self, rank, kind, level=0):
        """(group index in Megatron's order, rank's position inside the group)."""
        index, pos = ctypes.c_int64(), ctypes.c_int64()
        check(lib.hcp_topology_membership(ctypes.byref(index), ctypes.byref(pos), self._h(), _int("rank", rank),
                                          _kind(kind), _level(level)))
        return index.value, pos.value

    def group_of(self, rank, kind, level=0):
        """The members of a rank's group of `kind` (and hierarchical `level` for kind 'hcp')."""
        size = self.group_size(kind, level)
        buf = (ctypes.c_int64 * size)()
        needed = ctypes.c_size_t()
        check(lib.hcp_topology_group_of(buf, size, ctypes.byref(needed), self._h(), _int("rank", rank), _kind(kind),
                                        _level(level)))
        return list(buf)

    def groups(self, kind, level=0):
        """Every group of `kind`, in Megatron's order, as a list of lists."""
        size, count = self._size_and_count(kind, level)
        buf = (ctypes.c_int64 * (size * count))()
        needed = ctypes.c_size_t()
        check(lib.hcp_topology_groups(buf, size * count, ctypes.byref(needed), self._h(), _kind(kind),
                                      _level(level)))
        flat = list(buf)
        return [flat[i:i + size] for i in range(0, len(flat), size)]

    def locality(self, level=0, kind="hcp"):
        """Whether the groups of a kind stay inside one node of gpus_per_node consecutive ranks."""
        out = _native.Locality()
        out.struct_size = ctypes.sizeof(out)
        check(lib.hcp_topology_locality(ctypes.byref(out), self._h(), _kind(kind), _level(level)))
        return {"group_size": out.group_size, "span": out.span, "groups": out.groups,
                "groups_crossing_nodes": out.groups_crossing_nodes,
                "intra_node": out.groups_crossing_nodes == 0}

    def to_svg(self, max_nodes=None):
        """The layout as one self-contained SVG picture (`hcp groups --svg`), at most `max_nodes` nodes drawn."""
        ptr = ctypes.c_void_p()
        check(lib.hcp_topology_to_svg(ctypes.byref(ptr), self._h(), 0 if max_nodes is None else _int("max_nodes", max_nodes)))
        return _native.take_string(ptr)

    def to_dict(self, rank=None):
        """The whole layout (keys of `hcp groups --format json`) or, with `rank`, that rank's view."""
        ptr = ctypes.c_void_p()
        check(lib.hcp_topology_to_json(ctypes.byref(ptr), self._h(), -1 if rank is None else _int("rank", rank)))
        return json.loads(_native.take_string(ptr))

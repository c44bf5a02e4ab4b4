"""CallbackComm: CP contexts over collectives written in Python (threads exchanging through queues, as a framework's
process groups would), every scheme forward and backward against attention_simulate; a collective that raises on
one rank fails every rank; misuse."""

import array
import queue
import random
import threading
import time
import unittest

import hcp

from .test_attention import run_ranks

TIMEOUT_S = 20


class Group:
    """What the members of one group share: a mailbox per (source, destination), a barrier, the split rounds."""

    def __init__(self, size):
        self.size = size
        self.boxes = {(s, d): queue.Queue() for s in range(size) for d in range(size)}
        self.barrier = threading.Barrier(size)
        self.aborted = None
        self.lock = threading.Lock()
        self.splits = {}  # round -> {rank: (color, key)} and the groups made


class ThreadCollectives(hcp.Collectives):
    """A member of a Group. `fail_on`: the name of a method that raises on this member (and on the groups split
    from it)."""

    def __init__(self, group, rank, fail_on=None):
        self.group, self.rank, self.size = group, rank, group.size
        self.fail_on = fail_on
        self.rounds = 0

    def _check(self, name):
        if self.group.aborted:
            raise RuntimeError(f"the group was aborted: {self.group.aborted}")
        if name == self.fail_on:
            raise ValueError(f"injected failure in {name}")

    def _put(self, dst, data):
        self.group.boxes[(self.rank, dst)].put(bytes(data))

    def _get(self, src):
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            try:
                return self.group.boxes[(src, self.rank)].get(timeout=0.05)
            except queue.Empty:
                if self.group.aborted:
                    raise RuntimeError(f"the group was aborted: {self.group.aborted}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"rank {self.rank}: nothing from rank {src} in {TIMEOUT_S} s") from None

    def send_recv(self, send, dst, recv, src):
        self._check("send_recv")
        self._put(dst, send)
        recv[:] = self._get(src)

    def all_to_all(self, send, recv):
        self._check("all_to_all")
        chunk = len(send) // self.size
        for j in range(self.size):
            self._put(j, send[j * chunk:(j + 1) * chunk])
        for j in range(self.size):
            recv[j * chunk:(j + 1) * chunk] = self._get(j)

    def all_gather(self, send, recv):
        self._check("all_gather")
        for j in range(self.size):
            self._put(j, send)
        for j in range(self.size):
            recv[j * len(send):(j + 1) * len(send)] = self._get(j)

    def reduce_scatter_sum_f32(self, send, recv):
        self._check("reduce_scatter_sum_f32")
        n = len(recv)
        for j in range(self.size):
            self._put(j, send[j * n:(j + 1) * n].cast("B"))
        total = array.array("f", bytes(4 * n))
        for j in range(self.size):  # rank order: the same bits every run
            block = array.array("f", self._get(j))
            for i in range(n):
                total[i] += block[i]
        recv[:] = total

    def barrier(self):
        self._check("barrier")
        try:
            self.group.barrier.wait(timeout=TIMEOUT_S)
        except threading.BrokenBarrierError:
            raise RuntimeError(f"the group was aborted: {self.group.aborted}") from None

    def split(self, color, key):
        self._check("split")
        round_ = self.rounds
        self.rounds += 1
        with self.group.lock:
            entry = self.group.splits.setdefault(round_, {"members": {}, "groups": None})
            entry["members"][self.rank] = (color, key)
        self.barrier()
        with self.group.lock:
            if entry["groups"] is None:
                colors = {c for c, _ in entry["members"].values() if c >= 0}
                entry["groups"] = {}
                for c in colors:
                    members = sorted((k, r) for r, (cc, k) in entry["members"].items() if cc == c)
                    entry["groups"][c] = (Group(len(members)), [r for _, r in members])
        if color < 0:
            return None
        group, order = entry["groups"][color]
        return ThreadCollectives(group, order.index(self.rank), self.fail_on)

    def abort(self, reason):
        self.group.aborted = reason or "aborted"
        self.group.barrier.abort()


def rows_of(r, cp, s):
    """The global rows of CP rank r: chunks r and 2cp-1-r of s / 2cp rows."""
    c = s // (2 * cp)
    return list(range(c * r, c * r + c)) + list(range(c * (2 * cp - 1 - r), c * (2 * cp - r)))


def take(t, rows, width):
    return array.array("f", [t[i * width + x] for i in rows for x in range(width)])


class CallbackCommTests(unittest.TestCase):
    S, H, HKV, D, CP = 24, 4, 2, 8, 4

    def setUp(self):
        rnd = random.Random(11)
        n_q, n_kv = self.S * self.H * self.D, self.S * self.HKV * self.D
        self.q = array.array("f", [rnd.uniform(-1, 1) for _ in range(n_q)])
        self.k = array.array("f", [rnd.uniform(-1, 1) for _ in range(n_kv)])
        self.v = array.array("f", [rnd.uniform(-1, 1) for _ in range(n_kv)])
        self.dout = array.array("f", [rnd.uniform(-1, 1) for _ in range(n_q)])

    def run_scheme(self, scheme, hcp_sizes=None):
        s, h, hkv, d, cp = self.S, self.H, self.HKV, self.D, self.CP
        full = hcp.attention_simulate(self.q, self.k, self.v, cp=cp, comm=scheme, hcp_sizes=hcp_sizes,
                                      dout=self.dout, shape=(1, s, h, d), kv_heads=hkv)
        group = Group(cp)
        results = {}
        world = hcp.World(cp)  # only for run_ranks' size: the ranks talk through the Python group

        def rank_main(r):
            comm = hcp.CallbackComm(ThreadCollectives(group, r))
            ctx = hcp.CpContext(comm, world_size=cp, cp=cp, comm=scheme, hcp_sizes=hcp_sizes)
            rows = rows_of(ctx.cp_rank, cp, s)
            q, k, v = take(self.q, rows, h * d), take(self.k, rows, hkv * d), take(self.v, rows, hkv * d)
            local = (1, len(rows), h, d)
            out, lse = ctx.forward(q, k, v, local, kv_heads=hkv)
            grads = ctx.backward(q, k, v, out, lse, take(self.dout, rows, h * d), local, kv_heads=hkv)
            results[r] = (rows, out, grads)
            ctx.close()
            comm.close()

        self.assertEqual(run_ranks(world, rank_main), [])
        world.close()
        for rows, out, (dq, dk, dv) in results.values():
            for name, got, want, width in [("out", out, full["out"], h * d), ("dq", dq, full["dq"], h * d),
                                           ("dk", dk, full["dk"], hkv * d), ("dv", dv, full["dv"], hkv * d)]:
                expected = take(want, rows, width)
                worst = max(abs(a - b) for a, b in zip(got, expected))
                self.assertLess(worst, 1e-5, f"{scheme} {name}")

    def test_every_scheme_forward_and_backward_equal_simulate(self):
        for scheme, sizes in [("p2p", None), ("a2a", None), ("all_gather", None), ("a2a+p2p", [2, 2])]:
            with self.subTest(scheme=scheme):
                self.run_scheme(scheme, sizes)

    def test_a_collective_raising_on_one_rank_fails_every_rank(self):
        cp = self.CP
        group = Group(cp)
        world = hcp.World(cp)
        errors = {}

        def rank_main(r):
            comm = hcp.CallbackComm(ThreadCollectives(group, r, fail_on="send_recv" if r == 1 else None))
            ctx = hcp.CpContext(comm, world_size=cp, cp=cp, comm="p2p")
            q = array.array("f", [0.5] * (6 * self.H * self.D))
            kv = array.array("f", [0.25] * (6 * self.HKV * self.D))
            try:
                ctx.forward(q, kv, kv, (1, 6, self.H, self.D), kv_heads=self.HKV)
            except hcp.HcpError as exc:
                errors[r] = exc
            ctx.close()
            comm.close()

        start = time.monotonic()
        self.assertEqual(run_ranks(world, rank_main), [])
        world.close()
        self.assertLess(time.monotonic() - start, TIMEOUT_S / 2)
        self.assertEqual(sorted(errors), list(range(cp)))
        self.assertIsInstance(errors[1], hcp.CommError)
        self.assertIn("send_recv: ValueError: injected failure in send_recv", str(errors[1]))
        for r in (0, 2, 3):
            self.assertIsInstance(errors[r], (hcp.CommError, hcp.HcpTimeoutError))

    def test_collectives_without_split_cannot_make_a_context(self):
        class NoSplit(hcp.Collectives):
            rank, size = 0, 1

            def abort(self, reason):
                pass

        comm = hcp.CallbackComm(NoSplit())
        with self.assertRaisesRegex(hcp.UnsupportedError, "no split function"):
            hcp.CpContext(comm, world_size=1, cp=1)
        comm.close()
        comm.close()  # twice is harmless

        class Outside(hcp.Collectives):
            rank, size = 2, 2

        with self.assertRaisesRegex(hcp.InvalidArgumentError, "rank 2 and size 2"):
            hcp.CallbackComm(Outside())


class TorchStaysOptional(unittest.TestCase):
    def test_importing_hcp_imports_no_torch(self):
        import subprocess
        import sys
        code = "import sys, hcp; sys.exit('torch' in sys.modules)"
        self.assertEqual(subprocess.run([sys.executable, "-c", code]).returncode, 0)


if __name__ == "__main__":
    unittest.main()

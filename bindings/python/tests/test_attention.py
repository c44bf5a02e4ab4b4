"""attention_simulate and the per-rank API against a plain-Python single-rank attention."""

import array
import math
import random
import threading
import unittest

import hcp


def reference(q, k, v, b, s, h, hkv, d, causal):
    out = [0.0] * (b * s * h * d)
    group = h // hkv
    for bb in range(b):
        for hh in range(h):
            g = hh // group
            for i in range(s):
                scores = []
                for j in range(s if not causal else i + 1):
                    dot = sum(q[((bb * s + i) * h + hh) * d + x] * k[((bb * s + j) * hkv + g) * d + x] for x in range(d))
                    scores.append(dot / math.sqrt(d))
                m = max(scores)
                w = [math.exp(x - m) for x in scores]
                total = sum(w)
                for x in range(d):
                    out[((bb * s + i) * h + hh) * d + x] = sum(
                        w[j] * v[((bb * s + j) * hkv + g) * d + x] for j in range(len(w))) / total
    return out


def reference_masked(q, k, v, s, h, hkv, d, visible, sink=None):
    """Single-rank attention (batch 1) where visible(i, j) says whether query i sees key j; rows seeing nothing
    are 0. sink: one more logit per head in every softmax denominator (attention sinks)."""
    out = [0.0] * (s * h * d)
    group = h // hkv
    for hh in range(h):
        g = hh // group
        for i in range(s):
            keys = [j for j in range(s) if visible(i, j)]
            if not keys:
                continue
            scores = [sum(q[(i * h + hh) * d + x] * k[(j * hkv + g) * d + x] for x in range(d)) / math.sqrt(d)
                      for j in keys]
            m = max(scores + ([sink[hh]] if sink else []))
            w = [math.exp(x - m) for x in scores]
            total = sum(w) + (math.exp(sink[hh] - m) if sink else 0.0)
            for x in range(d):
                out[(i * h + hh) * d + x] = sum(wj * v[(j * hkv + g) * d + x] for wj, j in zip(w, keys)) / total
    return out


def run_ranks(world, rank_main):
    """Runs rank_main(r) for every rank of the world on its own thread; returns the exceptions raised."""
    errors = []

    def guarded(r):
        try:
            rank_main(r)
        except Exception as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(r,)) for r in range(world.size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def dual_chunk_rows(r):
    """The global rows of rank r's dual chunks in a sequence of 16 on 2 ranks (chunks r and 3 - r of length 4)."""
    return list(range(4 * r, 4 * r + 4)) + list(range(4 * (3 - r), 4 * (3 - r) + 4))


def take_rows(t, rows, heads):
    return array.array("f", [t[(i * heads + hh) * 8 + x] for i in rows for hh in range(heads) for x in range(8)])


class AttentionSimulate(unittest.TestCase):
    def setUp(self):
        rnd = random.Random(3)
        self.b, self.s, self.h, self.hkv, self.d = 1, 16, 4, 2, 8
        n_q, n_kv = self.b * self.s * self.h * self.d, self.b * self.s * self.hkv * self.d
        self.q = array.array("f", [rnd.uniform(-1, 1) for _ in range(n_q)])
        self.k = array.array("f", [rnd.uniform(-1, 1) for _ in range(n_kv)])
        self.v = array.array("f", [rnd.uniform(-1, 1) for _ in range(n_kv)])

    def test_every_scheme_matches_the_reference(self):
        want = reference(self.q, self.k, self.v, self.b, self.s, self.h, self.hkv, self.d, True)
        for comm, sizes in [("p2p", None), ("a2a", None), ("a2a+p2p", [2, 2]), ("all_gather", None)]:
            cp = 2 if comm == "a2a" else 4
            got = hcp.attention_simulate(self.q, self.k, self.v, cp=cp, comm=comm, hcp_sizes=sizes, causal=True,
                                         shape=(self.b, self.s, self.h, self.d), kv_heads=self.hkv)
            err = max(abs(a - b) for a, b in zip(got["out"], want))
            self.assertLess(err, 1e-5, comm)

    def test_backward_returns_gradients(self):
        dout = array.array("f", [0.5] * len(self.q))
        got = hcp.attention_simulate(self.q, self.k, self.v, cp=2, dout=dout, shape=(1, 16, 4, 8), kv_heads=2)
        self.assertEqual(len(got["dk"]), len(self.k))
        self.assertTrue(any(x != 0 for x in got["dq"]))

    def test_bad_shapes_raise_shape_error(self):
        with self.assertRaises(hcp.ShapeError):
            hcp.attention_simulate(self.q, self.k, self.v, cp=3, shape=(1, 16, 4, 8), kv_heads=2)
        with self.assertRaises(ValueError):
            hcp.attention_simulate(self.q, self.k, self.v, cp=2, comm="ring", shape=(1, 16, 4, 8), kv_heads=2)
        # A shape larger than the buffers is refused before any output of that shape is allocated (it was a
        # MemoryError for 2^40 elements; issue 54).
        with self.assertRaisesRegex(ValueError, "buffer holds 2048 bytes, 8796093022208 expected"):
            hcp.attention_simulate(self.q, self.k, self.v, cp=2, shape=(1, 2**36, 4, 8), kv_heads=2)
        with self.assertRaisesRegex(ValueError, "must be positive"):
            hcp.attention_simulate(self.q, self.k, self.v, cp=2, shape=(1, -16, 4, 8), kv_heads=2)

    def test_per_rank_api_with_threads(self):
        world = hcp.World(2, timeout_ms=20000)
        results = {}

        def rank_main(r):
            ctx = hcp.CpContext(world.comm(r), world_size=2, cp=2, comm="p2p")
            rows = dual_chunk_rows(r)
            out, _ = ctx.forward(take_rows(self.q, rows, 4), take_rows(self.k, rows, 2), take_rows(self.v, rows, 2),
                                 (1, 8, 4, 8), kv_heads=2)
            results[r] = (rows, out)
            ctx.close()

        self.assertEqual(run_ranks(world, rank_main), [])
        want = reference(self.q, self.k, self.v, self.b, self.s, self.h, self.hkv, self.d, True)
        for rows, out in results.values():
            for li, gi in enumerate(rows):
                for x in range(4 * 8):
                    self.assertAlmostEqual(out[li * 32 + x], want[gi * 32 + x], places=5)

    def test_a_context_refuses_a_second_thread_while_a_call_runs(self):
        # A call of another thread on the same context raises at once: waiting could deadlock the collective, and
        # running it would corrupt the context (one thread at a time, docs/c-api.md; issue 54, item 4).
        world = hcp.World(2, timeout_ms=20000)
        outcome = {}

        def rank_main(r):
            ctx = hcp.CpContext(world.comm(r), world_size=2, cp=2, comm="p2p")
            rows = dual_chunk_rows(r)
            args = (take_rows(self.q, rows, 4), take_rows(self.k, rows, 2), take_rows(self.v, rows, 2), (1, 8, 4, 8))
            if r == 0:
                with ctx._one_call():  # as if this rank's forward were running in another thread
                    with self.assertRaisesRegex(hcp.HcpError, "already running on this context"):
                        ctx.forward(*args, kv_heads=2)
            outcome[r] = ctx.forward(*args, kv_heads=2)[0]  # afterwards both ranks run normally
            ctx.close()

        self.assertEqual(run_ranks(world, rank_main), [])
        self.assertEqual(sorted(outcome), [0, 1])

    def test_per_rank_backward_equals_simulate(self):
        rnd = random.Random(5)
        dout = array.array("f", [rnd.uniform(-1, 1) for _ in range(len(self.q))])
        shape = (1, 16, 4, 8)
        full = hcp.attention_simulate(self.q, self.k, self.v, cp=2, dout=dout, shape=shape, kv_heads=2)
        world = hcp.World(2, timeout_ms=20000)
        results = {}

        def rank_main(r):
            ctx = hcp.CpContext(world.comm(r), world_size=2, cp=2, comm="p2p")
            rows = dual_chunk_rows(r)
            q, k, v = take_rows(self.q, rows, 4), take_rows(self.k, rows, 2), take_rows(self.v, rows, 2)
            do = take_rows(dout, rows, 4)
            out, lse = ctx.forward(q, k, v, (1, 8, 4, 8), kv_heads=2)
            results[r] = (rows, ctx.backward(q, k, v, out, lse, do, (1, 8, 4, 8), kv_heads=2))
            ctx.close()

        self.assertEqual(run_ranks(world, rank_main), [])
        for rows, (dq, dk, dv) in results.values():
            for li, gi in enumerate(rows):
                for x in range(32):
                    self.assertAlmostEqual(dq[li * 32 + x], full["dq"][gi * 32 + x], places=5)
                for x in range(16):
                    self.assertAlmostEqual(dk[li * 16 + x], full["dk"][gi * 16 + x], places=5)
                    self.assertAlmostEqual(dv[li * 16 + x], full["dv"][gi * 16 + x], places=5)

    def test_attention_bias_under_every_scheme_and_per_rank(self):
        # A bias [1, H, S, S] (Transformer Engine's 1hss): out against a reference, the gradients and the bias's
        # gradient against cp 1, under every scheme; then the per-rank API with each rank's query rows of it.
        b, s, h, hkv, d = 1, 16, 4, 2, 8
        rnd = random.Random(8)
        bias = array.array("f", [rnd.uniform(-2, 2) for _ in range(h * s * s)])
        dout = array.array("f", [rnd.uniform(-1, 1) for _ in range(len(self.q))])
        shape = (b, s, h, d)
        want = [0.0] * len(self.q)
        for hh in range(h):
            g = hh // (h // hkv)
            for i in range(s):
                scores = [sum(self.q[(i * h + hh) * d + x] * self.k[(j * hkv + g) * d + x] for x in range(d))
                          / math.sqrt(d) + bias[(hh * s + i) * s + j] for j in range(i + 1)]
                m = max(scores)
                w = [math.exp(x - m) for x in scores]
                for x in range(d):
                    want[(i * h + hh) * d + x] = sum(w[j] * self.v[(j * hkv + g) * d + x] for j in range(i + 1)) / sum(w)
        common = dict(shape=shape, kv_heads=hkv, dout=dout, bias=bias, bias_shape=(1, h, s, s))
        one = hcp.attention_simulate(self.q, self.k, self.v, cp=1, **common)
        self.assertLess(max(abs(a - x) for a, x in zip(one["out"], want)), 1e-5)
        self.assertEqual(len(one["d_bias"]), len(bias))
        self.assertGreater(max(abs(x) for x in one["d_bias"]), 1e-3)
        for comm, sizes in [("p2p", None), ("a2a", None), ("a2a+p2p", [2, 1]), ("all_gather", None)]:
            with self.subTest(comm=comm):
                got = hcp.attention_simulate(self.q, self.k, self.v, cp=2, comm=comm, hcp_sizes=sizes, **common)
                self.assertLess(max(abs(a - x) for a, x in zip(got["out"], want)), 1e-5)
                for name in ("dq", "dk", "dv", "d_bias"):
                    self.assertLess(max(abs(a - x) for a, x in zip(got[name], one[name])), 1e-5, name)
        world = hcp.World(2, timeout_ms=20000)
        results = {}

        def rank_main(r):
            ctx = hcp.CpContext(world.comm(r), world_size=2, cp=2, comm="a2a")
            rows = dual_chunk_rows(r)
            q, k, v = take_rows(self.q, rows, 4), take_rows(self.k, rows, 2), take_rows(self.v, rows, 2)
            mine = array.array("f", [bias[(hh * s + i) * s + j] for hh in range(h) for i in rows for j in range(s)])
            local = dict(kv_heads=hkv, bias=mine, bias_shape=(1, h, len(rows), s))
            out, lse = ctx.forward(q, k, v, (1, 8, 4, 8), **local)
            d_bias = array.array("f", bytes(4 * len(mine)))
            ctx.backward(q, k, v, out, lse, take_rows(dout, rows, 4), (1, 8, 4, 8), d_bias=d_bias, **local)
            results[r] = (rows, out, d_bias)
            ctx.close()

        self.assertEqual(run_ranks(world, rank_main), [])
        for rows, out, d_bias in results.values():
            for li, gi in enumerate(rows):
                for x in range(32):
                    self.assertAlmostEqual(out[li * 32 + x], want[gi * 32 + x], places=5)
                for hh in range(h):
                    for j in range(s):
                        self.assertAlmostEqual(d_bias[(hh * 8 + li) * s + j], one["d_bias"][(hh * s + gi) * s + j],
                                               places=5)
        with self.assertRaises(ValueError):
            hcp.attention_simulate(self.q, self.k, self.v, cp=2, shape=shape, kv_heads=hkv, bias=bias)  # not 4-D

    def test_packed_documents_and_window_match_the_reference(self):
        # Three documents of 3, 9 and 1 tokens on cp 2: each padded to a multiple of 4, padding sees nothing; and
        # documents of no tokens first, side by side between them and last (Transformer Engine's tests draw them).
        cu = [0, 0, 3, 3, 3, 12, 13, 13]
        padded = hcp.pad_for_cp(cu, 2)
        self.assertEqual(padded, [0, 0, 4, 4, 4, 16, 20, 20])
        t, h, hkv, d = padded[-1], 4, 2, 8
        rnd = random.Random(9)
        q = array.array("f", [rnd.uniform(-1, 1) for _ in range(t * h * d)])
        k = array.array("f", [rnd.uniform(-1, 1) for _ in range(t * hkv * d)])
        v = array.array("f", [rnd.uniform(-1, 1) for _ in range(t * hkv * d)])
        doc = [-1] * t
        pos = [0] * t
        for i in range(len(cu) - 1):
            for j in range(padded[i + 1] - padded[i]):
                doc[padded[i] + j] = i if j < cu[i + 1] - cu[i] else -1
                pos[padded[i] + j] = j
        for window in (None, (2, 0)):
            def visible(i, j):
                near = window is None or pos[i] - pos[j] <= window[0]
                return doc[i] == doc[j] >= 0 and pos[j] <= pos[i] and near
            want = reference_masked(q, k, v, t, h, hkv, d, visible)
            for comm, sizes in [("p2p", None), ("a2a", None), ("a2a+p2p", [2, 1]), ("all_gather", None)]:
                with self.subTest(comm=comm, window=window):
                    got = hcp.attention_simulate(q, k, v, cp=2, comm=comm, hcp_sizes=sizes, shape=(1, t, h, d),
                                                 kv_heads=hkv, cu_seqlens=cu, cu_seqlens_padded=padded, window=window)
                    self.assertLess(max(abs(a - b) for a, b in zip(got["out"], want)), 1e-5)
        with self.assertRaises(hcp.ShapeError):  # documents not padded to 2 x cp
            hcp.attention_simulate(q, k, v, cp=2, shape=(1, t, h, d), kv_heads=hkv, cu_seqlens=[0, 3, 20])

    def test_attention_sinks_under_every_scheme(self):
        # Learnable and off-by-one sinks on packed documents (one empty), cp 2, against the reference with the
        # sink; the learnable sinks' gradient against cp 1 and against a central difference of the loss.
        cu = [0, 5, 5, 14]
        padded = hcp.pad_for_cp(cu, 2)
        t, h, hkv, d = padded[-1], 4, 2, 8
        rnd = random.Random(5)
        q, k, v, dout = (array.array("f", [rnd.uniform(-1, 1) for _ in range(t * n * d)]) for n in (h, hkv, hkv, h))
        doc, pos = [-1] * t, [0] * t
        for i in range(len(cu) - 1):
            for j in range(cu[i + 1] - cu[i]):
                doc[padded[i] + j], pos[padded[i] + j] = i, j

        def visible(i, j):
            return doc[i] == doc[j] >= 0 and pos[j] <= pos[i]

        sink = [0.5, -1.0, 2.0, 0.0]
        common = dict(shape=(1, t, h, d), kv_heads=hkv, cu_seqlens=cu, cu_seqlens_padded=padded)
        for softmax, values in (("off-by-one", [0.0] * h), ("learnable", sink)):
            want = reference_masked(q, k, v, t, h, hkv, d, visible, values)
            extra = {"sink": sink} if softmax == "learnable" else {}
            one = hcp.attention_simulate(q, k, v, cp=1, dout=dout, softmax=softmax, **common, **extra)
            for comm, sizes in [("p2p", None), ("a2a", None), ("a2a+p2p", [2, 1]), ("all_gather", None)]:
                with self.subTest(softmax=softmax, comm=comm):
                    got = hcp.attention_simulate(q, k, v, cp=2, comm=comm, hcp_sizes=sizes, dout=dout,
                                                 softmax=softmax, **common, **extra)
                    self.assertLess(max(abs(a - b) for a, b in zip(got["out"], want)), 1e-5)
                    for name in ("dq", "dk", "dv"):
                        self.assertLess(max(abs(a - b) for a, b in zip(got[name], one[name])), 1e-5, name)
                    if softmax == "learnable":
                        self.assertLess(max(abs(a - b) for a, b in zip(got["d_sink"], one["d_sink"])), 1e-5)
                    else:
                        self.assertNotIn("d_sink", got)

        # Each head's largest logit over the visible pairs (Transformer Engine's return_max_logit), every scheme.
        want_max = [max(sum(q[(i * h + hh) * d + x] * k[(j * hkv + hh // (h // hkv)) * d + x] for x in range(d))
                        / math.sqrt(d) for i in range(t) for j in range(t) if visible(i, j)) for hh in range(h)]
        for comm, sizes in [("p2p", None), ("a2a", None), ("a2a+p2p", [2, 1]), ("all_gather", None)]:
            got = hcp.attention_simulate(q, k, v, cp=2, comm=comm, hcp_sizes=sizes, max_logit=True, **common)
            self.assertLess(max(abs(a - b) for a, b in zip(got["max_logit"], want_max)), 1e-5, comm)

        def loss(values):
            out = hcp.attention_simulate(q, k, v, cp=2, softmax="learnable", sink=values, **common)["out"]
            return sum(a * b for a, b in zip(out, dout))

        grad = hcp.attention_simulate(q, k, v, cp=2, dout=dout, softmax="learnable", sink=sink, **common)["d_sink"]
        for hh in range(h):
            up, down = list(sink), list(sink)
            up[hh] += 1e-2
            down[hh] -= 1e-2
            self.assertAlmostEqual(grad[hh], (loss(up) - loss(down)) / 2e-2, delta=2e-3 * max(1.0, abs(grad[hh])))
        with self.assertRaises(ValueError):
            hcp.attention_simulate(q, k, v, cp=2, softmax="learnable", **common)  # no sink values
        with self.assertRaises(ValueError):
            hcp.attention_simulate(q, k, v, cp=2, softmax="off-by-one", sink=sink, **common)
        with self.assertRaises(ValueError):
            hcp.attention_simulate(q, k, v, cp=2, softmax="sinkhorn", **common)

    def test_mla_head_dims_under_every_scheme(self):
        # v, out, dout and dv with head dim 4 beside q and k with 8 (MLA), causal, every scheme on cp 2: out
        # against the reference, the gradients against cp 1; v's head dim read from its buffer or given.
        b, s, h, hkv, d, dv = 1, 8, 4, 2, 8, 4
        rnd = random.Random(9)
        q = array.array("f", [rnd.uniform(-1, 1) for _ in range(b * s * h * d)])
        k = array.array("f", [rnd.uniform(-1, 1) for _ in range(b * s * hkv * d)])
        v = array.array("f", [rnd.uniform(-1, 1) for _ in range(b * s * hkv * dv)])
        dout = array.array("f", [rnd.uniform(-1, 1) for _ in range(b * s * h * dv)])
        want = [0.0] * (s * h * dv)
        for hh in range(h):
            g = hh // (h // hkv)
            for i in range(s):
                scores = [sum(q[(i * h + hh) * d + x] * k[(j * hkv + g) * d + x] for x in range(d)) / math.sqrt(d)
                          for j in range(i + 1)]
                m = max(scores)
                w = [math.exp(x - m) for x in scores]
                for x in range(dv):
                    want[(i * h + hh) * dv + x] = sum(w[j] * v[(j * hkv + g) * dv + x] for j in range(i + 1)) / sum(w)
        common = dict(shape=(b, s, h, d), kv_heads=hkv, head_dim_v=dv, dout=dout)
        one = hcp.attention_simulate(q, k, v, cp=1, **common)
        self.assertEqual((len(one["out"]), len(one["dq"]), len(one["dk"]), len(one["dv"])), (len(want), len(q), len(k), len(v)))
        for comm, sizes in [("p2p", None), ("a2a", None), ("a2a+p2p", [2, 1]), ("all_gather", None)]:
            with self.subTest(comm=comm):
                got = hcp.attention_simulate(q, k, v, cp=2, comm=comm, hcp_sizes=sizes, **common)
                self.assertLess(max(abs(a - x) for a, x in zip(got["out"], want)), 1e-5)
                for name in ("dq", "dk", "dv"):
                    self.assertLess(max(abs(a - x) for a, x in zip(got[name], one[name])), 1e-5, name)
        mv = memoryview(v).cast("B").cast("f", (b, s, hkv, dv))  # the head dim from v's own shape
        got = hcp.attention_simulate(memoryview(q).cast("B").cast("f", (b, s, h, d)),
                                     memoryview(k).cast("B").cast("f", (b, s, hkv, d)), mv, cp=2)
        self.assertLess(max(abs(a - x) for a, x in zip(got["out"], want)), 1e-5)

    def test_sbhd_tensors_equal_bshd_ones(self):
        # Transformer Engine's sbhd layout ([S, B, H, D] memory), every scheme, forward and backward.
        b, s, h, hkv, d = 2, 8, 4, 2, 8
        rnd = random.Random(3)
        q, dout = (array.array("f", [rnd.uniform(-1, 1) for _ in range(b * s * h * d)]) for _ in range(2))
        k, v = (array.array("f", [rnd.uniform(-1, 1) for _ in range(b * s * hkv * d)]) for _ in range(2))

        def to_sbhd(t, heads):
            row = heads * d
            return array.array("f", [t[(bb * s + i) * row + x] for i in range(s) for bb in range(b) for x in range(row)])

        for comm, sizes in [("p2p", None), ("a2a", None), ("a2a+p2p", [2, 1]), ("all_gather", None)]:
            with self.subTest(comm=comm):
                want = hcp.attention_simulate(q, k, v, cp=2, comm=comm, hcp_sizes=sizes, dout=dout,
                                              shape=(b, s, h, d), kv_heads=hkv)
                got = hcp.attention_simulate(to_sbhd(q, h), to_sbhd(k, hkv), to_sbhd(v, hkv), cp=2, comm=comm,
                                             hcp_sizes=sizes, dout=to_sbhd(dout, h), shape=(b, s, h, d),
                                             kv_heads=hkv, layout="sbhd")
                for name, heads in (("out", h), ("dq", h), ("dk", hkv), ("dv", hkv)):
                    self.assertEqual(list(got[name]), list(to_sbhd(want[name], heads)), name)
                self.assertEqual(list(got["lse"]), list(want["lse"]))
        with self.assertRaises(ValueError):
            hcp.attention_simulate(q, k, v, cp=2, shape=(b, s, h, d), kv_heads=hkv, layout="hsbd")

    def test_packed_rank_indices_feed_the_per_rank_api(self):
        cu, padded = [0, 7, 10], [0, 8, 12]
        self.assertEqual(hcp.packed_rank_indices(cu, 2, 0, padded), [0, 1, 6, 7, 8, 11])
        self.assertEqual(hcp.packed_rank_indices(cu, 2, 1, padded), [2, 3, 4, 5, 9, 10])
        with self.assertRaises(hcp.ShapeError):
            hcp.packed_rank_indices([0, 7], 2, 0)
        rnd = random.Random(4)
        t, h, d = 12, 2, 8
        q = array.array("f", [rnd.uniform(-1, 1) for _ in range(t * h * d)])
        full = hcp.attention_simulate(q, q, q, cp=2, shape=(1, t, h, d), cu_seqlens=cu, cu_seqlens_padded=padded)
        world = hcp.World(2, timeout_ms=20000)
        results = {}

        def rank_main(r):
            ctx = hcp.CpContext(world.comm(r), world_size=2, cp=2, comm="p2p")
            rows = hcp.packed_rank_indices(cu, 2, r, padded)
            mine = array.array("f", [q[(i * h + hh) * d + x] for i in rows for hh in range(h) for x in range(d)])
            out, _ = ctx.forward(mine, mine, mine, (1, 6, h, d), cu_seqlens=cu, cu_seqlens_padded=padded)
            results[r] = (rows, out)
            ctx.close()

        self.assertEqual(run_ranks(world, rank_main), [])
        for rows, out in results.values():
            for li, gi in enumerate(rows):
                for x in range(h * d):
                    self.assertAlmostEqual(out[li * h * d + x], full["out"][gi * h * d + x], places=5)

    def test_fp16_inputs(self):
        import struct
        to_f16 = lambda t: array.array("H", [struct.unpack("<H", struct.pack("<e", x))[0] for x in t])
        from_f16 = lambda t: [struct.unpack("<e", struct.pack("<H", x))[0] for x in t]
        q, k, v = to_f16(self.q), to_f16(self.k), to_f16(self.v)
        got = hcp.attention_simulate(q, k, v, cp=2, shape=(1, 16, 4, 8), kv_heads=2, dtype="fp16")
        want = reference(from_f16(q), from_f16(k), from_f16(v), 1, 16, 4, 2, 8, True)
        self.assertLess(max(abs(a - b) for a, b in zip(from_f16(got["out"]), want)), 2e-3)


class AttentionOnCuda(unittest.TestCase):
    """The CUDA entry points either run (a GPU) or raise UnsupportedError saying why; never crash."""

    def test_simulate_on_cuda_runs_or_says_why(self):
        n = 1 * 32 * 2 * 64
        bits = array.array("H", [0x3f80] * n)  # bf16 1.0
        try:
            got = hcp.attention_simulate(bits, bits, bits, cp=2, shape=(1, 32, 2, 64), dtype="bf16", device="cuda")
        except hcp.UnsupportedError as exc:
            self.assertIn("CUDA", str(exc))
            return
        self.assertEqual(len(got["out"]), n)

    def test_nccl_and_cuda_contexts_run_or_say_why(self):
        try:
            uid = hcp.nccl_unique_id()
        except hcp.UnsupportedError:
            uid = None
        if uid is not None:
            self.assertEqual(len(uid), 128)
            hcp.NcclComm(uid, 0, 1).close()
        world = hcp.World(1, timeout_ms=5000)
        try:
            ctx = hcp.CpContext(world.comm(0), world_size=1, cp=1, device="cuda")
        except hcp.UnsupportedError:
            return
        with self.assertRaises(ValueError):  # CUDA tensors are device pointers (integers)
            ctx.forward(array.array("H", [0] * 8), 1, 1, (1, 2, 1, 4), dtype="bf16", out=1, lse=1)
        ctx.close()


if __name__ == "__main__":
    unittest.main()

"""hcp.torch on CPU processes: ranks started with torch.multiprocessing (env rendezvous on 127.0.0.1, gloo), every
CP scheme forward and backward through autograd against torch attention on the full sequence in one process; a rank
whose collective raises fails the others. Needs torch (Debian's python3-torch, for /usr/bin/python3): skipped
without it."""

import importlib.util
import os
import queue
import socket
import sys
import time
import traceback
import unittest

HAVE_TORCH = importlib.util.find_spec("torch") is not None
TIMEOUT_S = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reference(q, k, v, causal, window_left=-1):
    """Single-process attention on full [B, S, H, D] tensors (GQA by repeating the KV heads); a query at i sees
    keys from i - window_left (-1: all)."""
    import torch
    group = q.shape[2] // k.shape[2]
    k, v = k.repeat_interleave(group, dim=2), v.repeat_interleave(group, dim=2)
    scores = torch.einsum("bshd,bthd->bhst", q, k) / q.shape[-1] ** 0.5
    s = q.shape[1]
    if causal:
        scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
    if window_left >= 0:
        scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).tril(-window_left - 1), float("-inf"))
    return torch.einsum("bhst,bthd->bshd", scores.softmax(-1), v)


def reference_packed(q, k, v, cu_seqlens, cu_seqlens_padded):
    """Causal attention within each packed document ([T, H, D]); padding rows are 0."""
    import torch
    out = torch.zeros_like(q)
    for i in range(len(cu_seqlens) - 1):
        start, n = cu_seqlens_padded[i], cu_seqlens[i + 1] - cu_seqlens[i]
        rows = slice(start, start + n)
        out[rows] = reference(q[None, rows], k[None, rows], v[None, rows], True)[0]
    return out


def dual_chunk_rows(rank, cp, s):
    c = s // (2 * cp)
    return list(range(c * rank, c * rank + c)) + list(range(c * (2 * cp - 1 - rank), c * (2 * cp - rank)))


def rank_main(rank, world, port, case, results):
    """One process: the CP attention of `case` on its chunks against the reference on the full sequence."""
    try:
        import torch
        import torch.distributed as dist
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
        import hcp.torch as hcp_torch
        from hcp import pad_for_cp as hcp_torch_pad
        from datetime import timedelta
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                timeout=timedelta(seconds=TIMEOUT_S))
        torch.manual_seed(7)
        b, s, h, hkv, d = 2, 8 * world, 4, 2, 8
        q, k, v = torch.randn(b, s, h, d), torch.randn(b, s, hkv, d), torch.randn(b, s, hkv, d)
        dout = torch.randn(b, s, h, d)
        if case["name"] == "raises":
            attn = hcp_torch.CpAttention(None, comm="p2p")
            if rank == 1:  # every communicator of this process, the CP group hcp split included
                def fail(*_args):
                    raise ValueError("injected failure on rank 1")
                hcp_torch.TorchCollectives.send_recv = fail
            rows = dual_chunk_rows(rank, world, s)
            try:
                attn(q[:, rows].contiguous(), k[:, rows].contiguous(), v[:, rows].contiguous())
                results.put((rank, "no error"))
            except Exception as exc:  # noqa: BLE001 - reported to the test
                results.put((rank, f"{type(exc).__name__}: {exc}"))
            return  # rank 1 exits here: its sockets close, and the ranks waiting for it fail
        layout = case.get("layout", "bshd")
        window = case.get("window")
        if layout == "thd":  # documents of 10, 22 and 16 tokens, each padded to a multiple of 2 cp
            cu = [0, 10, 32, 48]
            padded = hcp_torch_pad(cu, world)
            total = padded[-1]
            q, k, v = torch.randn(total, h, d), torch.randn(total, hkv, d), torch.randn(total, hkv, d)
            dout = torch.randn(total, h, d)
        full = [t.clone().requires_grad_() for t in (q, k, v)]
        if layout == "thd":
            want = reference_packed(*full, cu, padded)
        elif layout == "sbhd":  # the full tensors are [S, B, H, D]
            full = [t.transpose(0, 1).contiguous().requires_grad_() for t in (q, k, v)]
            dout = dout.transpose(0, 1).contiguous()
            want = reference(*(t.transpose(0, 1) for t in full), causal=True).transpose(0, 1)
        else:
            want = reference(*full, causal=True, window_left=window[0] if window else -1)
        (want * dout).sum().backward()
        if case.get("given_levels"):  # the job's own groups, made the way Megatron makes them
            import hcp
            topology = hcp.Topology(world_size=world, cp=world, hcp_sizes=case["given_levels"])
            cp_group, levels = hcp_torch.new_cp_groups(topology)
            attn = hcp_torch.CpAttention(cp_group, comm=case["comm"], hcp_groups=levels, qkv_format=layout)
        else:
            attn = hcp_torch.CpAttention(None, comm=case["comm"], hcp_sizes=case.get("hcp_sizes"),
                                         qkv_format=layout, window=window)
        cp_rank = attn.context.cp_rank
        if layout == "thd":
            index = hcp_torch.packed_rank_indices(cu, world, cp_rank, padded)
            shard = lambda t: t.index_select(0, index)  # noqa: E731
            extra = {"cu_seqlens": cu, "cu_seqlens_padded": padded}
        else:
            shard = lambda t: hcp_torch.shard_for_cp_rank(t, cp_rank, world, 0 if layout == "sbhd" else 1)  # noqa: E731
            extra = {}
        local = [shard(t.detach()).clone().requires_grad_() for t in full]
        out = attn(*local, **extra)
        (out * shard(dout)).sum().backward()
        worst = max(float((got - exp).abs().max()) for got, exp in [
            (out, shard(want.detach())), (local[0].grad, shard(full[0].grad)), (local[1].grad, shard(full[1].grad)),
            (local[2].grad, shard(full[2].grad))])
        attn.close()
        dist.barrier()
        results.put((rank, worst))
    except BaseException:  # noqa: BLE001 - reported to the test
        results.put((rank, traceback.format_exc()))


def run(world, case):
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=rank_main, args=(r, world, port, case, results)) for r in range(world)]
    for p in procs:
        p.start()
    got = {}
    deadline = time.monotonic() + TIMEOUT_S + 30
    while len(got) < world:
        try:
            rank, value = results.get(timeout=max(1.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        got[rank] = value
    for p in procs:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
    return got


@unittest.skipUnless(HAVE_TORCH, "torch is not installed for this Python (Debian: python3-torch, /usr/bin/python3)")
class TorchCpAttention(unittest.TestCase):
    def check_case(self, world, case):
        got = run(world, case)
        self.assertEqual(sorted(got), list(range(world)), got)
        for rank, worst in got.items():
            self.assertIsInstance(worst, float, f"rank {rank}:\n{worst}")
            self.assertLess(worst, 1e-5, f"{case} rank {rank}")

    def test_every_scheme_on_four_processes(self):
        for comm in ("p2p", "a2a", "all_gather"):
            with self.subTest(comm=comm):
                self.check_case(4, {"name": comm, "comm": comm})

    def test_sbhd_packed_documents_and_a_window(self):
        self.check_case(4, {"name": "sbhd", "comm": "a2a", "layout": "sbhd"})
        self.check_case(4, {"name": "thd", "comm": "p2p", "layout": "thd"})
        self.check_case(4, {"name": "window", "comm": "p2p", "window": (5, 0)})

    def test_the_jobs_own_level_groups(self):
        self.check_case(4, {"name": "given", "comm": "a2a+p2p", "given_levels": [2, 2]})

    def test_a2a_p2p_on_eight_processes(self):
        self.check_case(8, {"name": "a2a+p2p", "comm": "a2a+p2p", "hcp_sizes": [2, 4]})

    def test_a_rank_that_raises_fails_the_others(self):
        start = time.monotonic()
        got = run(4, {"name": "raises"})
        self.assertLess(time.monotonic() - start, TIMEOUT_S)
        self.assertEqual(sorted(got), [0, 1, 2, 3], got)
        self.assertIn("injected failure on rank 1", got[1])
        for rank in (0, 2, 3):
            self.assertNotEqual(got[rank], "no error", f"rank {rank}")


if __name__ == "__main__":
    unittest.main()

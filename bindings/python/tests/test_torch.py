"""hcp.torch on CPU processes: ranks started with torch.multiprocessing (env rendezvous on 127.0.0.1, gloo), every
CP scheme forward and backward through autograd against torch attention on the full sequence in one process; a rank
whose collective raises fails the others; the collectives given device-style (address, nbytes) buffers; the device
checks. With CUDA tensors (NCCL, one GPU per rank) the same cases run when torch sees GPUs (skipped otherwise, saying
so). Needs torch (Debian's python3-torch, for /usr/bin/python3): skipped without it."""

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


def reference(q, k, v, causal, window_left=-1, sink=None, bias=None):
    """Single-process attention on full [B, S, H, D] tensors (GQA by repeating the KV heads); a query at i sees
    keys from i - window_left (-1: all); sink: one more logit per head in every softmax (attention sinks); bias:
    added to the scaled scores ([B|1, H|1, S, S])."""
    import torch
    group = q.shape[2] // k.shape[2]
    k, v = k.repeat_interleave(group, dim=2), v.repeat_interleave(group, dim=2)
    scores = torch.einsum("bshd,bthd->bhst", q, k) / q.shape[-1] ** 0.5
    if bias is not None:
        scores = scores + bias
    s = q.shape[1]
    if causal:
        scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
    if window_left >= 0:
        scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).tril(-window_left - 1), float("-inf"))
    if sink is not None:  # a column of the sink logits, softmaxed with the scores and then dropped
        column = sink.reshape(1, -1, 1, 1).expand(scores.shape[0], -1, s, 1)
        return torch.einsum("bhst,bthd->bshd", torch.cat([scores, column], -1).softmax(-1)[..., :-1], v)
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


def start_rank(rank, world, port, cuda=False):
    """torch.distributed in this process: gloo, or NCCL on GPU `rank` for CUDA cases."""
    import torch
    import torch.distributed as dist
    from datetime import timedelta
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    if cuda:
        torch.cuda.set_device(rank)
    dist.init_process_group("nccl" if cuda else "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=TIMEOUT_S))


def rank_main(rank, world, port, case, results):
    """One process: the CP attention of `case` on its chunks against the reference on the full sequence. CUDA
    cases compute in bf16 with head dim 64 (what the CUDA kernels take); the reference in fp32 on the CPU from
    the same rounded inputs, and the error is relative to the largest reference value."""
    try:
        import torch
        import torch.distributed as dist
        cuda = case.get("device") == "cuda"
        start_rank(rank, world, port, cuda)
        import hcp.torch as hcp_torch
        from hcp import pad_for_cp as hcp_torch_pad
        torch.manual_seed(7)
        b, s, h, hkv, d = 2, 8 * world, 4, 2, 64 if cuda else 8
        dv = case.get("head_dim_v", d)  # MLA: v (and out, dout) with a head dim of its own
        q, k, v = torch.randn(b, s, h, d), torch.randn(b, s, hkv, d), torch.randn(b, s, hkv, dv)
        dout = torch.randn(b, s, h, dv)
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
        if cuda:  # rounded to bf16 once: the reference sees the values the GPU sees
            q, k, v, dout = (t.bfloat16().float() for t in (q, k, v, dout))
        full = [t.clone().requires_grad_() for t in (q, k, v)]
        if layout == "thd":
            want = reference_packed(*full, cu, padded)
        elif layout == "sbhd":  # the full tensors are [S, B, H, D]
            full = [t.transpose(0, 1).contiguous().requires_grad_() for t in (q, k, v)]
            dout = dout.transpose(0, 1).contiguous()
            want = reference(*(t.transpose(0, 1) for t in full), causal=True).transpose(0, 1)
        else:
            sink = None
            if case.get("softmax") == "learnable":
                sink = torch.tensor([0.5, -1.0, 2.0, 0.0]).reshape(1, h, 1, 1).requires_grad_()
            elif case.get("softmax") == "off-by-one":
                sink = torch.zeros(h)
            bias = None
            if case.get("bias"):  # [1, H, S, S] (Transformer Engine's 1hss), its gradient too
                bias = torch.randn(1, h, s, s).requires_grad_()
            want = reference(*full, causal=True, window_left=window[0] if window else -1, sink=sink, bias=bias)
        (want * dout).sum().backward()
        if case.get("given_levels"):  # the job's own groups, made the way Megatron makes them
            import hcp
            topology = hcp.Topology(world_size=world, cp=world, hcp_sizes=case["given_levels"])
            cp_group, levels = hcp_torch.new_cp_groups(topology)
            attn = hcp_torch.CpAttention(cp_group, comm=case["comm"], hcp_groups=levels, qkv_format=layout)
        else:
            attn = hcp_torch.CpAttention(None, comm=case["comm"], hcp_sizes=case.get("hcp_sizes"),
                                         qkv_format=layout, window=window,
                                         softmax_type=case.get("softmax", "vanilla"),
                                         return_max_logit=bool(case.get("max_logit")))
        cp_rank = attn.context.cp_rank
        if layout == "thd":
            index = hcp_torch.packed_rank_indices(cu, world, cp_rank, padded)
            shard = lambda t: t.index_select(0, index)  # noqa: E731
            extra = {"cu_seqlens": cu, "cu_seqlens_padded": padded}
        else:
            shard = lambda t: hcp_torch.shard_for_cp_rank(t, cp_rank, world, 0 if layout == "sbhd" else 1)  # noqa: E731
            extra = {}
        on = (lambda t: t.cuda().bfloat16()) if cuda else (lambda t: t)  # noqa: E731
        local = [on(shard(t.detach())).requires_grad_() for t in full]
        if case.get("softmax") == "learnable":
            offset = sink.detach().clone().requires_grad_()
            extra["softmax_offset"] = offset
        if case.get("bias"):  # this rank's query rows against every key
            local_bias = hcp_torch.shard_for_cp_rank(bias.detach(), cp_rank, world, 2).requires_grad_()
            extra["core_attention_bias"] = local_bias
        out = attn(*local, **extra)
        max_logit = None
        if case.get("max_logit"):
            out, max_logit = out
        (out * on(shard(dout))).sum().backward()
        worst = max(float((got.float().cpu() - exp).abs().max()) / (float(exp.abs().max()) if cuda else 1.0)
                    for got, exp in [(out, shard(want.detach())), (local[0].grad, shard(full[0].grad)),
                                     (local[1].grad, shard(full[1].grad)), (local[2].grad, shard(full[2].grad))])
        if case.get("bias"):
            worst = max(worst, float((local_bias.grad - hcp_torch.shard_for_cp_rank(bias.grad, cp_rank, world, 2))
                                     .abs().max()))
        if case.get("softmax") == "learnable":  # every rank gets the whole batch's gradient
            worst = max(worst, float((offset.grad - sink.grad).abs().max()))
        if max_logit is not None:  # each head's largest causal logit over the whole batch, on every rank
            kk = full[1].detach().repeat_interleave(h // hkv, dim=2)
            scores = torch.einsum("bshd,bthd->bhst", full[0].detach(), kk) / d ** 0.5
            scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
            worst = max(worst, float((max_logit - scores.amax(dim=(0, 2, 3))).abs().max()))
        attn.close()
        dist.barrier()
        results.put((rank, worst))
    except BaseException:  # noqa: BLE001 - reported to the test
        results.put((rank, traceback.format_exc()))


def pointer_main(rank, world, port, _case, results):
    """One process: TorchCollectives given hcp's device-style buffers, (address, nbytes) tuples - here of host
    memory, as a communicator without a stream reads them - on the world and on a group split in reverse order."""
    try:
        import torch
        start_rank(rank, world, port)
        import hcp.torch as hcp_torch

        def buf(t):
            return (t.data_ptr(), t.numel() * t.element_size())

        problems = []
        world_c = hcp_torch.TorchCollectives(None)
        # key = -rank: the group's ranks in reverse order of the world's, so its rank r is world rank world-1-r
        for c in (world_c, world_c.split(0, -rank)):
            me, n = c.rank, c.size
            send = torch.arange(4, dtype=torch.int32) + 100 * me
            recv = torch.full((4,), -1, dtype=torch.int32)
            c.send_recv(buf(send), (me + 1) % n, buf(recv), (me - 1) % n)
            if recv.tolist() != (torch.arange(4) + 100 * ((me - 1) % n)).tolist():
                problems.append(f"send_recv on {n} ranks as rank {me}: {recv.tolist()}")
            blocks = torch.tensor([[10 * me + j] * 2 for j in range(n)], dtype=torch.int32)
            got = torch.full_like(blocks, -1)
            c.all_to_all(buf(blocks), buf(got))
            if got[:, 0].tolist() != [10 * j + me for j in range(n)]:
                problems.append(f"all_to_all as rank {me}: {got.tolist()}")
            gathered = torch.full((n, 3), -1, dtype=torch.int32)
            chunk = torch.full((3,), me, dtype=torch.int32)  # held: a tuple is only an address
            c.all_gather(buf(chunk), buf(gathered))
            if gathered[:, 0].tolist() != list(range(n)):
                problems.append(f"all_gather as rank {me}: {gathered.tolist()}")
            parts = torch.tensor([[float(me + 1) * (j + 1)] * 3 for j in range(n)])
            mine = torch.zeros(3)
            c.reduce_scatter_sum_f32(buf(parts), buf(mine))
            want = float(sum(r + 1 for r in range(n)) * (me + 1))
            if mine.tolist() != [want] * 3:
                problems.append(f"reduce_scatter as rank {me}: {mine.tolist()}, want {want}")
            c.send_recv((0, 0), (me + 1) % n, (0, 0), (me - 1) % n)  # an empty step moves nothing
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
        results.put((rank, 0.0 if not problems else "; ".join(problems)))
    except BaseException:  # noqa: BLE001 - reported to the test
        results.put((rank, traceback.format_exc()))


def run(world, case, target=rank_main):
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=target, args=(r, world, port, case, results)) for r in range(world)]
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

    def test_attention_sinks(self):
        self.check_case(4, {"name": "learnable", "comm": "p2p", "softmax": "learnable"})
        self.check_case(8, {"name": "learnable", "comm": "a2a+p2p", "hcp_sizes": [2, 4], "softmax": "learnable"})
        self.check_case(4, {"name": "off-by-one", "comm": "a2a", "softmax": "off-by-one", "max_logit": True})

    def test_attention_bias(self):
        self.check_case(4, {"name": "bias", "comm": "p2p", "bias": True})
        self.check_case(4, {"name": "bias", "comm": "a2a+p2p", "hcp_sizes": [2, 2], "bias": True})

    def test_mla_head_dims(self):
        self.check_case(4, {"name": "mla", "comm": "a2a+p2p", "hcp_sizes": [2, 2], "head_dim_v": 4})
        self.check_case(4, {"name": "mla", "comm": "all_gather", "head_dim_v": 16})

    def test_the_jobs_own_level_groups(self):
        self.check_case(4, {"name": "given", "comm": "a2a+p2p", "given_levels": [2, 2]})

    def test_a2a_p2p_on_eight_processes(self):
        self.check_case(8, {"name": "a2a+p2p", "comm": "a2a+p2p", "hcp_sizes": [2, 4]})

    def test_collectives_take_device_style_pointers(self):
        got = run(4, {}, target=pointer_main)
        self.assertEqual(got, {r: 0.0 for r in range(4)})

    def test_the_device_is_checked(self):
        import torch
        import torch.distributed as dist
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
        import hcp.torch as hcp_torch
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
        try:
            with self.assertRaisesRegex(ValueError, "device must be 'cpu' or 'cuda', got 'xpu'"):
                hcp_torch.CpAttention(None, device="xpu")
            if not torch.cuda.is_available():
                with self.assertRaisesRegex(RuntimeError, "needs a torch built with CUDA.*is_available"):
                    hcp_torch.CpAttention(None, device="cuda")
            attn = hcp_torch.CpAttention(None)  # gloo: the CPU
            self.assertEqual(attn.device, torch.device("cpu"))
            meta = torch.empty(1, 8, 2, 8, device="meta")
            with self.assertRaisesRegex(ValueError, "q is on meta; this CpAttention computes on cpu"):
                attn(meta, meta, meta)
            attn.close()
        finally:
            dist.destroy_process_group()

    def test_a_rank_that_raises_fails_the_others(self):
        start = time.monotonic()
        got = run(4, {"name": "raises"})
        self.assertLess(time.monotonic() - start, TIMEOUT_S)
        self.assertEqual(sorted(got), [0, 1, 2, 3], got)
        self.assertIn("injected failure on rank 1", got[1])
        for rank in (0, 2, 3):
            self.assertNotEqual(got[rank], "no error", f"rank {rank}")


def gpus():
    try:
        import torch
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except ImportError:
        return 0


@unittest.skipUnless(HAVE_TORCH and gpus() > 0,
                     "CUDA tensors need a torch with CUDA and a GPU (not run: GPU execution unverified here)")
class TorchCpAttentionCuda(unittest.TestCase):
    """CUDA tensors over NCCL, one GPU per rank (NCCL takes no two ranks on one GPU): every scheme on up to four
    GPUs, one rank alone on a machine with one GPU."""

    def check_case(self, world, case):
        got = run(world, dict(case, device="cuda"))
        self.assertEqual(sorted(got), list(range(world)), got)
        for rank, worst in got.items():
            self.assertIsInstance(worst, float, f"rank {rank}:\n{worst}")
            self.assertLess(worst, 3e-2, f"{case} rank {rank}")

    def test_every_scheme(self):
        world = min(gpus(), 4)
        schemes = [("p2p", None), ("a2a", None), ("all_gather", None)] if world > 1 else [("p2p", None)]
        if world == 4:
            schemes.append(("a2a+p2p", [2, 2]))
        for comm, sizes in schemes:
            with self.subTest(comm=comm, world=world):
                self.check_case(world, {"name": comm, "comm": comm, "hcp_sizes": sizes})

    def test_packed_documents(self):
        self.check_case(min(gpus(), 4), {"name": "thd", "comm": "p2p", "layout": "thd"})


if __name__ == "__main__":
    unittest.main()

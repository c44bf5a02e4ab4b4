#!/usr/bin/env python3
"""hcp.torch's cost: one causal forward + backward through hcp.torch.CpAttention (autograd, torch.distributed on
gloo processes) on the shapes given, the median wall time of the ranks' call over --reps, printed by rank 0 as
`hcp.torch forward+backward: S s`. bench/compare_torch_attention.sh runs it beside the C++ per-rank API.
Usage: /usr/bin/python3 bench/torch_attention_bench.py --cp 4 --seq 2048 --heads 4 --kv-heads 2 --head-dim 64"""

import argparse
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))


def rank_main(rank, args, port):
    import torch
    import torch.distributed as dist
    import hcp.torch as hcp_torch
    from datetime import timedelta
    torch.set_num_threads(1)  # as the C++ ranks: one kernel thread each
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=args.cp,
                            timeout=timedelta(seconds=300))
    attn = hcp_torch.CpAttention(None, comm=args.comm, hcp_sizes=[int(x) for x in args.hcp_sizes.split(",")]
                                 if args.hcp_sizes else None)
    s = args.seq // args.cp
    torch.manual_seed(rank)
    q = torch.randn(args.batch, s, args.heads, args.head_dim, requires_grad=True)
    k = torch.randn(args.batch, s, args.kv_heads, args.head_dim, requires_grad=True)
    v = torch.randn(args.batch, s, args.kv_heads, args.head_dim, requires_grad=True)
    dout = torch.randn(args.batch, s, args.heads, args.head_dim)
    times = []
    for rep in range(args.reps + 1):
        dist.barrier()
        start = time.perf_counter()
        attn(q, k, v).backward(dout)
        dist.barrier()
        if rep:  # the first is a warm-up
            times.append(time.perf_counter() - start)
    attn.close()
    if rank == 0:
        print(f"hcp.torch forward+backward: {statistics.median(times):.6f} s (median of {args.reps}, {args.cp} "
              f"processes, {args.comm})", flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cp", type=int, default=4)
    p.add_argument("--comm", default="p2p")
    p.add_argument("--hcp-sizes", default=None)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    import torch.multiprocessing as mp
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    mp.start_processes(rank_main, args=(args, port), nprocs=args.cp, start_method="spawn")


if __name__ == "__main__":
    main()

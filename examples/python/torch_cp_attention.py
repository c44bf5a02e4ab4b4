"""Trains a small attention model for a few steps with hcp's CP attention (hcp.torch) on CPU processes, next to the
same model trained in one process with plain torch attention, and prints both losses, the largest difference of the
final weights, and OK when they agree.

    /usr/bin/python3 examples/python/torch_cp_attention.py --nproc 4                 # starts its own ranks
    /usr/bin/python3 examples/python/torch_cp_attention.py --nproc 8 --comm a2a+p2p --hcp-sizes 2,4
    torchrun --nproc_per_node 4 examples/python/torch_cp_attention.py               # ranks from the launcher

Each rank holds its dual chunks of the sequence (chunks r and 2cp-1-r, as Megatron's get_batch_on_this_cp_rank
gives them); the weights' gradients are summed over the CP ranks, as Megatron does over its data- and
context-parallel group. Needs torch (Debian: python3-torch) and hcp (PYTHONPATH=bindings/python, HCP_LIBRARY or a
build tree)."""

import argparse
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))

DIM, HEADS, KV_HEADS, HEAD_DIM, BATCH = 32, 4, 2, 8, 2


def reference_attention(torch, q, k, v):
    """Causal attention on the full sequence, GQA by repeating the KV heads: [B, S, H, D]."""
    group = q.shape[2] // k.shape[2]
    k, v = k.repeat_interleave(group, dim=2), v.repeat_interleave(group, dim=2)
    scores = torch.einsum("bshd,bthd->bhst", q, k) / q.shape[-1] ** 0.5
    s = q.shape[1]
    scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
    return torch.einsum("bhst,bthd->bshd", scores.softmax(-1), v)


def make_model(torch):
    torch.manual_seed(0)
    return torch.nn.ModuleDict({
        "wq": torch.nn.Linear(DIM, HEADS * HEAD_DIM, bias=False),
        "wk": torch.nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False),
        "wv": torch.nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False),
        "wo": torch.nn.Linear(HEADS * HEAD_DIM, DIM, bias=False),
    })


def forward(model, x, attention):
    b, s, _ = x.shape
    q = model["wq"](x).view(b, s, HEADS, HEAD_DIM)
    k = model["wk"](x).view(b, s, KV_HEADS, HEAD_DIM)
    v = model["wv"](x).view(b, s, KV_HEADS, HEAD_DIM)
    return model["wo"](attention(q, k, v).reshape(b, s, HEADS * HEAD_DIM))


def dual_chunk_rows(rank, cp, seq):
    c = seq // (2 * cp)
    return list(range(c * rank, c * rank + c)) + list(range(c * (2 * cp - 1 - rank), c * (2 * cp - rank)))


def train(args):
    import torch
    import torch.distributed as dist
    import hcp.torch as hcp_torch
    from datetime import timedelta

    dist.init_process_group("gloo", timeout=timedelta(seconds=120))  # env://: RANK, WORLD_SIZE, MASTER_*
    rank, cp = dist.get_rank(), dist.get_world_size()
    hcp_sizes = [int(x) for x in args.hcp_sizes.split(",")] if args.hcp_sizes else None
    seq = args.seq
    if seq % (2 * cp):
        raise SystemExit(f"--seq {seq} must be a multiple of 2 x {cp} ranks")
    torch.manual_seed(1)
    x, target = torch.randn(BATCH, seq, DIM), torch.randn(BATCH, seq, DIM)

    single = make_model(torch)  # the reference: one process, the whole sequence, torch attention
    model = make_model(torch)   # this rank's replica, trained with hcp CP attention on its chunks
    single_opt = torch.optim.SGD(single.parameters(), lr=args.lr)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    attn = hcp_torch.CpAttention(None, comm=args.comm, hcp_sizes=hcp_sizes)
    rows = dual_chunk_rows(attn.context.cp_rank, cp, seq)
    x_local, target_local = x[:, rows], target[:, rows]
    tokens = BATCH * seq * DIM

    for step in range(args.steps):
        single_opt.zero_grad()
        single_loss = ((forward(single, x, lambda q, k, v: reference_attention(torch, q, k, v)) - target) ** 2
                       ).sum() / tokens
        single_loss.backward()
        single_opt.step()

        opt.zero_grad()
        local_loss = ((forward(model, x_local, attn) - target_local) ** 2).sum() / tokens
        local_loss.backward()
        for p in model.parameters():  # the loss is a sum over every rank's tokens
            dist.all_reduce(p.grad)
        opt.step()
        loss = local_loss.detach().clone()
        dist.all_reduce(loss)
        if rank == 0:
            print(f"step {step}: loss {loss.item():.6f} with hcp CP ({args.comm}, {cp} ranks), "
                  f"{single_loss.item():.6f} in one process", flush=True)

    diff = max(float((a - b).abs().max()) for a, b in zip(model.parameters(), single.parameters()))
    diffs = [None] * cp
    dist.all_gather_object(diffs, diff)
    attn.close()
    if rank == 0:
        worst = max(diffs)
        print(f"max abs diff of the final weights over {cp} ranks: {worst:.3g}")
        print("OK" if worst < args.tolerance else f"MISMATCH (tolerance {args.tolerance})", flush=True)
    ok = max(diffs) < args.tolerance
    dist.destroy_process_group()
    return ok


def rank_process(rank, world, port, args):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if not train(args):
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", type=int, default=4, help="ranks to start when no launcher set RANK (default 4)")
    parser.add_argument("--comm", default="p2p", choices=["p2p", "a2a", "a2a+p2p", "all_gather"])
    parser.add_argument("--hcp-sizes", default=None, help="A,P for --comm a2a+p2p (A * P = ranks)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--seq", type=int, default=64, help="sequence length, a multiple of 2 x ranks")
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # torchrun, srun with the variables set, ...
        sys.exit(0 if train(args) else 1)
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.start_processes(rank_process, args=(args.nproc, port, args), nprocs=args.nproc, start_method="spawn")


if __name__ == "__main__":
    main()

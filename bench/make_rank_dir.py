#!/usr/bin/env python3
"""Writes a per-rank log directory as torchrun --log-dir leaves it for a large job (attempt_0/<rank>/stdout.log):
every rank's NCCL initialisation (NCCL_DEBUG=INFO) and c10d group lines, rank 0's configuration, and the
iteration lines the last rank of each pipeline prints. Usage: make_rank_dir.py RANKS KIB_PER_RANK OUT_DIR
"""

import argparse
import os
import random


def rank_lines(rank, ranks, rng, budget):
    out = []
    if rank == 0:
        out.append(f"using world size: {ranks}, data-parallel size: {ranks // 16}, context-parallel size: 16, "
                   "hierarchical context-parallel sizes: [2, 8], tensor-model-parallel size: 1, "
                   "pipeline-model-parallel size: 1")
        out.append("------------------------ arguments ------------------------")
        for k, v in [("context_parallel_size", 16), ("cp_comm_type", "['a2a+p2p']"),
                     ("hierarchical_context_parallel_sizes", "[2, 8]"), ("world_size", ranks)]:
            out.append(f"  {k} {'.' * (45 - len(k))} {v}")
        out.append("-------------------- end of arguments ---------------------")
    node, local = rank // 8, rank % 8
    out.append(f"node-{node}:{4100 + local}:{4100 + local} [{local}] NCCL INFO NCCL version 2.21.5+cuda12.4")
    out.append(f"[PG ID 7 PG GUID 41(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank {rank % 2}] ProcessGroupNCCL "
               f"created ncclComm_ 0x55d2c4a1f{local} on CUDA device: {local}")
    size = sum(len(x) + 1 for x in out)
    channels = ["via P2P/IPC/read", "via NET/IB/0/GDRDMA", "via P2P/CUMEM/read", "via SHM/direct/direct"]
    it = 0
    last_stage = rank % 16 == 15
    while size < budget:
        k = rng.random()
        if last_stage and k < 0.5:
            it += 1
            line = (f" [2026-08-22 12:{it // 60 % 60:02d}:{it % 60:02d}] iteration {it:>9}/ 100000000 | consumed "
                    f"samples: {it * 512:>12} | elapsed time per iteration (ms): {812 + rng.random() * 9:.1f} | "
                    f"throughput per GPU (TFLOP/s/GPU): {402 + rng.random() * 3:.1f} | learning rate: 1.500000E-04 | "
                    f"global batch size:   512 | lm loss: {9 - it * 1e-7:.6E} | loss scale: 1.0 | grad norm: "
                    f"{1 + rng.random():.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
        elif k < 0.95:
            line = (f"node-{node}:{4100 + local}:{4156 + local} [{local}] NCCL INFO Channel {rng.randrange(32):02d}/"
                    f"{rng.randrange(2)} : {rank}[{local}] -> {rank + 1}[{(local + 1) % 8}] "
                    f"{channels[rng.randrange(4)]}")
        else:
            line = (f"node-{node}:{4100 + local}:{4156 + local} [{local}] NCCL INFO ncclCommInitRank comm "
                    f"0x7f3c2c00{local}000 rank {rank % 2} nranks 2 cudaDev {local} nvmlDev {local} busId "
                    f"{local}b000 commId 0x5e0a3f1b2c3d4e5f - Init COMPLETE")
        out.append(line)
        size += len(line) + 1
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("Usage:")[0].strip())
    parser.add_argument("ranks", type=int, help="number of ranks (one directory each)")
    parser.add_argument("kib_per_rank", type=int, help="size of each rank's log in KiB")
    parser.add_argument("out_dir", help="the directory to write")
    args = parser.parse_args()
    if args.ranks < 1 or args.kib_per_rank < 0:
        parser.error("ranks must be positive and kib_per_rank not negative")
    ranks, kib, root = args.ranks, args.kib_per_rank, args.out_dir
    rng = random.Random(1)
    for rank in range(ranks):
        d = os.path.join(root, "attempt_0", str(rank))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "stdout.log"), "w") as f:
            f.write("\n".join(rank_lines(rank, ranks, rng, kib << 10)) + "\n")


if __name__ == "__main__":
    main()

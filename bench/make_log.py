#!/usr/bin/env python3
"""Writes a training log that looks like a real Megatron-LM run with TORCH_CPP_LOG_LEVEL=INFO and NCCL_DEBUG=INFO
on 8 ranks (torchrun --tee prefixes): mostly iteration and NCCL INFO lines, and a few of every other kind the
scanner reads. Usage: make_log.py SIZE_MIB OUT
"""

import argparse
import random


def header():
    h = ["[default0]:using world size: 64, data-parallel size: 2, context-parallel size: 16, hierarchical "
         "context-parallel sizes: [2, 8], tensor-model-parallel size: 2, pipeline-model-parallel size: 1",
         "[default0]:------------------------ arguments ------------------------"]
    for k, v in [("context_parallel_size", 16), ("cp_comm_type", "['a2a+p2p']"),
                 ("hierarchical_context_parallel_sizes", "[2, 8]"), ("pipeline_model_parallel_size", 1),
                 ("tensor_model_parallel_size", 2), ("world_size", 64)]:
        h.append(f"[default0]:  {k} {'.' * (45 - len(k))} {v}")
    h.append("[default0]:-------------------- end of arguments ---------------------")
    h.append("[default0]:GPU 0: NVIDIA H200 (UUID: GPU-5f1c0c4e)")
    for r in range(8):
        h.append(f"[default{r}]:[PG ID 7 PG GUID 41(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank {r % 2}] "
                 f"ProcessGroupNCCL created ncclComm_ 0x55d2c4a1f{r} on CUDA device: {r}")
        h.append(f"[default{r}]:[PG ID 5 PG GUID 23(CONTEXT_PARALLEL_GROUP) Rank {r}] ProcessGroupNCCL created "
                 f"ncclComm_ 0x55d2c49e8{r} on CUDA device: {r}")
    return h


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("Usage:")[0].strip())
    parser.add_argument("size_mib", type=int, help="size of the log in MiB")
    parser.add_argument("out", help="the file to write")
    args = parser.parse_args()
    if args.size_mib < 0:
        parser.error("size_mib must not be negative")
    size = args.size_mib << 20
    rng = random.Random(1)
    out = open(args.out, "w")
    written = 0
    for line in header():
        out.write(line + "\n")
        written += len(line) + 1
    it = 0
    channels = ["via P2P/IPC/read", "via NET/IB/0/GDRDMA", "via P2P/CUMEM/read", "via SHM/direct/direct"]
    block = []
    while written < size:
        r = rng.randrange(8)
        kind = rng.random()
        if kind < 0.40:
            it += 1
            line = (f"[default7]: [2026-08-22 12:{it // 60 % 60:02d}:{it % 60:02d}] iteration {it:>9}/ 100000000 | "
                    f"consumed samples: {it * 512:>12} | elapsed time per iteration (ms): {812 + rng.random() * 9:.1f} | "
                    f"throughput per GPU (TFLOP/s/GPU): {402 + rng.random() * 3:.1f} | learning rate: 1.500000E-04 | "
                    f"global batch size:   512 | lm loss: {9 - it * 1e-7:.6E} | loss scale: 1.0 | grad norm: "
                    f"{1 + rng.random():.3f} | number of skipped iterations:   0 | number of nan iterations:   0 |")
        elif kind < 0.97:
            line = (f"[default{r}]:node-{r // 4}:{4100 + r}:{4156 + r} [{r}] NCCL INFO Channel {rng.randrange(32):02d}/"
                    f"{rng.randrange(2)} : {r}[{r}] -> {(r + 1) % 8}[{(r + 1) % 8}] {channels[rng.randrange(4)]}")
        elif kind < 0.985:
            line = (f"[default{r}]:node-{r // 4}:{4100 + r}:{4156 + r} [{r}] NCCL INFO ncclCommInitRank comm "
                    f"0x7f3c2c00{r}000 rank {r % 2} nranks 2 cudaDev {r} nvmlDev {r} busId {r}b000 commId "
                    f"0x5e0a3f1b2c3d4e5f - Init COMPLETE")
        elif kind < 0.99:
            line = (f"[default7]:[Rank 7] (after {it} iterations) memory (MB) | allocated: 20480.5 | max allocated: "
                    f"30720.1 | reserved: 32768.0 | max reserved: 32768.0")
        elif kind < 0.995:
            line = (f"[default7]: validation loss at iteration {it} | lm loss value: {8.9:.6E} | "
                    f"lm loss PPL: 1.043960E+01 | ")
        else:
            line = f"[default{r}]:INFO:megatron.core.utils:data loader worker {rng.randrange(64)} prefetched 4 batches"
        block.append(line)
        written += len(line) + 1
        if len(block) >= 4096:
            out.write("\n".join(block) + "\n")
            block.clear()
    if block:
        out.write("\n".join(block) + "\n")
    out.close()


if __name__ == "__main__":
    main()

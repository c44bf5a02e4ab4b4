#!/usr/bin/env python3
"""Runs the topology benchmark next to a pure-Python transcription of Megatron-Core's group generator
(RankGenerator / generate_masked_orthogonal_rank_groups and the hierarchical sub-grids, as
shared/reference/layout.md states them) on the same layout, and prints the ratios.

Megatron itself needs torch and is not installable here; the transcription does the same arithmetic the same way
(decompose every index, inner products), without torch.distributed's own group bookkeeping, so it UNDER-states
Megatron's cost. Usage: bench/compare_topology.py [BUILD_DIR]
"""

import json
import pathlib
import subprocess
import sys
import time

WORLD, TP, PP, CP, SIZES = 131072, 8, 8, 16, [2, 8]
ORDER = ["tp", "cp", "ep", "dp", "pp"]


def prefix_product(a):
    out, r = [1], 1
    for v in a:
        r *= v
        out.append(r)
    return out


def decompose(index, shape):
    idx = []
    for s in shape:
        idx.append(index % s)
        index //= s
    return idx


def masked_groups(sizes, mask):
    masked_shape = [s for s, m in zip(sizes, mask) if m]
    unmasked_shape = [s for s, m in zip(sizes, mask) if not m]
    stride = prefix_product(sizes)
    masked_stride = [d for d, m in zip(stride, mask) if m]
    unmasked_stride = [d for d, m in zip(stride, mask) if not m]
    group_size = prefix_product(masked_shape)[-1]
    groups = []
    for g in range(WORLD // group_size):
        gi = decompose(g, unmasked_shape)
        base = sum(x * y for x, y in zip(gi, unmasked_stride))
        groups.append([base + sum(x * y for x, y in zip(decompose(r, masked_shape), masked_stride))
                       for r in range(group_size)])
    return groups


def hierarchical(cp_groups):
    levels = []
    for k, s in enumerate(SIZES):
        u = prefix_product(SIZES[:k])[-1]
        l_ = prefix_product(SIZES[k + 1:])[-1]
        levels.append([[R[a * s * u + j * u + b] for j in range(s)]
                       for R in cp_groups for a in range(l_) for b in range(u)])
    return levels


def sizes():
    dp = WORLD // (TP * PP * CP)
    return [{"tp": TP, "cp": CP, "ep": 1, "dp": dp, "pp": PP}[t] for t in ORDER]


def mask(*tokens):
    return [t in tokens for t in ORDER]


def python_cp_and_hcp():
    cp = masked_groups(sizes(), mask("cp"))
    return cp, hierarchical(cp)


def python_all_kinds():
    out = [masked_groups(sizes(), mask(*m)) for m in
           [("tp",), ("cp",), ("dp",), ("pp",), ("dp", "cp"), ("tp", "cp"), ("tp", "pp"), ("tp", "dp", "cp")]]
    out.append(hierarchical(out[1]))
    return out


def best_of(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1] / "build")
    out = subprocess.run([str(build / "bench" / "topology_bench"), "--benchmark_format=json",
                          "--benchmark_min_time=0.2"], check=True, capture_output=True, text=True).stdout
    native = {b["name"]: b for b in json.loads(out)["benchmarks"]}

    def seconds(name):
        b = native[name]
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
        return b["real_time"] * scale

    py_cp = best_of(python_cp_and_hcp, 3)
    py_all = best_of(python_all_kinds, 1)
    rows = [
        ("CP + hierarchical groups", seconds("BM_CpAndHierarchicalGroups"), py_cp, 3e-3),
        ("all group kinds", seconds("BM_AllGroupKinds"), py_all, 50e-3),
    ]
    print(f"layout: world {WORLD}, tp {TP}, pp {PP}, cp {CP}, sizes {SIZES}")
    print(f"{'task':28} {'hcp':>12} {'python(megatron alg.)':>22} {'speedup':>9} {'target':>10}  verdict")
    ok = True
    for name, ours, theirs, target in rows:
        passed = ours <= target
        ok &= passed
        print(f"{name:28} {ours * 1e3:10.3f}ms {theirs * 1e3:20.1f}ms {theirs / ours:8.0f}x {target * 1e3:8.0f}ms  "
              f"{'ok' if passed else 'MISSED'}")
    per_rank = seconds("BM_PerRankQuery")
    ok &= per_rank <= 1e-6
    print(f"{'per-rank query (L1 group)':28} {per_rank * 1e9:10.1f}ns {'':>22} {'':>9} {1000:8d}ns  "
          f"{'ok' if per_rank <= 1e-6 else 'MISSED'}")
    print(f"{'per-rank, all 10 kinds':28} {seconds('BM_PerRankAllKinds') * 1e9:10.1f}ns")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Transformer Engine's CP test matrix through `hcp attn --check`: the model configs of TE's
tests/pytorch/attention/test_attention_with_cp.py (its flash and fused sets at TE main, 2.20.0.dev0: shapes and
features written down below as facts; windows are scaled with the sequence) under every CP scheme and cp size, scaled to --seq tokens and --max-heads heads (the
features stay as TE has them), in bf16. Prints one line per run and, per feature, the worst error of each output
against single-rank attention with the same feature; exits 1 when a run fails its check or errors.

Usage: bench/te_cp_matrix.py [--hcp build/cli/hcp] [--seq 1024] [--max-heads 8] [--cp 2,4] [--dtype bf16]"""

import argparse
import json
import subprocess
import sys
from collections import defaultdict

# name: (batch, heads, head_dim, options); options as TE's ModelConfig: gqa (num_gqa_groups), mask "causal" or
# none, window (left, right), head_dim_v, bias (shape; TE's default 1hss), softmax, max_logit.
CONFIGS = {
    # model_configs_flash_attn
    "flash cp_1_0": (2, 12, 128, dict(mask="causal")),
    "flash cp_1_1": (2, 12, 128, dict()),
    "flash cp_1_2": (2, 12, 128, dict(mask="causal", window=(512, 0))),
    "flash cp_1_3": (2, 12, 128, dict(window=(512, 512))),
    "flash cp_2_0": (2, 32, 128, dict(gqa=4, mask="causal")),
    "flash cp_2_1": (2, 12, 128, dict(gqa=2)),
    "flash cp_2_2": (2, 32, 128, dict(mask="causal", window=(128, 0))),
    "flash cp_2_3": (2, 12, 128, dict(gqa=2, window=(512, 512))),
    "flash cp_3_0": (2, 128, 192, dict(mask="causal", head_dim_v=128)),
    "flash cp_3_1": (2, 12, 192, dict(head_dim_v=128)),
    "flash cp_3_2": (2, 12, 192, dict(mask="causal", window=(512, 0), head_dim_v=128)),
    "flash cp_3_3": (2, 12, 192, dict(window=(512, 512), head_dim_v=128)),
    # model_configs_fused_attn
    "fused cp_1_0": (2, 12, 128, dict(mask="causal", max_logit=True)),
    "fused cp_1_1": (2, 12, 128, dict(max_logit=True)),
    "fused cp_1_2": (2, 12, 128, dict(mask="causal", bias="1hss")),
    "fused cp_1_3": (2, 12, 128, dict(bias="1hss")),
    "fused cp_1_4": (2, 12, 128, dict(bias="bhss")),
    "fused cp_1_5": (2, 12, 128, dict(mask="causal", window=(512, 512))),
    "fused cp_2_0": (2, 32, 128, dict(gqa=4, mask="causal")),
    "fused cp_2_1": (2, 32, 128, dict(mask="causal", window=(128, 0))),
    "fused cp_2_2": (2, 12, 128, dict(gqa=2, mask="causal", bias="1hss")),
    "fused cp_2_3": (2, 12, 128, dict(gqa=2, mask="causal", bias="11ss")),
    "fused cp_2_4": (2, 12, 128, dict(gqa=2, mask="causal", bias="111s", max_logit=True)),
    "fused cp_2_5": (2, 12, 128, dict(gqa=2, bias="1hss")),
    "fused cp_2_6": (2, 12, 128, dict(gqa=2, mask="causal", window=(512, 512))),
    "fused cp_3_0": (2, 12, 128, dict(mask="causal", head_dim_v=64)),
    "fused cp_3_1": (2, 128, 192, dict(mask="causal", head_dim_v=128)),
    "fused cp_3_2": (2, 12, 128, dict(mask="causal", bias="1hss", head_dim_v=64)),
    "fused cp_3_3": (2, 12, 128, dict(bias="1hss", head_dim_v=64)),
    "fused cp_3_4": (2, 12, 128, dict(bias="b1ss", head_dim_v=64)),
    "fused cp_4_0": (2, 64, 64, dict(gqa=8, mask="causal", softmax="vanilla")),
    "fused cp_4_1": (2, 64, 64, dict(gqa=8, mask="causal", softmax="off-by-one")),
    "fused cp_4_2": (2, 64, 64, dict(gqa=8, mask="causal", softmax="learnable")),
    "fused cp_4_3": (2, 64, 64, dict(mask="causal", window=(128, 0), softmax="learnable")),
    "fused cp_5_0": (2, 16, 256, dict(mask="causal")),
    "fused cp_5_1": (2, 16, 256, dict(mask="causal", window=(128, 0))),
}
SCHEMES = [("p2p", []), ("a2a", []), ("a2a+p2p", ["--hcp-sizes"]), ("all_gather", [])]


def features(opts):
    names = [k for k in ("bias", "softmax", "head_dim_v", "window", "max_logit") if k in opts]
    return ", ".join(f"bias {opts['bias']}" if n == "bias" else f"softmax {opts['softmax']}" if n == "softmax"
                     else "MLA" if n == "head_dim_v" else n for n in names) or "plain"


def command(args, batch, heads, head_dim, opts, scheme, cp):
    kv = heads // opts["gqa"] if "gqa" in opts else heads
    scale = min(1.0, args.max_heads / heads)
    heads_s, kv_s = max(2, int(heads * scale)), max(1, int(kv * scale))
    while heads_s % kv_s:
        kv_s -= 1
    cmd = [args.hcp, "attn", "--cp", str(cp), "--comm", scheme, "--batch", str(batch), "--seq", str(args.seq),
           "--heads", str(heads_s), "--kv-heads", str(kv_s), "--head-dim", str(head_dim), "--dtype", args.dtype,
           "--backward", "--check", "--format", "json"]
    if scheme == "a2a+p2p":
        cmd += ["--hcp-sizes", f"2,{cp // 2}"]
    if opts.get("mask") == "causal":
        cmd.append("--causal")
    if "window" in opts:  # TE's windows are for 4096 tokens (1024 for cp_5_*)
        full = 1024 if head_dim == 256 and heads == 16 else 4096
        cmd += ["--window", ",".join(str(w * args.seq // full) if w > 0 else str(w) for w in opts["window"])]
    if "head_dim_v" in opts:
        cmd += ["--head-dim-v", str(opts["head_dim_v"])]
    if "bias" in opts:
        cmd += ["--bias", opts["bias"]]
    if opts.get("softmax", "vanilla") != "vanilla":
        cmd += ["--softmax", opts["softmax"]]
    if opts.get("max_logit"):
        cmd.append("--max-logit")
    return cmd


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hcp", default="build/cli/hcp")
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--max-heads", type=int, default=8)
    parser.add_argument("--cp", default="2,4")
    parser.add_argument("--dtype", default="bf16")
    args = parser.parse_args()
    worst = defaultdict(lambda: defaultdict(float))
    failed = 0
    runs = 0
    for name, (batch, heads, head_dim, opts) in CONFIGS.items():
        for cp in (int(x) for x in args.cp.split(",")):
            for scheme, _ in SCHEMES:
                if scheme == "a2a+p2p" and cp < 4:
                    continue
                runs += 1
                cmd = command(args, batch, heads, head_dim, opts, scheme, cp)
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode not in (0, 1):
                    failed += 1
                    print(f"{name} {scheme} cp {cp}: error: {done.stderr.strip()}")
                    continue
                check = json.loads(done.stdout)["check"]
                failed += not check["ok"]
                errors = {k: v["max_rel"] for k, v in check["errors"].items()}
                for k, v in errors.items():
                    key = (features(opts), scheme)
                    worst[key][k] = max(worst[key][k], v)
                print(f"{name} {scheme} cp {cp}: {'ok' if check['ok'] else 'FAIL'} "
                      + " ".join(f"{k} {v:.1e}" for k, v in errors.items()), flush=True)
    print(f"\n{runs} runs, {failed} failed; worst max relative error per feature and scheme ({args.dtype}):")
    for (feature, scheme), errs in sorted(worst.items()):
        print(f"  {feature:32s} {scheme:10s} " + " ".join(f"{k} {v:.1e}" for k, v in sorted(errs.items())))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

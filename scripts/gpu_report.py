"""The Markdown pieces of scripts/gpu-check.sh's report, one function per table, from the JSON that `hcp attn
--format json` and `attention_cuda_bench --json` print. Kept out of the shell script so that tests can render them
from real CLI output on machines without a GPU (tests/gpu_report)."""

import json
import sys

FIELDS = ("out", "lse", "dq", "dk", "dv")


def check_header():
    return ("| dtype | head dim | mask | out | lse | dq | dk | dv | ok |\n"
            "|---|---|---|---|---|---|---|---|---|")


def check_row(result, dtype, dim, mask):
    """One kernel instantiation against the CPU kernels: max relative error per output."""
    check = result["check"]
    cells = " | ".join(f"{check['errors'][k]['max_rel']:.2e}" for k in FIELDS)
    return f"| {dtype} | {dim} | {mask} | {cells} | {'yes' if check['ok'] else 'NO'} |"


def bench_table(bench):
    """The kernels' speed, with cuBLAS's bf16 GEMM rate of the same run as the reference."""
    mask = "causal" if bench.get("causal", True) else "no mask"
    lines = [f"## Kernel speed on {bench['device']} (B 1, H 32, D {bench['head_dim']}, {mask}, bf16)", ""]
    gemm = bench.get("gemm_tflops", 0)
    if gemm > 0:
        lines += [f"Reference: cuBLAS bf16 GEMM {bench['gemm_n']}^3 with fp32 accumulation, {gemm:.1f} TFLOP/s.", ""]
    lines += ["| S | forward ms | forward TFLOP/s | forward / GEMM | backward ms | backward TFLOP/s |",
              "|---|---|---|---|---|---|"]
    for run in bench["runs"]:
        ratio = f"{run['forward_vs_gemm']:.2f}" if gemm > 0 else "-"
        lines.append(f"| {run['seq']} | {run['forward_ms']:.3f} | {run['forward_tflops']:.1f} | {ratio} | "
                     f"{run['backward_ms']:.3f} | {run['backward_tflops']:.1f} |")
    return "\n".join(lines)


def cp_header():
    return ("| S | check | forward s | forward TFLOP/s | backward s | backward TFLOP/s |\n"
            "|---|---|---|---|---|---|")


def cp_row(result):
    """One CP simulation: the check (when it ran) and the slowest rank's wall time per pass."""
    bench = result["bench"]
    check = result.get("check")
    if check is None:
        verdict = "-"
    else:
        worst = max(v["max_rel"] for v in check["errors"].values())
        verdict = f"{'ok' if check['ok'] else 'FAILED'} (max rel {worst:.1e})"
    return (f"| {result['seq']} | {verdict} | {bench['forward_wall_s']:.3f} | {bench['forward_tflops']:.1f} | "
            f"{bench['backward_wall_s']:.3f} | {bench['backward_tflops']:.1f} |")


def render(kind, args):
    """The Markdown for one report piece. A run that left no usable JSON (a crash, an error exit) becomes a line
    saying so, with the last line of its stderr when ERR_FILE is given, so that the report is always complete."""
    if kind == "check-header":
        return check_header()
    if kind == "cp-header":
        return cp_header()
    renderers = {"check": (4, lambda r: check_row(r, *args[1:4])), "bench": (1, bench_table), "cp": (1, cp_row)}
    if kind not in renderers or len(args) not in (renderers[kind][0], renderers[kind][0] + 1):
        raise SystemExit(USAGE)
    count, fn = renderers[kind]
    try:
        with open(args[0]) as f:
            return fn(json.load(f))
    except (OSError, ValueError, KeyError, TypeError) as e:
        reason = f"{type(e).__name__}: {e}"
        if len(args) > count:
            try:
                with open(args[count]) as f:
                    tail = [line.strip() for line in f if line.strip()]
                if tail:
                    reason = tail[-1]
            except OSError:
                pass
        label = " ".join(args[1:count]) or kind
        return f"| {label} | no result: {reason.replace('|', '/')} |"


USAGE = ("usage: gpu_report.py check-header | check JSON DTYPE DIM MASK [ERR_FILE] | bench JSON [ERR_FILE] | "
         "cp-header | cp JSON [ERR_FILE]")


def main(argv):
    if not argv:
        raise SystemExit(USAGE)
    print(render(argv[0], argv[1:]))


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Compares hcp-logscan's JSON on each real log of this corpus (logs/, sources in SOURCES.tsv) with what a person
reading the log expects (expected.jsonl): verdict, failed, failure kinds, last and total iterations, last loss.

    check_corpus.py HCP_LOGSCAN|HCP [--verbose]

Compares, per log: verdict, failed, the failures as (kind, rank) pairs, last and total iterations, last loss,
throughput (TFLOP/s/GPU), median iteration time (ms) and the number of runs. Prints per field how many logs agree
and exits 1 on any difference (ctest logscan.realworld_corpus).

    --verbose   list every difference
"""
import json
import os
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ["verdict", "failed", "failures", "last_iteration", "total_iterations", "last_lm_loss",
          "throughput_tflops_per_gpu", "iteration_time_ms", "runs"]
# Medians of values a log prints with 1-2 decimals: agreement to 0.05% (a sample median of an even count is the
# mean of the middle two, which a reader may round).
RELATIVE = {"last_lm_loss": 1e-4, "throughput_tflops_per_gpu": 5e-4, "iteration_time_ms": 5e-4}


def scan(tool, path):
    command = [tool, "logscan"] if os.path.basename(tool) == "hcp" else [tool]
    r = subprocess.run([*command, "--format", "json", path], capture_output=True, text=True, timeout=120)
    if not r.stdout.strip():
        return None
    return json.loads(r.stdout)


def actual_fields(report):
    progress = report.get("progress") or {}
    items = (report.get("failures") or {}).get("items") or []
    return {
        "verdict": report.get("verdict"),
        "failed": report.get("failed"),
        "failures": failure_pairs(items),
        "last_iteration": progress.get("last_iteration"),
        "total_iterations": progress.get("total_iterations"),
        "last_lm_loss": progress.get("last_lm_loss"),
        "throughput_tflops_per_gpu": progress.get("throughput_tflops_per_gpu"),
        "iteration_time_ms": progress.get("median_iteration_ms"),
        "runs": len(report.get("runs") or []),
    }


def failure_pairs(items):
    return sorted((i.get("kind"), -1 if i.get("rank") is None else i.get("rank")) for i in items)


def same(field, want, got):
    if field in RELATIVE and want is not None and got is not None:
        return abs(want - got) <= RELATIVE[field] * max(1.0, abs(want))
    return want == got


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    tool, verbose = sys.argv[1], "--verbose" in sys.argv
    agree, right, total = Counter(), 0, 0
    with open(os.path.join(HERE, "expected.jsonl"), encoding="utf-8") as f:
        entries = [json.loads(line) for line in f if line.strip()]
    for e in entries:
        total += 1
        report = scan(tool, os.path.join(HERE, e["file"]))
        exp = e["expect"]
        want = {
            "verdict": exp["verdict"], "failed": exp["failed"],
            "failures": failure_pairs(exp.get("failures", [])),
            "last_iteration": exp.get("last_iteration"), "total_iterations": exp.get("total_iterations"),
            "last_lm_loss": exp.get("last_lm_loss"),
            "throughput_tflops_per_gpu": exp.get("throughput_tflops_per_gpu"),
            "iteration_time_ms": exp.get("iteration_time_ms"), "runs": exp.get("runs", 1),
        }
        got = actual_fields(report) if report else {}
        wrong = [k for k in FIELDS if not same(k, want[k], got.get(k))]
        for k in FIELDS:
            agree[k] += k not in wrong
        right += not wrong
        if verbose and wrong:
            print(f"{e['file']}: " + "; ".join(f"{k} want {want[k]!r} got {got.get(k)!r}" for k in wrong))
    for k in FIELDS:
        print(f"{k:18} {agree[k]:3}/{total}")
    print(f"fully right: {right}/{total}")
    return 0 if right == total else 1


if __name__ == "__main__":
    sys.exit(main())

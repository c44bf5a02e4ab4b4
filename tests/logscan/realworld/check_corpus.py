#!/usr/bin/env python3
"""Compares hcp-logscan's JSON on each real log of this corpus (logs/, sources in SOURCES.tsv) with what a person
reading the log expects (expected.jsonl): verdict, failed, failure kinds, last and total iterations, last loss.

    check_corpus.py HCP_LOGSCAN|HCP [--verbose]

Prints, per field, how many logs agree, and the logs that are fully right. Issue 19 makes this a test that fails
on any difference; until then it measures (exit 0).
"""
import json
import os
import subprocess
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ["verdict", "failed", "failure kinds", "last_iteration", "total_iterations", "last_lm_loss"]


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
        "failure kinds": sorted(i.get("kind") for i in items),
        "last_iteration": progress.get("last_iteration"),
        "total_iterations": progress.get("total_iterations"),
        "last_lm_loss": progress.get("last_lm_loss"),
    }


def same(field, want, got):
    if field == "last_lm_loss" and want is not None and got is not None:
        return abs(want - got) <= 1e-4 * max(1.0, abs(want))
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
            "failure kinds": sorted(x["kind"] for x in exp.get("failures", [])),
            "last_iteration": exp.get("last_iteration"), "total_iterations": exp.get("total_iterations"),
            "last_lm_loss": exp.get("last_lm_loss"),
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
    return 0


if __name__ == "__main__":
    sys.exit(main())

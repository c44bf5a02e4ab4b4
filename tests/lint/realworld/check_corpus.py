#!/usr/bin/env python3
"""Runs hcp-lint over the corpus of real configs (tests/lint/realworld/*/files) and compares its error and warning
findings with the ones a reader of the upstream code expects (each folder's expected.jsonl; sources and licences
in its SOURCES.tsv).

A file whose form hcp-lint claims to read (SUPPORTED) fails the check on any unexpected error/warning finding and
on any expected finding it misses (code and severity). Files of forms it does not read yet are listed with their
counts, so the gap stays visible; they do not fail the check.

    check_corpus.py HCP_LINT|HCP [--verbose]
"""
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
SUPPORTED = {"megatron-launch"}


def load_expected():
    entries = []
    for folder in sorted(os.listdir(HERE)):
        path = os.path.join(HERE, folder, "expected.jsonl")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    e = json.loads(line)
                    e["_source"] = f"{path}:{n}"
                    entries.append(e)
    return entries


def lint(hcp_lint, paths):
    """path -> list of (code, severity) error/warning findings, or an input error string."""
    out = {}
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        command = [hcp_lint, "lint"] if os.path.basename(hcp_lint) == "hcp" else [hcp_lint]
        r = subprocess.run([*command, "--format", "json", *chunk], cwd=HERE, capture_output=True, text=True,
                           timeout=300)
        if r.returncode not in (0, 1, 2):
            raise SystemExit(f"hcp-lint exited {r.returncode}: {r.stderr[:2000]}")
        report = json.loads(r.stdout)
        for unit in report["inputs"]:
            if unit.get("error"):
                out[unit["path"]] = unit["error"]
                continue
            out[unit["path"]] = [(d["code"], d["severity"], d.get("line"), d["message"])
                                 for d in unit["diagnostics"] if d["severity"] in ("error", "warning")]
    return out


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    hcp_lint, verbose = sys.argv[1], "--verbose" in sys.argv
    entries = load_expected()
    results = lint(hcp_lint, [e["path"] for e in entries])
    failures = []
    by_form = defaultdict(Counter)
    for e in entries:
        got = results.get(e["path"])
        form = e["form"]
        stats = by_form[form]
        stats["files"] += 1
        if isinstance(got, str):
            stats["input errors"] += 1
            if form in SUPPORTED:
                failures.append(f"{e['path']}: input error: {got}")
            continue
        expected = Counter((x["code"], x["severity"]) for x in e.get("expected", []))
        actual = Counter((c, s) for c, s, _, _ in got)
        unexpected = actual - expected
        missing = expected - actual
        stats["false findings"] += sum(unexpected.values())
        stats["missed findings"] += sum(missing.values())
        stats["expected findings"] += sum(expected.values())
        if form in SUPPORTED and (unexpected or missing):
            detail = [f"  unexpected {c} {s} line {l}: {m}" for c, s, l, m in got if (c, s) in unexpected]
            detail += [f"  missing {c} {s}" for (c, s) in missing]
            failures.append(f"{e['path']} ({e['_source']}):\n" + "\n".join(detail))
        elif verbose and (unexpected or missing):
            print(f"[{form}] {e['path']}: unexpected {dict(unexpected)} missing {dict(missing)}")
    print(f"{'form':28} {'files':>6} {'false':>6} {'missed':>7} {'expected':>9} {'input errors':>13}  checked")
    for form, s in sorted(by_form.items()):
        print(f"{form:28} {s['files']:6} {s['false findings']:6} {s['missed findings']:7} {s['expected findings']:9} "
              f"{s['input errors']:13}  {'yes' if form in SUPPORTED else 'not yet read'}")
    if failures:
        print("\n".join(failures))
        print(f"{len(failures)} corpus files differ from what upstream code says")
        return 1
    print(f"{sum(1 for e in entries if e['form'] in SUPPORTED)} files of the supported forms match")
    return 0


if __name__ == "__main__":
    sys.exit(main())

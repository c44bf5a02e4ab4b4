#!/usr/bin/env python3
"""Runs hcp-lint over the corpus of real configs (tests/lint/realworld/*/files) and compares its error and warning
findings with the ones a reader of the upstream code expects (each folder's expected.jsonl; sources and licences
in its SOURCES.tsv).

A file whose form hcp-lint claims to read (SUPPORTED) fails the check on any unexpected error/warning finding and
on any expected finding it misses (code and severity). Files of forms it does not read yet are listed with their
counts, so the gap stays visible; they do not fail the check.

Read to the end: every launch script is linted a second time, from a copy of the corpus, with a sentinel launch
appended (a2a+p2p without hierarchical sizes, HCP001); a script whose sentinel is not reported was not read to its
end, and fails the check.

    check_corpus.py HCP_LINT|HCP [--verbose]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
# The forms hcp-lint reads; "other" files must give no error or warning (they are skipped, or launch nothing).
SUPPORTED = {"megatron-launch", "megatron-functional-test", "megatron-yaml-cfg", "bridge-yaml", "bridge-launch",
             "bridge-python", "nemo2-python",
             "bridge-perf-script", "nemo1-yaml", "verl-launch", "verl-yaml", "nemo-rl-yaml", "nemo-rl-launch", "roll-yaml", "roll-launch", "areal-yaml", "areal-launch", "mindspeed-launch", "torchtitan-toml", "primus-yaml", "primus-launch", "flagscale-yaml", "other"}


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


SENTINEL = ("\npython pretrain_gpt.py --micro-batch-size 1 --context-parallel-size 2 --cp-comm-type a2a+p2p"
            "  # hcp-lint corpus sentinel\n")


def unread_scripts(hcp_lint, entries):
    """Launch scripts whose appended sentinel launch hcp-lint does not report."""
    scripts = [e["path"] for e in entries if e["form"] == "megatron-launch"]
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "corpus")
        shutil.copytree(HERE, copy, ignore=shutil.ignore_patterns("__pycache__"))
        lines = {}
        for path in scripts:
            with open(os.path.join(copy, path), "rb") as f:
                lines[path] = f.read().count(b"\n")
            with open(os.path.join(copy, path), "a", encoding="utf-8") as f:
                f.write(SENTINEL)
        results = lint(hcp_lint, scripts, cwd=copy)
    missing = []
    for path in scripts:
        got = results.get(path)
        if isinstance(got, str) or not any(c == "HCP001" and (line or 0) > lines[path] for c, _, line, _ in got):
            if not ends_with_exit(os.path.join(HERE, path)):
                missing.append(path)
    return missing


def ends_with_exit(path):
    """Whether the script exits unconditionally (an unindented `exit` or `; exit`): bash never reaches a line
    appended after it either."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return any(re.match(r"^[^\s#].*(^|;|&&|\|\|)\s*exit\b", line) or re.match(r"^exit\b", line) for line in f)


SKIPPED = set()


def lint(hcp_lint, paths, cwd=HERE):
    """path -> list of (code, severity) error/warning findings, or an input error string."""
    out = {}
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        command = [hcp_lint, "lint"] if os.path.basename(hcp_lint) == "hcp" else [hcp_lint]
        r = subprocess.run([*command, "--format", "json", *chunk], cwd=cwd, capture_output=True, text=True,
                           timeout=300)
        if r.returncode not in (0, 1, 2):
            raise SystemExit(f"hcp-lint exited {r.returncode}: {r.stderr[:2000]}")
        report = json.loads(r.stdout)
        for unit in report["inputs"]:
            if unit.get("error"):
                out[unit["path"]] = unit["error"]
                continue
            if unit.get("skipped"):
                SKIPPED.add(unit["path"])
            out[unit["path"]] = [(d["code"], d["severity"], d.get("line"), d["message"])
                                 for d in unit["diagnostics"] if d["severity"] in ("error", "warning")]
    return out


# The corpus's fact names -> hcp-lint --show-facts names (Megatron-LM's arguments).
FACT_NAMES = {"cp": "context_parallel_size", "tp": "tensor_model_parallel_size", "pp": "pipeline_model_parallel_size",
              "cp_comm_type": "cp_comm_type", "hcp_sizes": "hierarchical_context_parallel_sizes",
              "num_layers": "num_layers", "num_attention_heads": "num_attention_heads",
              "num_query_groups": "num_query_groups", "seq_length": "seq_length", "world_size": "world_size",
              "ep": "expert_model_parallel_size", "etp": "expert_tensor_parallel_size"}


# MindSpeed's --context-parallel-algo as the Megatron cp_comm_type hcp-lint shows (lint/src/loaders/mindspeed_cp.cpp).
MINDSPEED_ALGOS = {"megatron_cp_algo": "p2p", "ulysses_cp_algo": "a2a", "hybrid_cp_algo": "a2a+p2p",
                   "kvallgather_cp_algo": "all_gather"}


def fact_agrees(expected, shown):
    """Whether one launch's shown fact says what the corpus says: a value, "default" (nothing in the input sets
    it) or "unknown" (the input cannot know it)."""
    if expected == "unknown":
        return shown["state"] == "unknown"
    if expected == "default":
        return shown["at"] is None and shown["state"] in ("default", "unknown")
    value = shown["value"]
    expected = MINDSPEED_ALGOS.get(expected, expected) if isinstance(expected, str) else expected
    if isinstance(expected, str) and expected.lstrip("-").isdigit():
        expected = int(expected)
    if isinstance(expected, str) and isinstance(value, list):
        value = str(value)
    if isinstance(expected, list) or isinstance(value, list):
        return shown["state"] != "unknown" and [str(v) for v in (value or [])] == [str(v) for v in expected]
    return shown["state"] != "unknown" and value == expected


def compare_facts(hcp_lint, entries, verbose):
    """Per corpus fact name, how many files' --show-facts agree with what reading the upstream code says (a
    per-path expectation, a dict, is not compared). Returns the facts shown as known with another value than the
    corpus's: those fail the check (an unknown where the corpus knows is only counted)."""
    with_facts = [e for e in entries if e.get("facts") and e["form"] in SUPPORTED and e["form"] != "other"]
    shown = {}
    paths = [e["path"] for e in with_facts]
    command = [hcp_lint, "lint"] if os.path.basename(hcp_lint) == "hcp" else [hcp_lint]
    for i in range(0, len(paths), 200):
        r = subprocess.run([*command, "--format", "json", "--show-facts", *paths[i:i + 200]], cwd=HERE,
                           capture_output=True, text=True, timeout=300)
        for unit in json.loads(r.stdout)["inputs"]:
            shown[unit["path"]] = unit.get("launches") or []
    agree, compared, disagreements, wrong = Counter(), Counter(), [], []
    form_agree, form_compared = Counter(), Counter()  # by the corpus's form: one figure per framework
    for e in with_facts:
        launches = shown.get(e["path"], [])
        if not launches:
            continue
        for name, expected in e["facts"].items():
            if name not in FACT_NAMES or isinstance(expected, dict):
                continue
            compared[name] += 1
            form_compared[e["form"]] += 1
            # A framework's launches (verl's workers, NeMo-RL's policy and teacher): the corpus gives the first,
            # the actor's or the policy's.
            main = [l for l in launches if not l.get("role") or l["role"] == launches[0].get("role")]
            got = [launch["facts"][FACT_NAMES[name]] for launch in main]
            if all(fact_agrees(expected, g) for g in got):
                agree[name] += 1
                form_agree[e["form"]] += 1
            else:
                # A value shown as known that is not the corpus's value is wrong, not merely less informed.
                # (A `${CP:-2}` default counts: the corpora take a script's default as its value.)
                def stated(g):
                    return g["state"] == "known" or (g["state"] == "default" and g["at"] is not None)
                if expected not in ("unknown", "default") and any(
                        stated(g) and not fact_agrees(expected, g) for g in got):
                    wrong.append(f"{e['path']}: --show-facts gives {name} as "
                                 f"{[g['value'] for g in got if stated(g)]}, the corpus says {expected!r}")
                disagreements.append(f"{e['path']}: {name} expected {expected!r}, shown "
                                     + ", ".join(f"{g['value']!r} ({g['state']})" for g in got[:3]))
    print(f"\n--show-facts agreement with the corpus ({len(with_facts)} files of supported forms with facts):")
    for name in FACT_NAMES:
        if compared[name]:
            print(f"  {name:22} {agree[name]:4}/{compared[name]:<4} {100.0 * agree[name] / compared[name]:5.1f}%")
    total_agree, total = sum(agree.values()), sum(compared.values())
    print(f"  {'all':22} {total_agree:4}/{total:<4} {100.0 * total_agree / max(total, 1):5.1f}%")
    print("by form:")
    for form in sorted(form_compared):
        print(f"  {form:22} {form_agree[form]:4}/{form_compared[form]:<4} "
              f"{100.0 * form_agree[form] / form_compared[form]:5.1f}%")
    if verbose:
        print("\n".join(disagreements))
    return wrong


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
        stats["skipped"] += e["path"] in SKIPPED
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
    print(f"{'form':28} {'files':>6} {'skipped':>8} {'false':>6} {'missed':>7} {'expected':>9} {'input errors':>13}  checked")
    for form, s in sorted(by_form.items()):
        print(f"{form:28} {s['files']:6} {s['skipped']:8} {s['false findings']:6} {s['missed findings']:7} "
              f"{s['expected findings']:9} {s['input errors']:13}  {'yes' if form in SUPPORTED else 'not yet read'}")
    failures.extend(compare_facts(hcp_lint, entries, verbose))
    for path in unread_scripts(hcp_lint, entries):
        failures.append(f"{path}: not read to its end (the appended sentinel launch is not reported)")
    if failures:
        print("\n".join(failures))
        print(f"{len(failures)} corpus files differ from what upstream code says")
        return 1
    print(f"{sum(1 for e in entries if e['form'] in SUPPORTED)} files of the supported forms match")
    return 0


if __name__ == "__main__":
    sys.exit(main())

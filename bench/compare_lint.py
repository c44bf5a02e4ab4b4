#!/usr/bin/env python3
"""hcp-lint speed against its targets, measured in one run:
- one process linting 10,000 small configs (a directory of TOML/YAML/script files) <= 1 s;
- the same through the C ABI in one process (lint_bench, per config) <= 100 us each;
- `hcp-lint` on one file <= 20 ms wall (process start included);
- `hcp-lint` on a whole Megatron-LM checkout <= 1.5 s, when HCP_MEGATRON_LM names one (a directory; e.g. from
  `git archive` of a clone: about 550 shell and YAML files, launch scripts and functional tests);
- `hcp-lint` on the real-world corpus (tests/lint/realworld, every form, frameworks included) within the budget per
  file its first target set (1.5 s for its 438 files then: 3.42 ms a file).
There is no other linter for these configs to compare with; the targets are the yardstick.
Usage: [HCP_MEGATRON_LM=DIR] bench/compare_lint.py [BUILD_DIR]
"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def make_configs(directory, count):
    good = (ROOT / "examples/configs/good/hcp_bridge.toml").read_text()
    yaml = (ROOT / "examples/configs/good/hcp_bridge_override.yaml").read_text()
    script = (ROOT / "examples/configs/broken/launch_allgather.sh").read_text()
    for i in range(count):
        kind = i % 3
        cp = [2, 4, 8, 16][i % 4]
        if kind == 0:
            text, ext = good.replace("context_parallel_size = 8", f"context_parallel_size = {cp}"), "toml"
        elif kind == 1:
            text, ext = yaml.replace("context_parallel_size: 8", f"context_parallel_size: {cp}"), "yaml"
        else:
            text, ext = script.replace("--context-parallel-size 3", f"--context-parallel-size {cp}"), "sh"
        (directory / f"cfg{i:05d}.{ext}").write_text(text)


def wall(cmd, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main():
    build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build"
    hcp_lint = build / "cli" / "hcp-lint"
    rows, ok = [], True
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        make_configs(d, 10000)
        best, median = wall([str(hcp_lint), "--format", "json", str(d)], 3)
        rows.append(("10,000 configs, one hcp-lint process", best, median, 1.0))
    megatron = os.environ.get("HCP_MEGATRON_LM")
    if megatron:
        best, median = wall([str(hcp_lint), "--format", "json", megatron], 5)
        rows.append(("a Megatron-LM checkout, one hcp-lint process", best, median, 1.5))
    corpus = ROOT / "tests/lint/realworld"
    files = sum(1 for p in corpus.glob("*/files/**/*") if p.is_file())
    best, median = wall([str(hcp_lint), "--format", "json", str(corpus)], 5)
    rows.append((f"the real-world corpus ({files} files), one process", best, median, files * 1.5 / 438))
    one = ROOT / "examples/configs/good/hcp_bridge.toml"
    best, median = wall([str(hcp_lint), str(one)], 30)
    rows.append(("hcp-lint on one file (wall)", best, median, 0.020))
    out = subprocess.run([str(build / "bench" / "lint_bench"), "--benchmark_format=json", "--benchmark_min_time=0.2"],
                         check=True, capture_output=True, text=True).stdout
    for b in json.loads(out)["benchmarks"]:
        per = b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3}[b["time_unit"]]
        rows.append((f"{b['name']} x 10,000 (in process)", per * 10000, per * 10000, 1.0))
    print(f"{'task':52} {'best':>10} {'median':>10} {'target':>10}  verdict")
    for name, best, median, target in rows:
        passed = median <= target
        ok &= passed
        print(f"{name:52} {best * 1e3:8.1f}ms {median * 1e3:8.1f}ms {target * 1e3:8.0f}ms  {'ok' if passed else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

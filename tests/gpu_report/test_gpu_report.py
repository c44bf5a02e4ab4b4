"""scripts/gpu_report.py, the tables of the GPU check's report: rendered from real `hcp attn --format json` output
(on the CPU: the JSON is the same with --device cuda) and from a sample of attention_cuda_bench's --json output,
whose keys are checked against the bench's source so the sample cannot drift; a run without usable output becomes
a 'no result' row naming the reason instead of a missing table."""

import importlib.util
import json
import os
import pathlib
import re
import subprocess
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
HCP = os.environ.get("HCP_CLI")

spec = importlib.util.spec_from_file_location("gpu_report", ROOT / "scripts" / "gpu_report.py")
gpu_report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_report)


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def attn_json(*args):
    p = subprocess.run([HCP, "attn", *args, "--format", "json"], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"hcp attn {args}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


class Tables(unittest.TestCase):
    @unittest.skipUnless(HCP, "HCP_CLI is not set (ctest sets it)")
    def test_check_row_from_the_cli(self):
        r = attn_json("--cp", "1", "--seq", "256", "--heads", "4", "--kv-heads", "2", "--head-dim", "64",
                      "--dtype", "bf16", "--causal", "--backward", "--check")
        row = cells(gpu_report.check_row(r, "bf16", "64", "causal"))
        self.assertEqual(len(row), len(cells(gpu_report.check_header().splitlines()[0])))
        self.assertEqual(row[:3], ["bf16", "64", "causal"])
        self.assertEqual(row[-1], "yes")
        for value, field in zip(row[3:8], gpu_report.FIELDS):
            want = r["check"]["errors"][field]["max_rel"]
            self.assertAlmostEqual(float(value), want, delta=1e-2 * want + 1e-12)

    @unittest.skipUnless(HCP, "HCP_CLI is not set (ctest sets it)")
    def test_cp_row_from_the_cli(self):
        r = attn_json("--cp", "4", "--comm", "a2a+p2p", "--hcp-sizes", "2,2", "--seq", "256", "--heads", "8",
                      "--head-dim", "64", "--causal", "--dtype", "bf16", "--backward", "--bench", "--check")
        row = cells(gpu_report.cp_row(r))
        self.assertEqual(len(row), len(cells(gpu_report.cp_header().splitlines()[0])))
        self.assertEqual(row[0], "256")
        self.assertTrue(row[1].startswith("ok (max rel "), row[1])
        del r["check"]
        self.assertEqual(cells(gpu_report.cp_row(r))[1], "-")

    def test_bench_table_matches_the_bench_output(self):
        sample = json.loads((HERE / "bench_sample.json").read_text())
        source = (ROOT / "bench" / "attention_cuda_bench.cpp").read_text()
        printed = set(re.findall(r'\\"(\w+)\\":', source))
        sample_keys = set(sample) | set(sample["runs"][0])
        self.assertEqual(printed, sample_keys, "bench_sample.json must have the keys attention_cuda_bench prints")
        table = gpu_report.bench_table(sample).splitlines()
        self.assertIn("NVIDIA H200", table[0])
        self.assertIn("D 128", table[0])
        self.assertTrue(any("700.0 TFLOP/s" in line for line in table))
        rows = [cells(line) for line in table if re.match(r"\| \d", line)]
        self.assertEqual([r[0] for r in rows], ["8192", "16384"])
        self.assertEqual(rows[1][2:4], ["274.9", "0.39"])
        sample["gemm_tflops"] = 0  # cuBLAS failed: no ratio rather than a division by zero
        self.assertEqual(cells(gpu_report.bench_table(sample).splitlines()[-1])[3], "-")

    def test_a_run_without_output_is_a_row_saying_why(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "none.json")
            err = os.path.join(d, "run.err")
            pathlib.Path(err).write_text("warming up\nhcp: CUDA engine: cudaMallocAsync: out of memory\n\n")
            row = gpu_report.render("check", [missing, "bf16", "128", "full", err])
            self.assertEqual(cells(row),
                             ["bf16 128 full", "no result: hcp: CUDA engine: cudaMallocAsync: out of memory"])
            broken = os.path.join(d, "broken.json")
            pathlib.Path(broken).write_text('{"device": ')
            self.assertIn("no result: JSONDecodeError", gpu_report.render("bench", [broken]))
            pathlib.Path(broken).write_text('{"seq": 1}')
            self.assertIn("no result: KeyError", gpu_report.render("cp", [broken]))
            with self.assertRaises(SystemExit):
                gpu_report.render("check", [missing])


if __name__ == "__main__":
    unittest.main()

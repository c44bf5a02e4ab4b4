"""`hcp groups` end to end: JSON equals the Megatron fixtures, errors exit 2 with one line."""

import json
import os
import subprocess
import unittest

from tests._fixtures import megatron_layouts

HCP = os.environ.get("HCP_CLI")

KEYS = ["world_size", "tp", "pp", "cp", "dp", "order", "hcp_sizes", "cp_groups", "tp_groups", "dp_groups",
        "pp_groups", "dp_cp_groups", "tp_cp_groups", "mp_groups", "tp_dp_cp_groups", "hcp_groups", "locality"]


def run(*args):
    return subprocess.run([HCP, "groups", *args], capture_output=True, text=True, timeout=60)


@unittest.skipUnless(HCP, "HCP_CLI is not set (ctest sets it to the built hcp binary)")
class CliGroupsTest(unittest.TestCase):
    def test_json_matches_every_fixture(self):
        for case in megatron_layouts():
            args = ["--world-size", str(case["world_size"]), "--tp", str(case["tp"]), "--pp", str(case["pp"]),
                    "--cp", str(case["cp"]), "--order", case["order"], "--format", "json"]
            if case["hcp_sizes"]:
                args += ["--hcp-sizes", ",".join(map(str, case["hcp_sizes"]))]
            with self.subTest(args=" ".join(args)):
                p = run(*args)
                self.assertEqual(p.returncode, 0, p.stderr)
                out = json.loads(p.stdout)
                self.assertEqual(list(out), KEYS)
                for key in KEYS[:-1]:
                    self.assertEqual(out[key], case[key], key)
                self.assertEqual(len(out["locality"]), len(case["hcp_groups"]))

    def test_rank_json(self):
        p = run("--world-size", "16", "--tp", "2", "--pp", "2", "--cp", "4", "--hcp-sizes", "2,2", "--rank", "5",
                "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertEqual(out["coords"], {"tp": 1, "cp": 2, "dp": 0, "pp": 0})
        self.assertEqual([lvl["ranks"] for lvl in out["groups"]["hcp"]], [[5, 7], [1, 5]])

    def test_invalid_config_exits_2_with_one_line(self):
        for args, needle in [
            (["--world-size", "8", "--pp", "2", "--cp", "3"], "world_size (8) is not divisible by tp * pp * cp"),
            (["--world-size", "8", "--cp", "8", "--hcp-sizes", "2,2"], "(=4) must equal context-parallel size (=8)"),
            (["--world-size", "8", "--cp", "4", "--hcp-sizes", "2,x"], "--hcp-sizes: '2,x' is not a list"),
            (["--world-size", "0"], "world_size must be positive"),
            (["--world-size", "99999999999999999999"], "--world-size"),
            (["--world-size", "16", "--pp", "2", "--cp", "2", "--order", "tp-cp-ep-pp-dp"], "pp-last"),
            (["--world-size", "8", "--rank", "8"], "rank 8 out of range [0, 8)"),
        ]:
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2)
                self.assertEqual(p.stdout, "")
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(needle, p.stderr)


if __name__ == "__main__":
    unittest.main()

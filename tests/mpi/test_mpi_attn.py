"""`hcp attn --backend mpi` with real processes under mpirun: every scheme at 2, 4, 6 and 8 ranks (oversubscribed
on a small machine), hierarchical levels and gpus_per_node, GQA and bf16, forward and backward, and failures
between processes - a rank killed, a rank that hangs, a rank that aborts, shapes that differ between processes.

Environment: HCP_CLI (the hcp command), MPIEXEC (the launcher), HCP_LIBRARY and HCP_PYTHONPATH (libhcp.so and the
Python binding, for python_rank.py)."""

import os
import re
import subprocess
import sys
import time
import unittest

CLI = os.environ["HCP_CLI"]
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")
# Open MPI refuses root without the flag, and more processes than cores without --oversubscribe.
LAUNCH = [MPIEXEC, "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
SMALL = ["--heads", "24", "--head-dim", "16"]


def mpirun(np, *args, timeout=120):
    start = time.monotonic()
    p = subprocess.run(LAUNCH + ["-np", str(np), CLI, "attn", "--backend", "mpi", "--cp", str(np)] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - start


class EverySchemeEveryRankCount(unittest.TestCase):
    # a2a+p2p: [a2a, p2p] with a2a * p2p = ranks
    SIZES = {2: "2,1", 4: "2,2", 6: "3,2", 8: "2,4"}

    def run_ok(self, np, *args):
        p, _ = mpirun(np, *args)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("check against single-rank attention: ok", p.stdout)
        self.assertIn("one MPI process per rank", p.stdout)
        return p

    def test_schemes(self):
        for np in (2, 4, 6, 8):
            seq = str(24 * np)
            for comm in ("p2p", "a2a", "a2a+p2p", "all_gather"):
                extra = ["--hcp-sizes", self.SIZES[np]] if comm == "a2a+p2p" else []
                causal = ["--causal"] if np % 4 == 0 else []
                with self.subTest(np=np, comm=comm):
                    p = self.run_ok(np, "--comm", comm, "--seq", seq, *SMALL, *extra, *causal, "--backward",
                                    "--check")
                    # Every process logs its own groups, as a training job does.
                    created = set(re.findall(r"\[hcp\] rank (\d+): created CONTEXT_PARALLEL_GROUP", p.stderr))
                    self.assertEqual(created, {str(r) for r in range(np)})

    def test_gqa_and_bf16(self):
        for np, comm in ((4, "a2a"), (6, "p2p"), (8, "a2a+p2p")):
            extra = ["--hcp-sizes", self.SIZES[np]] if comm == "a2a+p2p" else []
            with self.subTest(np=np, comm=comm):
                p = self.run_ok(np, "--comm", comm, "--seq", str(32 * np), "--heads", "24", "--kv-heads", str(np),
                                "--head-dim", "32", "--dtype", "bf16", "--causal", "--backward", "--check", *extra)
                self.assertIn(f"Hkv {np}", p.stdout)

    def test_packed_documents_and_windows(self):
        # Each process checks its own rows of every document (TE's chunk partitioning) against one rank.
        for np, comm, extra in ((4, "a2a+p2p", ["--hcp-sizes", "2,2"]), (4, "p2p", ["--window", "40,0"]),
                                (6, "all_gather", ["--window", "25,3"]), (8, "a2a", [])):
            with self.subTest(np=np, comm=comm):
                p = self.run_ok(np, "--comm", comm, "--seqlens", "1,130,47,300", *SMALL, "--kv-heads", "8",
                                "--causal", "--backward", "--check", *extra)
                self.assertIn("packed: 4 documents", p.stdout)

    def test_hierarchical_levels_and_nodes_smaller_than_the_world(self):
        p = self.run_ok(8, "--comm", "a2a+p2p", "--hcp-sizes", "4,2", "--gpus-per-node", "4", "--seq", "192",
                        *SMALL, "--backward", "--check")
        self.assertRegex(p.stderr, r"rank 5: created HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=\[4,2\] "
                                   r"L0=\[4,5,6,7\] L1=\[1,5\]")
        # Three levels: the layout of a p2p run (its ring is the flat CP group), every level's groups built.
        p = self.run_ok(8, "--comm", "p2p", "--hcp-sizes", "2,2,2", "--gpus-per-node", "4", "--seq", "192", *SMALL,
                        "--causal", "--backward", "--check")
        self.assertRegex(p.stderr, r"rank 5: created HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=\[2,2,2\] "
                                   r"L0=\[4,5\] L1=\[5,7\] L2=\[1,5\]")


class FailuresBetweenProcesses(unittest.TestCase):
    TIMEOUT_MS = 3000
    ARGS = ["--seq", "96", *SMALL, "--causal", "--backward", "--timeout-ms", str(TIMEOUT_MS)]

    def test_a_killed_rank_ends_the_job_and_the_others_say_so(self):
        p, elapsed = mpirun(4, *self.ARGS, "--inject-fault", "1:2:kill")
        self.assertNotEqual(p.returncode, 0)
        self.assertLess(elapsed, self.TIMEOUT_MS / 1000 + 20)
        self.assertRegex(p.stderr, r"rank 1 .*(signal 9|Killed)")
        self.assertGreaterEqual(len(re.findall(r"\[hcp\] rank [023]: stopped by the launcher", p.stderr)), 1)

    def test_a_hung_rank_makes_the_others_time_out(self):
        p, elapsed = mpirun(4, *self.ARGS, "--inject-fault", "3:2:hang")
        self.assertNotEqual(p.returncode, 0)
        self.assertLess(elapsed, self.TIMEOUT_MS / 1000 + 20)
        reported = set(re.findall(r"error: rank (\d): .*did not complete within 3000 ms", p.stderr))
        self.assertEqual(reported, {"0", "1", "2"}, p.stderr)

    def test_an_aborting_rank_makes_every_other_fail_with_its_reason(self):
        p, _ = mpirun(4, *self.ARGS, "--inject-fault", "2:1:abort")
        self.assertNotEqual(p.returncode, 0)
        for r in (0, 1, 3):
            self.assertRegex(p.stderr, rf"error: rank {r}: rank 2 failed: fault injected at ring exchange 1")

    def test_shapes_that_differ_between_processes_fail_on_every_rank(self):
        common = [CLI, "attn", "--backend", "mpi", "--cp", "4", *SMALL, "--check"]
        p = subprocess.run(LAUNCH + ["-np", "2"] + common + ["--seq", "96", ":", "-np", "2"] + common +
                           ["--seq", "192"], capture_output=True, text=True, timeout=120)
        self.assertNotEqual(p.returncode, 0)
        ranks = set(re.findall(r"rank (\d): CP ranks disagree on seq_local", p.stderr))
        self.assertEqual(ranks, {"0", "1", "2", "3"}, p.stderr)

    def test_a_process_count_other_than_cp_is_a_config_error(self):
        p = subprocess.run(LAUNCH + ["-np", "2", CLI, "attn", "--backend", "mpi", "--cp", "4"], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--cp is 4 but the job has 2 processes", p.stderr)


class PythonRanks(unittest.TestCase):
    """The Python binding's hcp.MpiComm, one rank per process (python_rank.py): with MPI started by hcp, and from
    an mpi4py communicator when Debian's mpi4py is installed (for the system's python3)."""

    def run_ranks(self, python, np):
        env = dict(os.environ, HCP_LIBRARY=os.environ["HCP_LIBRARY"], PYTHONPATH=os.environ["HCP_PYTHONPATH"])
        p = subprocess.run(LAUNCH + ["-np", str(np), python, os.path.join(os.path.dirname(__file__),
                                                                          "python_rank.py")],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout

    def test_mpi_started_by_hcp(self):
        out = self.run_ranks(sys.executable, 3)
        self.assertEqual(len(re.findall(r"python rank \d of 3 \((hcp|mpi4py)\): max error", out)), 3, out)
        # (Lines of different ranks may still meet in the launcher's output: matched without anchors.)
        nccl = re.findall(r"python rank (\d): nccl over mpi: (ok|unsupported: hcp_comm_create_nccl_mpi: \w+)", out)
        self.assertEqual(sorted(r for r, _ in nccl), ["0", "1", "2"], out)
        if any(n.startswith("unsupported") for _, n in nccl):  # no GPU here: every rank says why
            self.assertTrue(all(n.startswith("unsupported: ") for _, n in nccl), nccl)

    def test_from_an_mpi4py_communicator(self):
        system = "/usr/bin/python3"
        if subprocess.run([system, "-c", "import mpi4py"], capture_output=True).returncode != 0:
            self.skipTest("Debian's python3-mpi4py is not installed")
        out = self.run_ranks(system, 2)
        self.assertEqual(len(re.findall(r"python rank \d of 2 \(mpi4py\): max error", out)), 2, out)


if __name__ == "__main__":
    unittest.main()

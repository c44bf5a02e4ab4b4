#!/usr/bin/env python3
"""hcp-logscan --follow against logs written while it runs: the verdict before the log is complete, failures as
they appear, --exit-on, new per-rank files, rotation and truncation.

    follow_test.py HCP_BINARY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HCP = None
HERE = os.path.dirname(os.path.abspath(__file__))
BRIDGE = os.path.join(HERE, "realworld", "logs", "085_derived_bridge_yaml_a2a_p2p_hcp_null.log")
OOM = """Traceback (most recent call last):
  File "pretrain_gpt.py", line 10, in <module>
    main()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
"""


class Follow:
    """hcp-logscan --follow in the background; its stdout lines collected as they come."""

    def __init__(self, *args, pass_fds=()):
        cmd = [HCP, "logscan"] if os.path.basename(HCP) == "hcp" else [HCP]
        self.proc = subprocess.Popen([*cmd, "--follow", "--poll-ms", "20", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, pass_fds=pass_fds)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text, timeout=10):
        end = time.time() + timeout
        while time.time() < end:
            if any(text in line for line in self.lines):
                return True
            time.sleep(0.02)
        return False

    def finish(self, timeout=20):
        rc = self.proc.wait(timeout)
        self.reader.join(5)
        return rc


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()


class FollowTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hcp-follow-")
        with open(BRIDGE, encoding="utf-8") as f:
            self.bridge = f.read().splitlines(keepends=True)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_verdict_settles_before_the_log_is_complete_and_exit_on_stops(self):
        log = os.path.join(self.dir, "train.log")
        f = Follow("--exit-on", "cp-silently-off", log)
        time.sleep(0.2)  # the file does not exist yet: waited for
        config_end = next(i for i, l in enumerate(self.bridge) if "hierarchical_context_parallel_sizes" in l) + 2
        append(log, "".join(self.bridge[:config_end]))
        self.assertTrue(f.wait_for("verdict cp-silently-off"), f.lines)
        self.assertEqual(f.finish(), 5, f.lines)  # stopped at once, before the rest was written

    def test_failures_appear_as_they_happen(self):
        log = os.path.join(self.dir, "train.log")
        append(log, "".join(self.bridge))
        f = Follow("--exit-on", "failure", "--format", "json", log)
        self.assertTrue(f.wait_for('"verdict": "cp-silently-off"'), f.lines)
        append(log, OOM)
        self.assertEqual(f.finish(), 6, f.lines)
        events = [json.loads(line) for line in f.lines]
        self.assertEqual([e["event"] for e in events], ["verdict", "failure"])
        self.assertEqual(events[1]["kind"], "cuda-oom")

    def test_new_rank_files_rotation_and_truncation(self):
        ranks = os.path.join(self.dir, "ranks")
        os.mkdir(ranks)
        r0 = os.path.join(ranks, "rank_0.log")
        append(r0, "".join(self.bridge))
        f = Follow("--until-idle", "1.5", ranks)
        self.assertTrue(f.wait_for("verdict cp-silently-off"), f.lines)
        # A rank file that appears later.
        append(os.path.join(ranks, "rank_1.log"), "[rank1]: " + OOM.replace("\n", "\n[rank1]: ").rstrip("[rank1]: "))
        self.assertTrue(f.wait_for("failure cuda-oom rank 1"), f.lines)
        # Rotation: the file is renamed away and a new one takes its name.
        os.rename(r0, os.path.join(self.dir, "rank_0.log.1"))
        append(r0, "slurmstepd: error: *** JOB 42 ON node1 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***\n")
        self.assertTrue(f.wait_for("failure slurm-time-limit"), f.lines)
        # Truncation in place, then new text.
        with open(r0, "w", encoding="utf-8") as t:
            t.write("")
        time.sleep(0.2)
        append(r0, "[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: "
                   "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1800000)\n")
        self.assertTrue(f.wait_for("failure nccl-timeout rank 0"), f.lines)
        self.assertEqual(f.finish(), 1, f.lines)  # idle: the final report; failures -> exit 1
        self.assertTrue(any(line.startswith("verdict:") for line in f.lines), f.lines)

    def test_pipes_and_named_fifos_are_followed_as_streams(self):
        # `--follow --exit-on failure <(kubectl logs -f ...) || scancel` read nothing and exited 0 (issue 54, item 7).
        # A pipe, as <(cmd) gives one: the failure stops the follow with exit 6 while the writer still runs.
        writer = subprocess.Popen(["bash", "-c", 'cat "$0"; printf "%s" "$1"; sleep 30', BRIDGE, OOM],
                                  stdout=subprocess.PIPE)
        try:
            fd = writer.stdout.fileno()
            f = Follow("--exit-on", "failure", "/dev/fd/%d" % fd, pass_fds=(fd,))
            self.assertEqual(f.finish(), 6, f.lines)
            self.assertIsNone(writer.poll())  # stopped on the failure, not on the writer's end
            self.assertTrue(any("cuda-oom" in line for line in f.lines), f.lines)
        finally:
            writer.kill()
            writer.wait()
        # A named FIFO whose writer comes later and then closes: read as it comes, until idle.
        fifo = os.path.join(self.dir, "job.fifo")
        os.mkfifo(fifo)
        f = Follow("--until-idle", "1.5", fifo)
        time.sleep(0.3)
        with open(fifo, "w", encoding="utf-8") as w:
            w.write("".join(self.bridge) + OOM)
        self.assertTrue(f.wait_for("failure cuda-oom"), f.lines)
        self.assertEqual(f.finish(), 1, f.lines)
        self.assertTrue(any("job.fifo" in line for line in f.lines), f.lines)

    def test_usage_errors(self):
        cmd = [HCP, "logscan"] if os.path.basename(HCP) == "hcp" else [HCP]
        r = subprocess.run([*cmd, "--exit-on", "failure", BRIDGE], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        r = subprocess.run([*cmd, "--follow", "--exit-on", "nonsense", BRIDGE], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("nonsense", r.stderr)


if __name__ == "__main__":
    HCP = sys.argv.pop(1)
    unittest.main()

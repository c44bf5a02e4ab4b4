import errno
import gzip
import pathlib
import unittest

import hcp

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "tests" / "logscan" / "fixtures"


class LogscanTest(unittest.TestCase):
    def test_scan_paths(self):
        report = hcp.scan_logs(FIXTURES / "megatron_hcp_active.log")
        self.assertEqual(report.verdict, "hcp-active")
        d = report.to_dict()
        self.assertTrue(d["step_completed"])
        self.assertEqual(d["intent"]["hcp_sizes"]["value"], [2, 2])
        self.assertEqual(d["progress"]["last_iteration"], 200)
        self.assertIn("verdict:   hcp-active", report.render("text"))

    def test_streaming_compressed_bytes(self):
        data = gzip.compress((FIXTURES / "bridge_issue_2667.log").read_bytes())
        scanner = hcp.LogScanner()
        scanner.begin_input("bridge.log.gz")
        for i in range(0, len(data), 100):
            scanner.feed(data[i:i + 100])
        report = scanner.finish()
        self.assertEqual(report.verdict, "cp-silently-off")
        self.assertEqual(report.to_dict()["files"][0]["compression"], "gzip")
        with self.assertRaises(hcp.InvalidArgumentError):
            scanner.feed(b"more")

    def test_live_events_as_lines_arrive(self):
        scanner = hcp.LogScanner()
        scanner.begin_input("train.log")
        self.assertEqual(scanner.poll(), [])
        lines = (FIXTURES / "bridge_issue_2667.log").read_bytes().splitlines(keepends=True)
        scanner.feed(b"".join(lines[:4]))  # the config up to cp_comm_type: not settled yet
        self.assertEqual([e for e in scanner.poll() if e["event"] == "verdict"], [])
        scanner.feed(b"".join(lines[4:]))
        scanner.feed(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
        events = scanner.poll()
        self.assertEqual([(e["event"], e["name"]) for e in events],
                         [("failure", "cuda-oom"), ("verdict", "cp-silently-off")])
        self.assertEqual(events[0]["file"], "train.log")
        self.assertEqual(scanner.poll(), [])  # nothing new
        self.assertEqual(scanner.finish().verdict, "cp-silently-off")

    def test_one_scanner_fed_from_eight_threads(self):
        # The C scanner is one thread at a time; the Python object serialises its calls (issue 54, item 4: this
        # crashed with a double free). Without the lock this run crashed about one time in three.
        import threading
        scanner = hcp.LogScanner()
        scanner.feed(b"[hcp] rank 0: created HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=[2,2] L0=[0,1] L1=[0,2]\n")
        line = (b" [2026-01-01 00:00:00] iteration        1/    1000 | consumed samples: 8 | elapsed time per "
                b"iteration (ms): 1000.0 | learning rate: 1.0E-04 | global batch size:     8 | lm loss: 2.0E+00 |\n")
        errors = []

        def worker():
            try:
                for _ in range(400):
                    scanner.feed(line)
                    scanner.poll()
            except Exception as exc:  # pragma: no cover - the assertion below reports it
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        report = scanner.finish()
        self.assertEqual(report.verdict, "hcp-active")
        scanner.close()

    def test_gpu_option_and_directories(self):
        self.assertEqual(hcp.scan_logs([FIXTURES / "flat_cp_slurm.log"], gpu="a100").verdict, "cp-silently-off")
        self.assertEqual(hcp.scan_logs(FIXTURES / "per_rank_runtime").verdict, "hcp-active")
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.scan_logs([])
        # A missing path is an error, as in the CLI (exit 2), not an "unknown" verdict over nothing read.
        with self.assertRaises(OSError) as caught:  # an OSError, as Python's own file functions raise
            hcp.scan_logs("/nonexistent/job.log")
        self.assertIsInstance(caught.exception, FileNotFoundError)
        self.assertIsInstance(caught.exception, hcp.HcpIOError)
        self.assertEqual(caught.exception.errno, errno.ENOENT)
        self.assertIn("/nonexistent/job.log: no such file", str(caught.exception))
        with self.assertRaisesRegex(hcp.HcpIOError, "/nonexistent/job.log: no such file"):
            hcp.scan_logs(["/nonexistent/job.log", FIXTURES / "no_cp.log"])
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.scan_logs(FIXTURES / "no_cp.log").render("xml")
        # A GPU hcp has no peak for would silently turn the peak check off: refused (issue 54, item 9).
        with self.assertRaisesRegex(hcp.InvalidArgumentError, "unknown GPU model 'nope'"):
            hcp.LogScanner(gpu="nope")
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.scan_logs([FIXTURES / "flat_cp_slurm.log"], gpu="h10")


if __name__ == "__main__":
    unittest.main()

"""hcp.plan and the pictures and pages over the C ABI (0.7)."""

import os
import unittest

import hcp


class PlanTest(unittest.TestCase):
    def test_ranks_with_reasons(self):
        r = hcp.plan(model="llama3-70b", seq=131072, nodes=16, gpu="h100", te_version="2.4.0", full_recompute=True)
        self.assertEqual(r["ranked"][0]["layout"]["describe"], "tp 2, pp 4, cp 16 p2p")
        self.assertTrue(r["ranked"][0]["estimate"]["fits"])
        self.assertIn("wins", r["verdict"])
        self.assertIn("HCP009", {e["code"] for x in r["rejected"] for e in x["errors"]})
        text = hcp.plan("text", 3, model="llama3-70b", seq=131072, nodes=16, gpu="h100", full_recompute=True)
        self.assertIn("verdict: ", text)
        page = hcp.plan("html", 5, model="llama3-8b", seq=1 << 20, nodes=64, gpu="h200")
        self.assertTrue(page.startswith("<!DOCTYPE html>"))

    def test_values_that_do_not_fit_are_refused(self):
        # ctypes wrapped 2**64 + 32 to 32 layers and planned for them; the library refuses INT64_MAX layers and
        # head dims that overflow its products; top must be positive (issue 54, item 12).
        base = dict(hidden=1024, ffn_hidden=4096, heads=8, kv_heads=2, seq=8192, nodes=1, gpu="h100")
        with self.assertRaisesRegex(hcp.InvalidArgumentError, "layers = 18446744073709551648 does not fit"):
            hcp.plan(layers=2**64 + 32, **base)
        with self.assertRaisesRegex(hcp.InvalidArgumentError, "beyond what the plan models"):
            hcp.plan(layers=2**63 - 1, **base)
        with self.assertRaisesRegex(hcp.InvalidArgumentError, "beyond what the plan models"):
            hcp.plan(layers=4, **{**base, "heads": 8}, head_dim=2**63 - 1)
        with self.assertRaisesRegex(hcp.InvalidArgumentError, "top must be a positive integer"):
            hcp.plan(top=-1, layers=4, **base)
        with self.assertRaisesRegex(hcp.InvalidArgumentError, "must be an integer"):
            hcp.plan(layers="4", **base)

    def test_custom_shapes_and_errors(self):
        r = hcp.plan(layers=4, hidden=1024, ffn_hidden=4096, heads=8, kv_heads=2, seq=8192, nodes=2,
                     gpus_per_node=4, tp=2, pp=1, peak_tflops=100, memory_gib=40, nvlink_gbs=100, network_gbs=10)
        self.assertEqual(r["cluster"]["gpu"]["name"], "custom")
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.plan(model="llama3-70b", nodes=16, gpu="h100")  # no seq
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.plan(model="llama3-70b", seq=4096, nodes=1, gpu="h900")
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.plan(model="llama3-70b", seq=4096, nodes=1, gpu="h100", colour="red")


class PicturesTest(unittest.TestCase):
    def test_topology_svg(self):
        with hcp.Topology(32, tp=2, cp=8, hcp_sizes=[4, 2]) as t:
            svg = t.to_svg()
        self.assertEqual(svg.count('class="ring '), 16)
        self.assertEqual(svg.count('class="a2a '), 8)

    def test_logscan_html_charts(self):
        log = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "logscan", "realworld", "logs",
                           "009_megatron_2023_tp4_completed.log")
        page = hcp.scan_logs(log, series=True).render("html")
        self.assertIn('data-points="20"', page)
        self.assertNotIn('data-points="20"', hcp.scan_logs(log).render("html"))


if __name__ == "__main__":
    unittest.main()

import pathlib
import re
import threading
import unittest

import hcp
from tests._fixtures import megatron_layouts

FLAT_KEYS = ["cp_groups", "tp_groups", "dp_groups", "pp_groups", "dp_cp_groups", "tp_cp_groups", "mp_groups",
             "tp_dp_cp_groups"]


class TopologyTest(unittest.TestCase):
    def test_issue_example(self):
        t = hcp.Topology(world_size=16, tp=2, cp=4, hcp_sizes=[2, 2])
        self.assertEqual(t.dp, 2)
        self.assertEqual(t.num_levels, 2)
        self.assertEqual(t.groups("cp"), [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]])
        self.assertEqual(t.group_of(5, "hcp", level=0), [5, 7])
        self.assertEqual(t.group_of(5, "hcp", level=1), [1, 5])
        self.assertEqual(t.membership(5, "hcp", level=1), (2, 1))
        self.assertEqual(t.coords(5), {"tp": 1, "cp": 2, "dp": 0, "pp": 0})
        d = t.to_dict()
        self.assertEqual(d["hcp_groups"][0], t.groups("hcp", level=0))
        self.assertEqual(d["locality"][0]["intra_node"], True)
        self.assertEqual(t.to_dict(rank=5)["groups"]["hcp"][0]["ranks"], [5, 7])

    def test_matches_megatron_fixtures(self):
        cases = megatron_layouts()
        self.assertGreaterEqual(len(cases), 10)
        for case in cases:
            with self.subTest(case={k: case[k] for k in ("world_size", "tp", "pp", "cp", "order", "hcp_sizes")}):
                t = hcp.Topology(world_size=case["world_size"], tp=case["tp"], pp=case["pp"], cp=case["cp"],
                                 order=case["order"], hcp_sizes=case["hcp_sizes"])
                for key in FLAT_KEYS:
                    self.assertEqual(t.groups(key[:-len("_groups")]), case[key], key)
                levels = [t.groups("hcp", level=k) for k in range(t.num_levels)]
                self.assertEqual(levels, case["hcp_groups"])
                d = t.to_dict()
                for key in ["dp", "hcp_sizes"] + FLAT_KEYS + ["hcp_groups"]:
                    self.assertEqual(d[key], case[key], key)

    def test_locality(self):
        t = hcp.Topology(world_size=131072, tp=8, pp=8, cp=16, hcp_sizes=[2, 8])
        loc = t.locality(level=0)
        self.assertFalse(loc["intra_node"])
        self.assertEqual(loc["groups_crossing_nodes"], 65536)
        self.assertTrue(hcp.Topology(world_size=32, tp=2, cp=8, hcp_sizes=[4, 2]).locality(0)["intra_node"])

    def test_context_manager_and_close(self):
        with hcp.Topology(world_size=4, cp=4) as t:
            self.assertEqual(t.group_size("cp"), 4)
        with self.assertRaises(hcp.InvalidArgumentError):
            t.groups("cp")

    def test_concurrent_queries(self):
        t = hcp.Topology(world_size=1024, tp=8, cp=16, hcp_sizes=[2, 8])
        errors = []

        def worker(offset):
            for r in range(offset, 1024, 4):
                if r not in t.group_of(r, "hcp", level=1):
                    errors.append(r)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])


class ErrorTest(unittest.TestCase):
    def test_invalid_config_names_the_condition(self):
        with self.assertRaises(hcp.InvalidConfigError) as cm:
            hcp.Topology(world_size=8, pp=2, cp=3)
        self.assertIn("world_size (8) is not divisible by tp * pp * cp (1 * 2 * 3 = 6)", str(cm.exception))
        self.assertEqual(cm.exception.status, 2)
        with self.assertRaises(hcp.InvalidConfigError) as cm:
            hcp.Topology(world_size=8, cp=8, hcp_sizes=[2, 2])
        self.assertIn("(=4) must equal context-parallel size (=8)", str(cm.exception))
        with self.assertRaises(hcp.InvalidConfigError):
            hcp.Topology(world_size=16, pp=2, cp=2, order="tp-cp-ep-pp-dp")
        with self.assertRaises(hcp.InvalidConfigError):
            hcp.Topology(world_size=8, cp=2, ep=2)

    def test_one_class_per_status(self):
        with self.assertRaises(hcp.NotFoundError):
            hcp.Topology(world_size=4, cp=4).groups("hcp")
        t = hcp.Topology(world_size=4, cp=4, hcp_sizes=[2, 2])
        with self.assertRaises(hcp.InvalidArgumentError) as cm:
            t.group_of(4, "cp")
        self.assertIn("rank 4 out of range [0, 4)", str(cm.exception))
        with self.assertRaises(hcp.InvalidArgumentError):
            t.groups("hcp", level=2)
        with self.assertRaises(hcp.InvalidArgumentError):
            t.groups("nope")
        self.assertTrue(issubclass(hcp.InvalidConfigError, hcp.HcpError))
        self.assertTrue(issubclass(hcp.HcpTimeoutError, TimeoutError))

    def test_python_values_that_do_not_fit(self):
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.Topology(world_size=2 ** 64, cp=1)
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.Topology(world_size="8")
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.Topology(world_size=8, order="dp-first")
        with self.assertRaises(hcp.InvalidConfigError):
            hcp.Topology(world_size=2 ** 62, tp=2 ** 62, cp=1)

    def test_version(self):
        # The package's version is the project's: the three numbers of hcp.h, which CMake's project() reads too.
        header = (pathlib.Path(__file__).resolve().parents[3] / "capi" / "include" / "hcp" / "hcp.h").read_text()
        parts = [re.search(rf"#define HCP_VERSION_{p} (\d+)", header).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
        self.assertEqual(hcp.__version__, ".".join(parts))


if __name__ == "__main__":
    unittest.main()

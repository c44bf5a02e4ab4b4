import os
import pathlib
import tempfile
import unittest

import hcp

ROOT = pathlib.Path(__file__).resolve().parents[3]
SILENTLY_OFF = '[model]\ncontext_parallel_size = 4\ncp_comm_type = "a2a+p2p"\n'


class LintTest(unittest.TestCase):
    def test_text_gives_diagnostics(self):
        diags = hcp.lint(SILENTLY_OFF, name="cfg.toml", te_version="2.4.0")
        first = [d for d in diags if d.code == "HCP001"][0]
        self.assertEqual((first.severity, first.file, first.line, first.col), ("error", "cfg.toml", 3, 1))
        self.assertIn("silently", first.message)
        self.assertTrue(str(first).startswith("cfg.toml:3:1: error[HCP001]:"))

    def test_file_and_options(self):
        path = ROOT / "examples" / "configs" / "good" / "hcp_bridge.toml"
        self.assertEqual([d for d in hcp.lint(str(path)) if d.severity != "info"], [])
        diags = hcp.lint(path, overrides=["model.hierarchical_context_parallel_sizes=[2,2]"], select=["HCP002"])
        self.assertEqual([d.code for d in diags], ["HCP002"])
        diags = hcp.lint(SILENTLY_OFF, name="x.toml", severity={"HCP001": "warning"}, select="HCP001")
        self.assertEqual([d.severity for d in diags], ["warning"])

    def test_yaml_text_and_megatron_flags(self):
        diags = hcp.lint("model:\n  context_parallel_size: 2\n  cp_comm_type: allgather\n", name="o.yaml")
        self.assertIn("HCP012", [d.code for d in diags])
        diags = hcp.lint("--context-parallel-size 4 --cp-comm-type a2a+p2p\n", input_format="megatron")
        self.assertIn("HCP001", [d.code for d in diags])

    def test_python_config(self):
        guide = ("cfg.model.context_parallel_size = 4\ncfg.model.cp_comm_type = \"a2a+p2p\"\n"
                 "cfg.model.hierarchical_context_parallel_sizes = [2, 2]\n")
        self.assertEqual([d for d in hcp.lint(guide, name="recipe.py") if d.severity != "info"], [])
        without = guide.rsplit("cfg.model.hier", 1)[0]
        diags = hcp.lint(without, input_format="python")
        self.assertEqual([(d.code, d.line) for d in diags if d.severity != "info"], [("HCP001", 2)])

    def test_render(self):
        report = hcp.lint_report(SILENTLY_OFF, name="cfg.toml")
        self.assertIn('"code": "HCP001"', report.render("json"))
        self.assertIn('"version": "2.1.0"', report.render("sarif"))
        self.assertIn("::error file=cfg.toml,line=3,col=1", report.render("github"))
        with self.assertRaises(hcp.InvalidArgumentError):
            report.render("xml")
        report.close()

    def test_errors(self):
        with self.assertRaises(hcp.HcpIOError):
            hcp.lint(pathlib.Path("/no/such/file.toml"))
        with self.assertRaises(hcp.ParseError) as cm:
            hcp.lint("[model\n", name="bad.toml")
        self.assertIn("bad.toml:1:", str(cm.exception))
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.lint(SILENTLY_OFF, select="HCP999")
        with self.assertRaises(hcp.InvalidArgumentError):
            hcp.lint(SILENTLY_OFF, gpus_per_node=-1)

    def test_directory_path_is_an_io_error(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(hcp.HcpIOError):
                hcp.lint(pathlib.Path(d))


if __name__ == "__main__":
    unittest.main()

"""hcp.check on live configurations (an args namespace, a dataclass like TransformerConfig, a ConfigContainer-like
object, a framework's dict), and hcp.lint's path/text distinction."""
import argparse
import dataclasses
import json
import os
import subprocess
import tempfile
import unittest

import hcp


@dataclasses.dataclass
class FakeTransformerConfig:  # the field names of Megatron-Core's TransformerConfig / ModelParallelConfig
    tensor_model_parallel_size: int = 1
    context_parallel_size: int = 1
    cp_comm_type: object = None
    hierarchical_context_parallel_sizes: object = None
    num_attention_heads: int = 32
    num_query_groups: object = None
    init_method: object = print  # not a setting: ignored


class Section:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class CheckTest(unittest.TestCase):
    def test_args_namespace_with_hierarchical_cp_silently_off(self):
        args = argparse.Namespace(context_parallel_size=4, cp_comm_type=["a2a+p2p"], tensor_model_parallel_size=2,
                                  hierarchical_context_parallel_sizes=None, seq_length=8192, world_size=16,
                                  num_attention_heads=32, lr=1e-4, data_path=["x"], tokenizer_type="GPT2BPE")
        codes = [d.code for d in hcp.check(args) if d.severity == "error"]
        self.assertEqual(codes, ["HCP001"])
        with self.assertRaises(hcp.InvalidConfigError) as raised:
            hcp.check(args, raise_on_error=True)
        self.assertIn("HCP001", str(raised.exception))
        args.hierarchical_context_parallel_sizes = [2, 2]
        self.assertEqual([d for d in hcp.check(args, te_version="2.4.0") if d.severity != "info"], [])

    def test_transformer_config_dataclass_and_world_size(self):
        cfg = FakeTransformerConfig(tensor_model_parallel_size=4, context_parallel_size=4, cp_comm_type="p2p")
        self.assertEqual([d for d in hcp.check(cfg, world_size=16) if d.severity == "error"], [])
        # 16 GPUs with tp 4 x cp 8 = 32: the world size is not divisible.
        cfg.context_parallel_size = 8
        self.assertIn("HCP010", [d.code for d in hcp.check(cfg, world_size=16)])

    def test_config_container_sections_and_framework_dict(self):
        container = Section(model=Section(context_parallel_size=2, cp_comm_type="a2a+p2p",
                                          hierarchical_context_parallel_sizes=[2, 2], num_attention_heads=8),
                            dist=Section(use_decentralized_pg=False), dataset=Section(seq_length=4096))
        self.assertEqual([d.code for d in hcp.check(container, te_version="2.4.0") if d.severity != "info"],
                         ["HCP002"])  # 2 x 2 != context_parallel_size 2
        verl = {"tensor_model_parallel_size": 2, "context_parallel_size": 2, "pipeline_model_parallel_size": 1,
                "override_transformer_config": {"recompute_granularity": "full"}}
        self.assertEqual([d for d in hcp.check(verl, world_size=8) if d.severity != "info"], [])

    def test_unreadable_object_is_a_clear_error(self):
        with self.assertRaises(hcp.InvalidConfigError):
            hcp.check(42)

    def test_facts_json_on_the_command_line_agrees(self):
        cli = os.environ.get("HCP_CLI")
        if not cli:
            self.skipTest("HCP_CLI not set")
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"context_parallel_size": 4, "cp_comm_type": "a2a+p2p", "world_size": 8}, f)
        try:
            r = subprocess.run([cli, "lint", "--facts-json", f.name, "--format", "json"], capture_output=True,
                               text=True)
        finally:
            os.unlink(f.name)
        self.assertEqual(r.returncode, 1, r.stderr)
        codes = [d["code"] for u in json.loads(r.stdout)["inputs"] for d in u["diagnostics"]]
        self.assertIn("HCP001", codes)


class PathOrTextTest(unittest.TestCase):
    def test_a_mistyped_path_is_an_error_not_config_text(self):
        with self.assertRaises(hcp.HcpIOError) as raised:
            hcp.lint("typo.toml")
        self.assertIn("hcp.lint_text", str(raised.exception))
        # Overrides, JSON and several lines are config text; lint_text takes anything as text.
        self.assertIn("HCP001", [d.code for d in hcp.lint("model.cp_comm_type=a2a+p2p")])
        with self.assertRaises(hcp.ParseError):  # lint_text reads it as the TOML it is not
            hcp.lint_text("typo.toml", name="x.toml")


if __name__ == "__main__":
    unittest.main()

"""text, github and sarif report the same findings at the same severities (issue 51, item 6).

Each output is parsed back into (file, line, col, code, severity) and the three sets compared, with and without
--show-info, over every example config and the lint fixtures of every rule. JSON keeps every finding whatever
--show-info says; it is compared with --show-info.

Environment: HCP_CLI, the hcp binary (ctest sets it).
"""
import json
import os
import re
import subprocess
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HCP = os.environ.get("HCP_CLI")
INPUTS = ["examples/configs", "tests/lint/fixtures"]

TEXT = re.compile(r"^(\S+?):(\d+):(\d+): (error|warning|info)\[(HCP\d+)\]: ", re.M)
GITHUB = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),title=(HCP\d+) ", re.M)
GITHUB_LEVEL = {"error": "error", "warning": "warning", "notice": "info"}
SARIF_LEVEL = {"error": "error", "warning": "warning", "note": "info"}


def lint(fmt, *extra):
    r = subprocess.run([HCP, "lint", "--no-config", "--format", fmt, *extra, *INPUTS], cwd=ROOT,
                       capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=300)
    if r.returncode not in (0, 1):
        raise AssertionError(f"--format {fmt} exited {r.returncode}: {r.stderr}")
    return r.stdout


def from_text(out):
    return {(f, int(l), int(c), code, sev) for f, l, c, sev, code in TEXT.findall(out)}


def from_github(out):
    return {(f, int(l), int(c), code, GITHUB_LEVEL[lvl]) for lvl, f, l, c, code in GITHUB.findall(out)}


def from_sarif(out):
    found = set()
    for result in json.loads(out)["runs"][0]["results"]:
        loc = result["locations"][0]["physicalLocation"]
        region = loc.get("region", {})
        found.add((loc["artifactLocation"]["uri"], region.get("startLine", 0), region.get("startColumn", 0),
                   result["ruleId"], SARIF_LEVEL[result["level"]]))
    return found


def from_json(out):
    return {(d["file"], d["line"], d["col"], d["code"], d["severity"])
            for unit in json.loads(out)["inputs"] for d in unit["diagnostics"]}


@unittest.skipUnless(HCP, "HCP_CLI is not set")
class OutputParity(unittest.TestCase):
    def check(self, *extra):
        text = from_text(lint("text", *extra))
        self.assertTrue(any(sev == "error" for *_, sev in text), "the inputs must hold errors to compare")
        self.assertEqual(from_github(lint("github", *extra)), text)
        self.assertEqual(from_sarif(lint("sarif", *extra)), text)
        return text

    def test_default_hides_infos_everywhere(self):
        self.assertFalse(any(sev == "info" for *_, sev in self.check()))

    def test_show_info_shows_them_everywhere(self):
        text = self.check("--show-info")
        self.assertTrue(any(sev == "info" for *_, sev in text))
        self.assertEqual(from_json(lint("json")), text)

    def test_sarif_keeps_identifiers_case(self):
        messages = [r["message"]["text"] for r in json.loads(lint("sarif"))["runs"][0]["results"]]
        self.assertTrue(any(m.startswith("cp_comm_type") for m in messages), messages[:5])
        self.assertFalse(any(re.match(r"[A-Z][a-z]+_[a-z]", m) for m in messages))


if __name__ == "__main__":
    unittest.main()

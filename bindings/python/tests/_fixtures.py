"""The repository's reference fixtures (tests/fixtures: layouts computed with Megatron's own code)."""

import json
import pathlib

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "tests" / "fixtures"


def megatron_layouts():
    with open(FIXTURES / "megatron_layouts.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]

"""Locates ../shared (reference data computed with Megatron's own code)."""

import json
import os
import pathlib


def shared_dir():
    env = os.environ.get("HCP_SHARED_DIR")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(__file__).resolve().parents[3].parent / "shared"


def megatron_layouts():
    path = shared_dir() / "fixtures" / "megatron_layouts.jsonl"
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]

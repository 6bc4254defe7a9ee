"""A packaged suite's plan over its datasets' packaged samples, and a cell's trace, for tests that run
a suite's cells on scripted models (the role-model suites: sculpt-components, decomp-commaqa-scale)."""

from __future__ import annotations

import json
from pathlib import Path

from thoughtloom.eval.reproduce import run as runs
from thoughtloom.eval.reproduce import suites


def sample_plan(suite: str, out: Path, n: int = 2):
    """(plan, slices) of ``suite`` at ``n``, each dataset read from its task's packaged sample."""
    plan = runs.make_plan(suites.load(suite), out, n=n)
    slices, missing = runs.load_slices(plan, None)
    assert not missing
    return plan, slices


def trace_events(folder: Path) -> list[dict]:
    """The events of a cell folder's trace.jsonl."""
    return [json.loads(x) for x in (folder / "trace.jsonl").read_text().splitlines()]

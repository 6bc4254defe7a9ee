"""Scripted evals over several strategies whose ``results.jsonl`` is known byte for byte.

``tests/eval/data/records/<name>.jsonl`` holds each run's results file as
the runner wrote it with records assembled as dicts (made by running this
module, ``python tests/support/record_runs.py tests/eval/data/records``, at
commit d4246b9, before :class:`thoughtloom.eval.record.EvalRecord`; ``hgot.jsonl`` remade
by the same command for issue 36, whose HGOT changes alter only its token counts and
passage scores (no hints in the second Infer, 1/rank retrieval scores) and add the passages
the root's answer was inferred from (``details["context"]``); ``decomp.jsonl`` and
``decomp-budget.jsonl`` remade for issue 37, whose letter handler demos (``split``, ``merge``)
change only prompt token counts and which adds ``details["resampled"]``, the sampled re-asks;
``cot-sc.jsonl`` and ``cot-sc-trimmed.jsonl`` remade for issue 42, whose anytime recorder no longer
votes the whole batch a second time inside it: fewer clock readings, so only ``latency_s`` differs;
all remade for issue 38, which appends ``example_sha256`` to every record and changes nothing else);
``tests/eval/test_record.py`` runs them again and compares the bytes. Wall-clock figures (``latency_s``,
``usage.latency_s``) come from :func:`steady_clock`, a ``perf_counter`` that
advances by a fixed step per call, so they are the same on every machine.

The runs cover every way the runner assembles a record: answered (io, cot,
cot-sc, the tree search, HGOT, DecomP), unanswered (an unreadable reply),
an error inside the example (the model raised), a batch trimmed to the
budget, a budget stop (``stopped: "budget"``), and ``meta``/``details`` of
each strategy.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from pathlib import Path
from typing import Callable, Iterator
from unittest import mock

from thoughtloom import strategies, tasks
from thoughtloom.core.types import Problem
from thoughtloom.eval.runner import EvalResources, EvalSettings, evaluate
from thoughtloom.lm.meter import Budget
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

from support.view_runs import decomp_reply, decomp_run, hgot_run, sampling_run, tree_run

#: Seconds the fake clock advances per reading: a binary fraction, so sums and rounding are exact.
STEP_S = 0.015625
GOLDEN = Path(__file__).resolve().parents[1] / "eval" / "data" / "records"


@contextlib.contextmanager
def steady_clock() -> Iterator[None]:
    """``time.perf_counter`` as a clock that advances by :data:`STEP_S` at each reading."""
    ticks = itertools.count()
    with mock.patch("time.perf_counter", lambda: next(ticks) * STEP_S):
        yield


def mixed_run(out: Path) -> Path:
    """io on gsm8k: one answer, one reply the task cannot read, one call that raises (an error record)."""

    def reply(req):
        question = req.messages[-1].content
        if "boom" in question:
            raise ValueError("the scripted model refuses this one")
        if "unreadable" in question:
            return "I would rather not say."
        return "The answer is: 6"

    examples = [Example(Problem("gsm8k-ok", "What is 2 + 4?", meta={"stratum": "short"}), "6"),
                Example(Problem("gsm8k-unreadable", "What is 3 + 3? (unreadable)"), "6"),
                Example(Problem("gsm8k-boom", "What is 1 + 5? (boom)"), "6")]
    asyncio.run(evaluate(strategies.build("io"), tasks.get("gsm8k"), examples, EvalResources(ScriptedLM(reply)),
                         out, settings=EvalSettings(seed=0)))
    return out


def trimmed_run(out: Path) -> Path:
    """cot-sc with 3 samples under a 2-call budget: its one batch trimmed to the budget."""
    examples = [Example(Problem(f"gsm8k-{i}", f"What is {i} + {6 - i}?"), "6") for i in range(2)]
    settings = EvalSettings(seed=0, budget=Budget(max_calls=2))
    cls = strategies.get("cot-sc")
    asyncio.run(evaluate(cls(strategies.make_config(cls, {"n": "3"})), tasks.get("gsm8k"), examples,
                         EvalResources(ScriptedLM(lambda r: "Thinking.\nThe answer is: 6")), out, settings=settings))
    return out


def budget_run(out: Path) -> Path:
    """DecomP under a 3-call budget: the program stops, ``stopped: "budget"`` and a budget step problem."""
    examples = [Example(Problem("letter_cat-a", 'Take the letters at position 2 of the words in "Ada Byron Lee" '
                                                "and concatenate them using a space.", meta={"n": 3, "sep": "space"}),
                        "d y e")]
    cls = strategies.get("decomp")
    asyncio.run(evaluate(cls(strategies.make_config(cls, {"decomposer": "reference"})), tasks.get("letter_cat"),
                         examples, EvalResources(ScriptedLM(decomp_reply)), out,
                         settings=EvalSettings(seed=0, budget=Budget(max_calls=3))))
    return out


#: name -> what makes the run folder (each in a folder of its own)
RUNS: dict[str, Callable[[Path], Path]] = {
    "cot-sc": lambda out: sampling_run(out, "cot-sc"),
    "cot": lambda out: sampling_run(out, "cot", n_examples=2),
    "sculpt-mcts": tree_run,
    "hgot": hgot_run,
    "decomp": decomp_run,
    "io-mixed": mixed_run,
    "cot-sc-trimmed": trimmed_run,
    "decomp-budget": budget_run,
}


def make_run(name: str, root: Path) -> Path:
    """The run ``name`` in ``root/name`` on the steady clock; returns its results file."""
    with steady_clock():
        folder = RUNS[name](root / name)
    return folder / "results.jsonl"


if __name__ == "__main__":  # python tests/support/record_runs.py DEST (with tests/ on PYTHONPATH)
    import sys
    import tempfile

    dest = Path(sys.argv[1])
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for run_name in RUNS:
            (dest / f"{run_name}.jsonl").write_bytes(make_run(run_name, Path(tmp)).read_bytes())

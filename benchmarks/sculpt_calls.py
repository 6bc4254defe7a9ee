"""Model calls per method of the sculpt-game24 suite, offline, with a scripted model.

    python benchmarks/sculpt_calls.py [--puzzle "4 9 10 13"]

Each method of the packaged ``sculpt-game24`` suite runs with the suite's
settings on one puzzle against a ScriptedLM that never solves it (every
candidate scores 5/10, every proposal and rewrite is a new partial
expression), once without a budget (what the method's own settings cost)
and once under the suite's per-puzzle budget. It prints a Markdown table of
calls and of the batch sizes, the cost side of the suite's comparison
before any model is loaded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re

from thoughtloom.core.errors import BudgetExceeded
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem, Request
from thoughtloom.eval.reproduce import suites
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.context import Context
from thoughtloom.tasks import get as get_task
from thoughtloom.testing import ScriptedLM


def reply(req: Request) -> str:
    text = req.messages[-1].content
    if "JSON object" in text:
        return json.dumps({"score": 5, "feedback": "not 24 yet"})
    current = re.search(r"Current solution:\nExpression: (.*)", text)
    parent = current.group(1).strip() if current else ""
    parent = "" if parent == "(empty)" else parent

    def child(i: int) -> str:
        return f"({parent}) + {i}" if parent else f"13 - {i}"

    wanted = re.search(r"Propose (\d+)", text)
    if wanted:  # ToT's proposal prompt: one thought per line
        return "\n".join(f"Expression: {child(i)}" for i in range(1, int(wanted.group(1)) + 1))
    if "Question:" in text:  # cot, cot-sc
        return f"The answer is: 13 - {req.sample_index % 9 + 1}"
    return f"Expression: {child(req.sample_index % 9 + 1)}"


async def calls(method: suites.MethodSpec, puzzle: str, cap: int | None) -> tuple[int, list[int]]:
    lm = ScriptedLM(reply)
    trace = Trace()
    ctx = Context(lm=Metered(lm, budget=Budget(max_calls=cap), trace=trace), task=get_task("game24"),
                  trace=trace, seed=0)
    try:
        await method.build().run(Problem("game24-x", puzzle), ctx)
    except BudgetExceeded:
        pass
    return len(lm.requests), [len(b) for b in lm.batches]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puzzle", default="4 9 10 13")
    args = parser.parse_args()
    suite = suites.load("sculpt-game24")
    cap = suite.budget.max_calls
    print(f"| method | calls, no budget | calls, budget {cap} | batch sizes (no budget) |")
    print("|---|---|---|---|")
    for method in suite.methods:
        free, batches = await calls(method, args.puzzle, None)
        capped, _ = await calls(method, args.puzzle, cap)
        shown = ", ".join(map(str, batches[:10])) + (", ..." if len(batches) > 10 else "")
        print(f"| {method.id} | {free} | {capped} | {shown} |")


if __name__ == "__main__":
    asyncio.run(main())

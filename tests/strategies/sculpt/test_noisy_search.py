"""Search behaviour on a simulated model with known noise (a test tool, not a result).

Game of 24 with an oracle proposer that writes a correct expression with
probability p (otherwise a random wrong one) and an evaluator that tells
the truth 90% of the time. The searches should turn a small p into a high
success rate, and success should grow with p.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from fractions import Fraction

import pytest

from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem
from thoughtloom.lm.meter import Metered
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.sculpt.dfs import SculptDFSBacktrack
from thoughtloom.strategies.sculpt.mcts import MCTSConfig, SculptMCTS
from thoughtloom.strategies.treesearch.dfs import DFSConfig
from thoughtloom.tasks import get
from thoughtloom.tasks.arith import check_24
from thoughtloom.testing import ScriptedLM

PUZZLES = ["4 9 10 13", "1 1 4 6", "2 3 4 6", "1 5 5 5", "3 3 8 8", "2 2 6 6", "1 2 3 4", "5 5 5 9",
           "1 3 4 6", "2 4 6 8", "3 4 5 6", "1 1 11 11", "2 5 7 9", "3 7 9 13", "1 6 11 13", "4 4 10 10",
           "2 3 5 12", "6 6 8 12", "1 4 7 8", "3 5 7 13"]


def solve(nums):
    """One solution expression by brute force (exact fractions)."""
    items = [(Fraction(n), str(n)) for n in nums]

    def rec(items):
        if len(items) == 1:
            return items[0][1] if items[0][0] == 24 else None
        for i, j in itertools.permutations(range(len(items)), 2):
            (a, ea), (b, eb) = items[i], items[j]
            rest = [items[k] for k in range(len(items)) if k not in (i, j)]
            options = [(a + b, f"({ea} + {eb})"), (a - b, f"({ea} - {eb})"), (a * b, f"({ea} * {eb})")]
            if b != 0:
                options.append((a / b, f"({ea} / {eb})"))
            for value in options:
                found = rec(rest + [value])
                if found:
                    return found
        return None

    return rec(items)


def _rng(req) -> random.Random:
    key = f"{req.messages[-1].content}|{req.sample_index}|{len(req.messages)}"
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def oracle(p: float, truthful: float = 0.9):
    def brain(req):
        text = req.messages[0].content
        nums = [int(n) for n in re.search(r"Numbers: ([\d ]+)", text).group(1).split()]
        rng = _rng(req)
        if "JSON object" in text:
            expr = text.split("Current solution:\nExpression: ", 1)[1].split("\n", 1)[0]
            ok = check_24(expr, nums)[0]
            if rng.random() > truthful:
                ok = not ok  # the evaluator is wrong this time
            score = 10 if ok else rng.randint(1, 6)
            return json.dumps({"feedback": "looks right" if ok else "does not make 24", "score": score})
        if rng.random() < p:
            return f"Expression: {solve(nums)}"
        while True:  # a wrong expression (never a lucky hit)
            a, b, c, d = rng.sample(nums, 4)
            ops = [rng.choice("+-*") for _ in range(3)]
            wrong = f"(({a} {ops[0]} {b}) {ops[1]} {c}) {ops[2]} {d}"
            if not check_24(wrong, nums)[0]:
                return f"Expression: {wrong}"

    return brain


async def success_rate(strategy, p: float) -> float:
    task = get("game24")
    solved = 0
    for q in PUZZLES:
        trace = Trace()
        ctx = Context(lm=Metered(ScriptedLM(oracle(p)), trace=trace), task=task, trace=trace)
        result = await strategy.run(Problem(f"p-{q}", q), ctx)
        solved += task.score(result.answer, [int(n) for n in q.split()])["success"]
    return solved / len(PUZZLES)


def test_every_puzzle_has_a_solution_for_the_oracle():
    assert all(solve([int(n) for n in q.split()]) for q in PUZZLES)


@pytest.mark.parametrize("strategy", [SculptMCTS(MCTSConfig(rollouts=4)), SculptDFSBacktrack(DFSConfig(max_steps=4))],
                         ids=["mcts", "dfs"])
async def test_search_success_grows_with_proposer_accuracy(strategy):
    rates = [await success_rate(strategy, p) for p in (0.0, 0.15, 0.5, 0.8)]
    assert rates[0] == 0.0                 # nothing to find when the proposer is never right
    assert rates == sorted(rates)          # more accurate proposals, more solved puzzles
    assert rates[1] >= 0.3                 # search at least doubles a single 15% shot
    assert rates[2] >= 0.6 and rates[3] >= 0.75

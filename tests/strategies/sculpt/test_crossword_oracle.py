"""Issue 23's done-when check: a generator that always proposes a correct word solves a crossword under
the DEFAULT settings (the crosswords task's: k = 3, 20 search steps, depth 20, UCB1 c = 0.2) with MCTS and
DFS. (benchmarks/crossword_oracle.py prints the same over more puzzles, seeds and values of c.)

ThoughtSculpt §4.2: "The task is to solve a five-by-five crossword puzzle in several steps (either filling
or editing a word counts as one step)"; "we impose a constraint on all methods to utilize only 20 search
steps". A board has 10 words and a step fills one, so a correct filler needs at most 10 steps along one
path (fewer, as rows complete the columns): 20 steps must be enough, and a depth of 3 (the old global
default) can never hold the board.
"""

import json
import re

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.trace import Trace
from thoughtloom.strategies.context import Context
from thoughtloom.tasks.crosswords import SLOTS, word_at
from thoughtloom.tasks.datasets import load_examples
from thoughtloom.testing import ScriptedLM

TASK = tasks.get("crosswords")
PUZZLES = load_examples(TASK).examples[:3]


def board_in(prompt: str) -> str:
    """The 25 letters of the board a prompt shows (its five grid rows after 'Current solution:')."""
    rows = prompt.split("Current solution:\n", 1)[1].splitlines()[:5]
    return "".join(r.replace(" ", "") for r in rows)


def oracle(gold: str) -> ScriptedLM:
    """A generator that always lists the correct word of every slot not yet right (one reply per node, as
    App. A.2 asks), and an evaluator that knows no answer: 10 for each full slot, 2 for one with blanks."""
    def reply(req):
        prompt = req.messages[0].content
        board = board_in(prompt)
        if "JSON object" in prompt:
            items = [{"item": s, "feedback": "ok", "score": 2 if "_" in word_at(board, s) else 10} for s in SLOTS]
            return json.dumps({"items": items})
        todo = [s for s in SLOTS if word_at(board, s) != word_at(gold, s)] or list(SLOTS)
        return "\n".join(f"{slot}. {word_at(gold, slot)} (high)" for slot in todo)  # one list per node (A.2)
    return ScriptedLM(reply)


@pytest.mark.parametrize("example", PUZZLES, ids=lambda e: e.problem.id)
@pytest.mark.parametrize("name", ["sculpt-mcts", "sculpt-dfs"])
async def test_a_correct_word_generator_solves_the_board_at_the_default_settings(name, example):
    strategy = strategies.build(name, {}, TASK)  # nothing set: the task's settings
    assert strategy.config.k == 3 and strategy.config.max_depth == 20
    assert getattr(strategy.config, "rollouts", 20) == 20
    lm = oracle(example.gold)
    result = await strategy.run(example.problem, Context(lm=lm, task=TASK, trace=Trace()))
    assert TASK.score(result.answer, example.gold) == {"letters": 1.0, "words": 1.0, "game": 1.0}
    if name == "sculpt-mcts":
        assert result.details["rollouts_done"] <= 20
    else:  # Algorithm 2: one expansion per step, at most 20 (it ends once no slot is left to fill)
        assert result.details["descent_depth"] <= 20


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("parallel", [1, 3])
async def test_mcts_solves_it_whatever_the_seed_also_leaf_parallel(seed, parallel):
    example = PUZZLES[1]
    strategy = strategies.build("sculpt-mcts", {"parallel": parallel}, TASK)
    result = await strategy.run(example.problem, Context(lm=oracle(example.gold), task=TASK, trace=Trace(), seed=seed))
    assert TASK.score(result.answer, example.gold)["game"] == 1.0


async def test_the_old_depth_of_three_could_not_hold_the_board():
    """The same oracle at max_depth 3 (the global default before the task's settings): a path holds at
    most 3 filled words, so no rollout ever reaches a solved board."""
    example = PUZZLES[0]
    strategy = strategies.build("sculpt-mcts", {"max_depth": 3}, TASK)
    result = await strategy.run(example.problem, Context(lm=oracle(example.gold), task=TASK, trace=Trace()))
    metrics = TASK.score(result.answer, example.gold)
    assert metrics["game"] == 0.0 and metrics["words"] < 1.0
    assert sum(ch != "_" for ch in result.answer) <= 15  # three 5-letter words at most

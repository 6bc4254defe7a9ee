"""A crossword evaluator that calls every clue solved, blanks and all.

The bench model (Qwen2.5-Coder-1.5B), shown the empty board of mini-0 with the
guide "a clue with blanks is not solved yet and scores at most 5", replied
10/10 for all ten clues ("h1: The word 'agenda' fits the clue."). Self-refine
then stopped before its first round and answered the empty board, and MCTS,
which answers with its best-valued node, would have kept it too.

ThoughtSculpt §4.2: "the LM is prompted to evaluate each clue against the
filled-in letters and suggest whether it is reasonable ... asks the LM to
determine whether there are potential answers." A clue with blanks has at
best potential answers, never a filled one, so it is held to the guide's
limit (``score_limits``, a labelled symbolic check of the rubric): 5 of 10.
"""

import json

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.trace import Trace
from thoughtloom.strategies.context import Context
from thoughtloom.tasks.crosswords import BLANK_LIMIT, SLOTS, empty_board, word_at
from thoughtloom.tasks.datasets import load_examples
from thoughtloom.testing import ScriptedLM

from test_crossword_oracle import board_in

TASK = tasks.get("crosswords")
PUZZLE = load_examples(TASK).examples[0]


def flatterer(gold: str) -> ScriptedLM:
    """A generator that writes a correct word for the first slot not yet right, and an
    evaluator that scores every clue 10/10 whatever the board, as the bench model did."""
    def reply(req):
        prompt = req.messages[0].content
        if "JSON object" in prompt:
            return json.dumps({"items": [{"item": s, "feedback": "fits", "score": 10} for s in SLOTS]})
        board = board_in(prompt)
        slot = next((s for s in SLOTS if word_at(board, s) != word_at(gold, s)), SLOTS[0])
        return f"{slot}. {word_at(gold, slot)}"
    return ScriptedLM(reply)


async def run(name: str, settings: dict):
    strategy = strategies.build(name, settings, TASK)
    ctx = Context(lm=flatterer(PUZZLE.gold), task=TASK, trace=Trace())
    return await strategy.run(PUZZLE.problem, ctx), ctx


async def test_the_empty_board_is_held_to_the_guides_limit():
    """Ten clues with blanks, each held to 5/10: the root scores 0.5, one event says so."""
    result, ctx = await run("self-refine", {"iterations": 1})
    root = result.details["tree"][0]
    assert root["candidate"] == empty_board()
    assert root["score"] == pytest.approx(BLANK_LIMIT)
    assert [i["score"] for i in root["items"]] == [BLANK_LIMIT] * 10
    limited = [e for e in ctx.trace.of_type("tree_eval_limited") if e["node"] == 0]
    assert limited and limited[0]["items"] == 10


async def test_self_refine_does_not_stop_at_an_empty_board_called_solved():
    """With the limits, the flattered empty board is not "solved": self-refine runs its rounds and fills
    words. Without them (score_limits = false) it stops before round 1 with the empty board, as it did."""
    result, _ = await run("self-refine", {})
    assert TASK.score(result.answer, PUZZLE.gold)["words"] > 0
    result, _ = await run("self-refine", {"score_limits": False})
    assert result.answer == empty_board() and result.details["nodes"] == 1


@pytest.mark.parametrize("name", ["sculpt-mcts", "sculpt-dfs", "tot-dfs"])
async def test_no_search_answers_the_empty_board(name):
    """Every filled board outscores the empty one (its filled clues keep their 10), so no search
    answers with the root."""
    result, _ = await run(name, {})
    assert result.answer != empty_board()
    assert TASK.score(result.answer, PUZZLE.gold)["words"] > 0


async def test_a_full_board_is_not_limited():
    """A board with no blanks keeps the model's scores: the limits only ever lower a score."""
    assert TASK.score_limits(PUZZLE.problem, PUZZLE.gold) == [1.0] * 10
    assert TASK.score_limits(PUZZLE.problem, empty_board()) == [BLANK_LIMIT] * 10
    half = PUZZLE.gold[:5] + empty_board()[5:]  # h1 filled; every down clue still has blanks
    assert TASK.score_limits(PUZZLE.problem, half) == [1.0] + [BLANK_LIMIT] * 9


async def test_one_reply_lists_the_candidate_answers_and_the_surest_become_the_children():
    """Appendix A.2, NEW_CANDIDATE: "Given the current status of the board and the strategy, list all
    possible answers for unfilled or changed words, and your confidence levels (certain/high/medium/low)";
    §4.2: "a maximum of 3 candidates" per node. One expansion is ONE generation request; its four lines
    give the 3 surest answers as children, certain, high, medium (the low one is left out). Before, k = 3
    separate "Fill ONE word" requests each gave one line, and duplicates of one another."""
    import json as _json

    from support import search_toy as _toy
    from thoughtloom import strategies as _strategies
    from thoughtloom.core.types import Problem as _Problem
    from thoughtloom.tasks import get as _get
    from thoughtloom.tasks.crosswords import SLOTS as _SLOTS
    from thoughtloom.testing import ScriptedLM as _LM

    listing = "h1. AAAAA (low)\nh2. BBBBB (certain)\nv1. CDEFG (medium)\nh3. HIJKL (high)"

    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return _json.dumps({"items": [{"item": s, "feedback": "f", "score": 3} for s in _SLOTS]})
        return listing

    lm = _LM(brain)
    problem = _Problem(id="x", question="\n".join(f"{s}. clue {s}" for s in _SLOTS))
    task = _get("crosswords")
    result = await _strategies.build("sculpt-dfs", {"max_depth": 1}, task).run(problem, _toy.make_ctx(lm, task=task))
    generations = [r for r in lm.requests if "JSON object" not in r.messages[0].content]
    assert len(generations) == 1
    assert generations[0].max_tokens == 3 * 256  # the list holds up to k = 3 answers, each gen_max_tokens
    children = [n["candidate"] for n in result.details["tree"] if n["depth"] == 1]
    assert [c[5:10] for c in children[:1]] == ["BBBBB"]  # the certain one first
    assert children[1][10:15] == "HIJKL" and children[2][0::5] == "CDEFG"
    assert len(children) == 3
    assert all(n["score"] is not None for n in result.details["tree"])  # the 4th line never joined the tree


async def test_a_tot_proposal_with_more_lines_than_k_adds_only_k_thoughts_to_the_tree():
    """ToT keeps at most k thoughts per proposal; the lines past k must not join the tree unevaluated
    (an MCTS or DFS would otherwise select a node nobody scored)."""
    from support import search_toy as _toy
    from thoughtloom import strategies as _strategies

    lm = _toy.make_lm({}, default=5, propose=lambda cand, n: "\n".join(f"CAND: {cand}{c}" for c in "abcdefg"))
    result = await _strategies.build("tot-dfs", {"max_steps": 1, "k": 2}).run(_toy.PROBLEM, _toy.make_ctx(lm))
    tree = result.details["tree"]
    assert len(tree) == 1 + 2 and all(n["score"] is not None for n in tree)

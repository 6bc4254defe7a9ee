"""One rule for an expansion with no readable child in every tree method, and Yao et al.'s pruning.

Issue 35's probe: the first proposal is unreadable and every later one reads. Before, ``sculpt-dfs``
tried again and ran a real search while ``tot-dfs`` ended after its first expansion (2 calls, words 0).
No paper says what to do with an empty expansion (ThoughtSculpt's Algorithm 2, line 7: "Expand node x by
generating a set of children nodes X_child"); our rule, the same for all (``retry_empty``): the attempt
spends one of the method's steps and the next step expands the same node(s) again.

Pruning: Yao et al.'s crosswords DFS goes on below a state only "if the current status is possible":
none of its clues (those with at least two letters in place, fewer than 4 blanks) valued "impossible"
(princeton-nlp/tree-of-thought-llm, ``scripts/crosswords/search_crosswords-dfs.ipynb``, ``count['impossible']
< 1``; ``tasks/crosswords.py``, ``if ans.count('_') >= 4: continue``).
"""

import json
import re

import pytest

from support import search_toy as toy
from support.search_toy import current
from thoughtloom import strategies
from thoughtloom.core.types import Problem
from thoughtloom.strategies.treesearch.generator import ToTGenerator
from thoughtloom.tasks import get
from thoughtloom.tasks.crosswords import SLOTS, word_at
from thoughtloom.testing import ScriptedLM

#: Each method with a few steps (a real search is one that goes below depth 1), and how many requests
#: its first expansion sends (a ToT proposal: one; k = 3 ThoughtSculpt children: three).
FIRST_BATCH = {"tot-dfs": 1, "tot-bfs": 1, "sculpt-dfs": 3, "sculpt-dfs-backtrack": 3, "sculpt-mcts": 3,
               "self-refine": 1}
METHODS = {
    "tot-dfs": {"max_steps": 4, "max_depth": 3, "stop_at_goal": False},
    "tot-bfs": {"max_depth": 3, "beam": 1},
    "sculpt-dfs": {"max_depth": 3},
    "sculpt-dfs-backtrack": {"max_steps": 4, "max_depth": 3, "stop_at_goal": False},
    "sculpt-mcts": {"rollouts": 4, "max_depth": 3},
    "self-refine": {"iterations": 3, "stop_at_goal": False},
}


def first_generation_unreadable(name="tot-dfs"):
    """The toy model, except that the requests of its first expansion (proposal or revisions) are unreadable."""
    seen = {"n": 0}
    base = toy.make_lm({}, default=5)

    def brain(req):
        text = req.messages[0].content
        if "JSON object" not in text and ("Current solution:" in text):
            seen["n"] += 1
            if seen["n"] <= FIRST_BATCH[name]:
                return "I am not sure what to write here."
        return base._fn(req)

    return ScriptedLM(brain)


def _depth(result):
    return max(n["depth"] for n in result.details["tree"])


@pytest.mark.parametrize("name", METHODS)
async def test_every_tree_method_tries_an_empty_expansion_again_and_searches(name):
    lm = first_generation_unreadable(name)
    ctx = toy.make_ctx(lm)
    result = await strategies.build(name, METHODS[name]).run(toy.PROBLEM, ctx)
    assert result.details["empty_expansions"] == 1
    assert [(e["node"], e["retry"]) for e in ctx.trace.of_type("tree_empty")] == [(0, True)]
    assert _depth(result) >= 2, f"{name} did not search below the root's children"
    assert "stopped_early" not in result.details


@pytest.mark.parametrize("name", METHODS)
async def test_with_retry_empty_off_every_method_ends_at_its_empty_expansion(name):
    lm = first_generation_unreadable(name)
    ctx = toy.make_ctx(lm)
    result = await strategies.build(name, {**METHODS[name], "retry_empty": False}).run(toy.PROBLEM, ctx)
    assert result.details["empty_expansions"] == 1 and result.details["nodes"] == 1
    assert [e["retry"] for e in ctx.trace.of_type("tree_empty")] == [False]
    if name not in ("tot-dfs", "sculpt-dfs-backtrack"):  # a backtracking DFS just goes back up (from the root: done)
        assert "stopped_early" in result.details


async def test_tot_dfs_on_the_probe_spends_its_steps():
    """tot-dfs with 4 steps on the probe: step 1 is the empty expansion of the root, step 2 expands it
    again, steps 3 and 4 go one level deeper each (best child first): depth 3, 4 steps."""
    ctx = toy.make_ctx(first_generation_unreadable())
    result = await strategies.build("tot-dfs", METHODS["tot-dfs"]).run(toy.PROBLEM, ctx)
    assert result.details["steps_done"] == 4 and _depth(result) == 3
    assert [e["step"] for e in ctx.trace.of_type("phase") if e["phase"] == "expansion"] == [1, 2, 3, 4]


# -- Yao et al.'s pruning, on a real crossword -------------------------------------------------------

CLUES = Problem(id="mini-x", question="\n".join(f"{s}. clue {s}" for s in SLOTS))


def _board(prompt: str) -> str:
    rows = prompt.split("Current solution:\n", 1)[1].splitlines()[:5]
    return "".join(r.replace(" ", "") for r in rows)


def crossword_lm(proposals, zero=lambda word: "Z" in word):
    """ToT proposals: the lines of ``proposals``; every clue item scores 6/10, except a word for which
    ``zero`` holds (0/10, "impossible")."""
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            board = _board(text)
            return json.dumps({"items": [{"item": s, "feedback": "f", "score": 0 if zero(word_at(board, s)) else 6}
                                         for s in SLOTS]})
        if "different possible next steps" in text:
            return "\n".join(proposals)
        return "h1. ABCDE"

    return ScriptedLM(brain)


async def test_a_board_with_a_clue_judged_impossible_is_not_expanded():
    """Issue 35's board: h1 = ZZZZZ, h1 and the five down clues (Z____) scored 0. Its mean is
    (4 x 5 capped + 6 x 0) / 10 = 0.2, above the 0.1 that pruned before, but h1 (no blank) is judged
    impossible, so the board is pruned (a tree_prune event naming h1) and never expanded; the other
    board (h2 = HELLO) is explored."""
    ctx = toy.make_ctx(crossword_lm(["h1. ZZZZZ", "h2. HELLO"]), task=get("crosswords"))
    result = await strategies.build("tot-dfs", {"max_steps": 3, "max_depth": 3, "k": 2}).run(CLUES, ctx)
    tree = result.details["tree"]
    zz = next(n for n in tree if n["candidate"].startswith("ZZZZZ") and n["depth"] == 1)
    assert zz["score"] == pytest.approx(0.2)
    pruned = ctx.trace.of_type("tree_prune")
    assert zz["id"] in [e["node"] for e in pruned] and {e["item"] for e in pruned} == {"h1"}
    assert not zz["children"] and not zz["expanded"]


async def test_a_clue_with_four_blanks_does_not_judge_its_board():
    """Yao et al. value only clues with fewer than 4 blanks: after h2 = HELLO each down clue has one
    letter (4 blanks: v1 is _H___); a 0 given to each of them does not prune the board, and it is
    expanded (were every clue judged, v1's 0 would prune it)."""
    lm = crossword_lm(["h2. HELLO"], zero=lambda word: word.count("_") == 4)
    ctx = toy.make_ctx(lm, task=get("crosswords"))
    result = await strategies.build("tot-dfs", {"max_steps": 2, "max_depth": 3, "k": 1}).run(CLUES, ctx)
    assert ctx.trace.of_type("tree_prune") == []
    hello = next(n for n in result.details["tree"] if n["depth"] == 1)
    assert hello["expanded"]


CONCEPTS = ("dog ball run park tree sky child kite wind grass bench river boat fish sun hat shoe lake bird cloud "
            "rain bread cheese apple car").split()


def growing_sentence_lm():
    """CommonGen ToT proposals that each extend the current sentence: the first thoughts use one or two
    concepts (coverage at most 2/25 = 0.08), every later one adds five more. The model's own scores never matter:
    the evaluator is the exact coverage checker (``evaluator: symbolic``)."""
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return json.dumps({"verdict": "still need to improve", "reason": "more concepts", "score": 5})
        cur = text.split("Current solution:\n", 1)[1].split("\n", 1)[0].strip() if "Current solution:" in text else ""
        cur = "" if cur == "(empty)" else cur
        fresh = [c for c in CONCEPTS[:-2] if c not in re.findall(r"\w+", cur)]
        sentence = f"{cur} {' '.join(fresh[:5])}".strip() if cur else fresh[0]
        return "\n".join(f"Sentence: {sentence} {extra}".strip() for extra in ("", "car", "apple"))

    return ScriptedLM(brain)


async def test_an_exact_progress_score_is_not_a_judgment_of_impossible():
    """Yao et al. prune a state their evaluator values "impossible" (DFS goes on "if the current status
    is possible"). CommonGen's exact coverage checker (``evaluator: symbolic``, as the sculpt-commongen
    suite scores every tree method) says how many concepts a partial sentence has, not whether it can
    still cover the rest: a first thought with 1 of 25 concepts (0.04) used to be pruned as impossible,
    and ToT-DFS ended after 1 of its 3 steps (issue 35's starved ToT, again). Now nothing is pruned and
    ToT spends its 3 expansions (depth 3), best child first: "dog car" (2 concepts), then five more and "apple" (8), then five more (13 of 25;
    the third level's "car" and "apple" add nothing new)."""
    task = get("commongen")
    ctx = toy.make_ctx(growing_sentence_lm(), task=task)
    problem = Problem(id="cg", question=", ".join(CONCEPTS))
    result = await strategies.build("tot-dfs", {"evaluator": "symbolic", "k": 3, "max_depth": 3, "max_steps": 3,
                                                "stop_at_goal": False}).run(problem, ctx)
    assert ctx.trace.of_type("tree_prune") == []
    assert result.details["steps_done"] == 3 and _depth(result) == 3
    assert task.score(result.answer, CONCEPTS)["coverage"] == pytest.approx(13 / 25)


async def test_a_model_score_of_zero_still_prunes():
    """The model's own holistic value (0/10, below ``prune_below``) is still a judgment, and prunes."""
    ctx = toy.make_ctx(toy.make_lm({}, default=0))
    await strategies.build("tot-dfs", {"max_steps": 2, "max_depth": 3}).run(toy.PROBLEM, ctx)
    assert ctx.trace.of_type("tree_prune")


# -- A complete state is not an empty expansion (issue 35's leftover) --------------------------------

def across_filling_lm(lm_seen):
    """ToT proposals that fill the first blank across row with AAAAA or BBBBB (h1..h5 fill every cell);
    at a full board only overwrites are left to propose, which ToT's generator rejects. Every clue
    scores 6/10, so nothing is pruned and no board reaches the goal."""
    def brain(req):
        text = req.messages[0].content
        board = _board(text)
        if "JSON object" in text:
            return json.dumps({"items": [{"item": s, "feedback": "f", "score": 6} for s in SLOTS]})
        if "different possible next steps" in text:
            lm_seen.append(board)
            row = next((i for i in range(5) if "_" in board[i * 5:i * 5 + 5]), None)
            if row is None:
                return "h1. ZZZZZ (high)\nh2. YYYYY (low)"
            return f"h{row + 1}. AAAAA (certain)\nh{row + 1}. BBBBB (high)"
        return "h1. ABCDE"

    return ScriptedLM(brain)


async def test_a_full_board_sends_the_dfs_back_up_without_spending_a_step():
    """Yao et al.'s crosswords DFS recurses into a state only while it is unfinished: ``if len(infos) <
    time_limit and env.steps < 10 and not any(_ == 2 for _ in env.status): ... dfs(env, ...)``, then
    ``env.reset(...)`` to the parent's board and the next candidate (``search_crosswords-dfs.ipynb``); their
    thoughts only fill blanks, and ThoughtSculpt §2 sets its own apart from exactly that: "Our approach
    differs by permitting review and modification of intermediate nodes, even allowing them to be revised
    or expanded if initially complete."

    Here five across words fill the board. With k = 2 and 8 steps, steps 1-5 descend to the first two full
    boards; each is complete, so the search backs up without a step: step 6 expands the depth-4 sibling
    (two more full boards), step 7 the depth-3 sibling, step 8 its first child (two more, the first of
    which is visited and found complete before the spent steps end the search). Before, step 6
    asked the model to extend the first full board, got only overwrites, and steps 6-8 were spent
    retrying it (3 empty expansions, the siblings never tried)."""
    proposed = []
    ctx = toy.make_ctx(across_filling_lm(proposed), task=get("crosswords"))
    result = await strategies.build("tot-dfs", {"max_steps": 8, "max_depth": 6, "k": 2,
                                                "stop_at_goal": False}).run(CLUES, ctx)
    tree = result.details["tree"]
    full = [n for n in tree if "_" not in n["candidate"]]
    assert result.details["steps_done"] == 8 and "empty_expansions" not in result.details
    assert all("_" in board for board in proposed) and len(proposed) == 8  # no call on a full board
    assert len(full) == 6 and not any(n["expanded"] for n in full)
    assert [e["node"] for e in ctx.trace.of_type("tree_complete")] == [n["id"] for n in full][:5]
    rows = lambda n: "".join(n["candidate"][r * 5] for r in range(4))  # noqa: E731 (h1..h4, a letter each)
    assert [rows(n) for n in tree if n["depth"] == 4 and n["expanded"]] == ["AAAA", "AAAB", "AABA"]


class FinishedAtTwo(toy.ToyTask):
    """The toy task, with "ab" given as the start and any candidate of two letters complete."""

    def __init__(self):
        super().__init__(root="ab")

    def complete(self, problem, candidate):
        return len(candidate) >= 2


@pytest.mark.parametrize("name", METHODS)
async def test_no_method_spends_a_call_on_a_complete_start_that_its_generator_cannot_extend(name):
    """Every control loop asks the generator first (ToT's, passed in as a part): the root is judged (one
    batch: ToT-BFS values it three times) and nothing is generated from it."""
    lm = toy.make_lm({}, default=5)
    ctx = toy.make_ctx(lm, task=FinishedAtTwo())
    cls = strategies.get(name)
    strategy = cls(strategies.make_config(cls, METHODS[name]), generator=ToTGenerator())
    result = await strategy.run(toy.PROBLEM, ctx)
    assert len(lm.batches) == 1 and all("JSON object" in r.messages[0].content for r in lm.batches[0])
    assert result.details["nodes"] == 1 and result.answer == "ab"
    assert [e["node"] for e in ctx.trace.of_type("tree_complete")] == [0]
    assert "empty_expansions" not in result.details


@pytest.mark.parametrize("name", ["sculpt-dfs", "sculpt-mcts", "self-refine"])
async def test_a_revising_generator_still_expands_a_complete_start(name):
    """ThoughtSculpt §2: "even allowing them to be revised or expanded if initially complete"."""
    lm = toy.make_lm({}, default=5)
    ctx = toy.make_ctx(lm, task=FinishedAtTwo())
    result = await strategies.build(name, METHODS[name]).run(toy.PROBLEM, ctx)
    assert result.details["nodes"] > 1 and not ctx.trace.of_type("tree_complete")

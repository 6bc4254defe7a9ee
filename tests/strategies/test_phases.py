"""Every strategy family names its phases (``phase`` events) before the calls they make."""

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.progress import phase_label
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem
from thoughtloom.lm.meter import Metered
from thoughtloom.strategies.config import make_config
from thoughtloom.strategies.context import Context
from thoughtloom.testing import ScriptedLM

JAWS = "In what year was the director of Jaws born?"
LETTERS = 'Take the letters at position 2 of the words in "Ada Byron Lee" and concatenate them using a space.'


def reply(req):
    prompt = req.messages[-1].content
    if prompt.startswith("List the essential steps"):
        return ("Step 1: Who directed the film Jaws?\nStep 2: In what year was the director from Step 1 born?\n"
                "Dependencies: Step 1 -> Step 2")
    if "JSON object" in prompt:
        return '{"feedback": "fine", "score": 6}'
    return "Steven Spielberg was born in 1946 [1].\nAnswer: 1946"


async def phases(name: str, task: str, question: str, **options) -> list[tuple[str, int]]:
    """(phase label, model calls made before it) for each phase of one run."""
    cls = strategies.get(name)
    trace = Trace()
    ctx = Context(lm=Metered(ScriptedLM(reply), trace=trace), task=tasks.get(task), trace=trace)
    await cls(make_config(cls, {k: str(v) for k, v in options.items()})).run(Problem("p", question), ctx)
    out, calls = [], 0
    for event in trace.events:
        calls += event["type"] == "llm_call"
        if event["type"] == "phase":
            out.append((phase_label(event), calls))
    return out


async def test_cot_sc_says_how_many_it_samples():
    assert await phases("cot-sc", "gsm8k", "2 + 2?", n=3) == [("sampling 3", 0)]


@pytest.mark.parametrize("name, options, expected", [
    ("sculpt-mcts", {"rollouts": 2}, ["first answer", "rollout 1/2", "rollout 2/2"]),
    ("tot-bfs", {"max_depth": 2}, ["first answer", "depth 1/2", "depth 2/2"]),
    ("self-refine", {"iterations": 2, "stop_at_goal": False}, ["first answer", "round 1/2", "round 2/2"]),
    ("sculpt-dfs", {"max_depth": 2}, ["first answer", "depth 1/2", "depth 2/2"]),  # its one child is the root again: tried again (retry_empty)
    ("sculpt-dfs-backtrack", {"max_steps": 2}, ["first answer", "expansion 1/2", "expansion 2/2"]),  # likewise
])
async def test_tree_searches_count_their_loop(name, options, expected):
    got = await phases(name, "gsm8k", "2 + 2?", **options)
    assert [label for label, _ in got] == expected
    assert got[0][1] == 0  # named before the root's first call


async def test_hgot_names_the_plan_levels_and_the_depth():
    got = [label for label, _ in await phases("hgot", "freeform", JAWS, samples=2, max_depth=2)]
    assert got == ["first answer", "planning", "plan level 1/2", "first answer · depth 1",
                   "plan level 2/2", "first answer · depth 1", "final answer"]


async def test_decomp_counts_program_steps_nested_programs_included():
    got = [label for label, _ in await phases("decomp", "letter_cat", LETTERS, decomposer="reference",
                                              handlers="symbolic")]
    assert got[:2] == ["program step 1", "program step 2"]
    assert "program step 1 · depth 1" in got and got[-1] == "program step 4"


@pytest.mark.parametrize("name, options, expected", [
    ("react", {"max_steps": 2}, ["turn 1/2", "turn 2/2"]),
    ("dsp", {"n": 2}, ["search hop 1/2", "search hop 2/2", "sampling 2"]),
    ("retrieve-then-read", {"n": 2}, ["sampling 2"]),
    ("self-ask", {"max_hops": 2}, ["hop 1/3"]),
])
async def test_retrieval_baselines_count_hops_and_turns(name, options, expected):
    assert [label for label, _ in await phases(name, "freeform", JAWS, **options)] == expected

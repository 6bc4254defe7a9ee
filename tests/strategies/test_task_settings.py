"""Per-task search settings: each task declares the paper's set-up, tree strategies take it unless the user
sets the option, and every consumer can say where each value came from."""

import json
import re

import pytest
from typer.testing import CliRunner

from thoughtloom import strategies, tasks
from thoughtloom.cli.main import app
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.config import FROM_STRATEGY, FROM_USER
from thoughtloom.strategies.context import Context
from thoughtloom.tasks.crosswords import SLOTS, word_at
from thoughtloom.testing import ScriptedLM


def _filling_crossword_lm():
    """A scripted model for a crossword: the first proposal is unreadable (issue 35's probe); after it each
    generation fills the first slot with a blank, keeping the letters in place (one distinct filler letter
    per proposal line or sample); every clue scores 6/10, so no board is ever solved or pruned."""
    state = {"first": True}

    def board_of(text):
        rows = text.split("Current solution:\n", 1)[1].splitlines()[:5]
        return "".join(r.replace(" ", "") for r in rows)

    def fill(board, letter):
        for slot in SLOTS:
            word = word_at(board, slot)
            if "_" in word:
                return f"{slot}. " + "".join(letter if ch == "_" else ch for ch in word)
        return "nothing left to fill"

    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            return json.dumps({"items": [{"item": s, "feedback": "f", "score": 6} for s in SLOTS]})
        if state["first"]:
            state["first"] = False
            return "I am not sure."
        n = int(m.group(1)) if (m := re.search(r"Propose (\d+)", text)) else 1
        return "\n".join(fill(board_of(text), "ABCDEFGHIJ"[(req.sample_index + j) % 10]) for j in range(n))

    return ScriptedLM(brain)


@pytest.mark.parametrize("name, phase", [("sculpt-mcts", "rollout"), ("sculpt-dfs", "depth"),
                                         ("tot-dfs", "expansion"), ("self-refine", "round")])
async def test_crosswords_take_twenty_steps_three_children_and_room_for_all_ten_slots(name, phase):
    """§4.2: "For each node, ThoughtSculpt and ToT generate a maximum of 3 candidates"; "we impose a
    constraint on all methods to utilize only 20 search steps"; Fig. 5: "One step is equal to one
    d_rollout". A board has 10 slots and a step fills or edits one word, so a path needs depth 10 to
    fill the board. Each method, run on a crossword with the task's settings and a model whose first
    proposal is unreadable, spends exactly 20 steps (its phase events 1..20: ToT used to spend 1), and
    its tree reaches a full board within them (the scripted model fills h1..h5, 5 steps below the root)."""
    task = tasks.get("crosswords")
    method = strategies.build(name, {}, task)
    assert method.config.k == 3 and method.sources["k"].startswith("task crosswords: ThoughtSculpt §4.2")
    problem = Problem(id="x", question="\n".join(f"{s}. clue {s}" for s in SLOTS))
    trace = Trace()
    ctx = Context(lm=Metered(_filling_crossword_lm(), budget=Budget(max_calls=400), trace=trace), task=task,
                  trace=trace, seed=0)
    result = await method.run(problem, ctx)
    assert [e["step"] for e in trace.of_type("phase") if e["phase"] == phase] == list(range(1, 21))
    assert any("_" not in n["candidate"] for n in result.details["tree"])
    assert method.config.max_depth >= 10  # room for all ten slots along one path
    assert result.stopped != "budget"


@pytest.mark.parametrize("task, quote", [
    ("commongen", "We set a maximum depth of 3 for this task"),
    ("outline", "Each method is allowed to search or iterate through a maximum depth of 3"),
])
def test_commongen_and_outlines_search_to_depth_three_with_three_children(task, quote):
    """§4.3: "We set a maximum depth of 3 for this task. For each node, both ThoughtSculpt and ToT will
    generate a maximum of 3 child candidates." §4.1: "Each method is allowed to search or iterate through a
    maximum depth of 3 ... each node will generate a maximum of 3 candidate child outlines." So k = 3,
    depth 3, and Self-Refine iterates 3 times."""
    t = tasks.get(task)
    assert quote in t.search_settings["max_depth"].source
    dfs = strategies.build("sculpt-dfs", {}, t)
    assert (dfs.config.k, dfs.config.max_depth) == (3, 3)
    assert strategies.build("self-refine", {}, t).config.iterations == 3


def test_the_user_wins_over_the_task():
    task = tasks.get("crosswords")
    mcts = strategies.build("sculpt-mcts", {"max_depth": "5", "rollouts": 4}, task)
    assert (mcts.config.max_depth, mcts.config.rollouts, mcts.config.k) == (5, 4, 3)
    assert mcts.sources["max_depth"] == FROM_USER and mcts.sources["k"].startswith("task crosswords")


def test_without_a_task_or_for_a_non_tree_strategy_the_task_settings_do_not_apply():
    assert strategies.build("sculpt-mcts").config.max_depth == 3
    cot = strategies.build("cot", {}, tasks.get("crosswords"))
    assert all(src == FROM_STRATEGY for src in cot.sources.values())
    assert strategies.build("sculpt-mcts", {}, tasks.get("game24")).config.max_depth == 3  # no settings


def test_strategies_command_says_the_values_on_a_task_and_where_they_come_from():
    r = CliRunner().invoke(app, ["strategies", "sculpt-mcts", "--task", "crosswords", "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    by = {o["name"]: o for o in info["options"]}
    assert by["max_depth"]["default"] == 3 and by["max_depth"]["value"] == 20
    assert by["max_depth"]["from"].startswith("task crosswords:") and by["temperature"]["from"] == FROM_STRATEGY
    assert by["c"]["value"] == 0.2 and "no UCB1 constant" in by["c"]["from"]
    assert info["task_settings"]["crosswords"]["rollouts"]["value"] == 20
    r = CliRunner().invoke(app, ["strategies", "sculpt-dfs", "--task", "crosswords"])
    assert r.exit_code == 0 and "max_depth = 20: task crosswords" in " ".join(r.output.split())
    r = CliRunner().invoke(app, ["strategies", "sculpt-mcts"])
    assert "on task crosswords it takes the task's k=3, rollouts=20, max_depth=20, c=0.2" in " ".join(r.output.split())


def test_the_card_says_which_settings_came_from_the_task():
    from thoughtloom.eval.reproduce import suites
    from thoughtloom.eval.reproduce.card import CellResult
    from thoughtloom.eval.reproduce.render import _settings, _task_settings

    suite = suites.load("sculpt-crosswords")
    cell = CellResult(suite.datasets[0], suite.method("sculpt-mcts"), total=20, seeds=0, n=0)
    text = _settings(cell)
    assert text.startswith("sculpt-mcts (gen_max_tokens=64, eval_max_tokens=640); from the task: ")
    assert "rollouts=20" in text and "max_depth=20" in text and "k=3" in text
    listed = " ".join(_task_settings([cell])[1])
    assert "rollouts = 20 (search setting of task crosswords" in listed and "§4.2" in listed
    cot = CellResult(suite.datasets[0], suite.method("cot"), total=20, seeds=0, n=0)
    assert _settings(cot) == "cot (max_tokens=1024)"  # its own setting only: no search settings from the task


def test_tree_strategies_sample_at_the_papers_temperature_and_simulate_one_step():
    """§4: "Both base LMs use a temperature of 0.7"; §4.1: "ThoughtSculpt with MCTS will have a maximum
    d_simulation of 1" ("In this and all the experiments below"). No task changes either."""
    for task in ("crosswords", "commongen", "outline", "game24"):
        mcts = strategies.build("sculpt-mcts", {}, tasks.get(task))
        assert mcts.config.temperature == 0.7 and mcts.config.simulation_depth == 1
        assert strategies.build("sculpt-dfs", {}, tasks.get(task)).config.temperature == 0.7


def test_a_presets_values_are_said_to_come_from_the_preset():
    """``--set preset=paper``: the values the preset fills in come from the preset, the options given
    beside it from the user, the rest from the strategy's defaults."""
    hgot = strategies.build("hgot", {"preset": "paper", "samples": "4"})
    assert hgot.sources["samples"] == FROM_USER and hgot.config.samples == 4
    assert hgot.sources["temperature"] == "preset paper" and hgot.sources["parent_weight"] == "preset paper"
    assert hgot.sources["rewrite_max_tokens"] == FROM_STRATEGY

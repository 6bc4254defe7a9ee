"""DecomP's handler seam (strategies/decomp/step_handlers.py): a registered strategy or function as a
handler, with the run's own context: one trace (the step's events nested under it), one budget (its
calls metered once and bounding it), and the handler strategy's own bound.

The paper (Khot et al., §3, p. 3, as the summary in the papers folder gives it): sub-task handlers may
be prompts, another prompting program, symbolic functions or trained models (a calculator, a
specialized supervised model); and (§1, p. 2) a reusable handler can be debugged on its own and
swapped "without changing the rest of the system". The seam makes that swap one option (``bind``)
for any strategy of the library, and keeps the swapped handler inside the run's trace and budget."""

import asyncio
import json
import re

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem, Request
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.decomp import Program, register_handler, register_program
from thoughtloom.strategies.decomp import step_handlers
from thoughtloom.strategies.decomp.catalogue import PROGRAMS
from thoughtloom.strategies.decomp.controller import NEXT_STEP
from thoughtloom.testing import ScriptedLM

Q = 'Take the letters at position 2 of the words in "Ada Byron Lee" and concatenate them using a space.'
STEPS = ['(split) "What are the words in "Ada Byron Lee"?"',
         '(str_position) [project_values] "What is the letter at position 2 of "#1"?"',
         '(merge) "Concatenate #2 using a space."', "[EOQ]"]
SEARCH = "str_position=sculpt-mcts rollouts=1 k=1"


def reply(request) -> str:
    prompt = request.messages[-1].content
    if NEXT_STEP in prompt:  # the decomposer: the letter_cat program, one line a turn
        return STEPS[prompt.split(NEXT_STEP, 1)[1].count("\nA: ")]
    if request.json_schema is not None:  # a tree evaluation
        return json.dumps({"score": 8, "feedback": "fine"})
    position, word = re.findall(r'position (\d+) of "(\w+)"', prompt)[-1]
    return f"The answer is: {word[int(position) - 1]}"


def decomp(options, max_calls=None):
    """The letter_cat program (exact split and merge) with ``options``; its result, trace, meter, model."""
    lm = ScriptedLM(reply)
    trace = Trace()
    meter = Metered(lm, Budget(max_calls=max_calls), trace=trace)
    ctx = Context(lm=meter, task=tasks.get("letter_cat"), trace=trace)
    strategy = strategies.build("decomp", {"handlers": "symbolic", **options})
    return asyncio.run(strategy.run(Problem("q", Q), ctx)), trace, meter, lm


@pytest.fixture
def registered():
    """Handler functions and programs a test registers, taken out again after it."""
    names: list[tuple[dict, str]] = []
    yield lambda table, name: names.append((table, name))
    for table, name in names:
        table.pop(name, None)


def test_an_mcts_handler_runs_in_the_runs_one_trace_nested_under_its_step():
    result, trace, meter, lm = decomp({"bind": SEARCH})
    assert result.answer == "d y e" and result.details["status"] == "ok"
    events = trace.events
    step2 = next(i for i, e in enumerate(events) if e["type"] == "decomp_step" and e["step"] == 2)
    tree = [(i, e) for i, e in enumerate(events) if e["type"].startswith("tree_")]
    assert tree and all(i < step2 for i, _ in tree)
    assert {json.dumps(e["within"]) for _, e in tree} == {
        json.dumps([{"step": "decomp_handler", "run": f"1.2.{k}", "handler": "str_position",
                     "strategy": "sculpt-mcts"}]) for k in (1, 2, 3)}
    assert len([e for _, e in tree if e["type"] == "tree_answer"]) == 3  # one search per foreach item


def test_the_steps_calls_are_metered_once_and_add_up_to_the_runs():
    """4 decomposer turns (3 steps and [EOQ]) and the three searches' calls: the meter counts each call
    once, every one is an llm_call of the one trace, the handler's are step 2's `calls` and carry its
    scope, and nothing was counted by hand."""
    result, trace, meter, lm = decomp({"bind": SEARCH})
    steps = trace.of_type("decomp_step")
    nested = [e for e in trace.of_type("llm_call") if e.get("within")]
    assert steps[1]["kind"] == "strategy" and steps[1]["calls"] == len(nested) > 0
    assert steps[1]["tokens"] == sum(e["prompt_tokens"] + e["completion_tokens"] for e in nested)
    assert meter.totals.calls == len(lm.requests) == len(trace.of_type("llm_call")) == 4 + steps[1]["calls"]
    assert result.details["executed"]["calls"] == meter.totals.calls


def test_the_runs_budget_bounds_the_handler_and_a_stop_answers_with_the_program_not_the_search():
    """With 6 calls for the question, the three searches are refused part way; the run stops with
    DecomP's best so far (its program, unfinished: no answer), never a search's answer."""
    result, trace, meter, _ = decomp({"bind": SEARCH}, max_calls=6)
    assert result.stopped == "budget" and result.answer == ""
    assert meter.totals.calls <= 6 and trace.of_type("budget_exceeded")[0]["limit"] == "calls"
    assert result.details["steps"] == 1  # split answered; the foreach step never finished


def test_a_handler_strategys_own_max_calls_bounds_its_step_and_the_program_goes_on():
    """Each search may make 2 calls (its root and the root's evaluation); the third is refused inside the
    step, which answers with the search's best so far, and the program finishes."""
    result, trace, meter, _ = decomp({"bind": SEARCH.replace("rollouts=1", "rollouts=3") + " max_calls=2"})
    assert result.answer == "d y e" and result.stopped is None
    refused = trace.of_type("budget_exceeded")
    assert [e["limit"] for e in refused] == ["strategy_calls"] * 3
    assert sorted(e["within"][0]["run"] for e in refused) == ["1.2.1", "1.2.2", "1.2.3"]
    assert trace.of_type("decomp_step")[1]["calls"] == 6


def test_a_program_may_name_a_strategy_and_a_registered_function_as_handlers(registered):
    """A fixed program whose first step is answered by cot-sc and second by a function of ours that asks
    the model once more: kinds strategy and function, every call counted once, each in its scope."""
    asked = []

    @register_handler("twice")
    async def twice(question, ctx):
        asked.append(question)
        [c] = await ctx.lm.generate([Request.of(f'What is the letter at position 1 of "{question}"?')])
        return question * 2 + c.text[-1]

    registered(step_handlers._FUNCTIONS, "twice")
    register_program(Program("seam_demo", None, lambda q: ['(cot-sc) "What is the letter at position 2 of "Ada"?"', '(twice) "#1"']))
    registered(PROGRAMS, "seam_demo")
    result, trace, meter, lm = decomp({"program": "seam_demo", "decomposer": "reference"})
    assert asked == ["d"] and result.answer == "ddd"
    first, second = trace.of_type("decomp_step")
    assert (first["kind"], first["calls"], second["kind"], second["calls"]) == ("strategy", 5, "function", 1)
    assert meter.totals.calls == 6 == len(trace.of_type("llm_call"))
    scopes = [e["within"][0]["handler"] for e in trace.of_type("llm_call")]
    assert scopes == ["cot-sc"] * 5 + ["twice"]


def test_bind_takes_a_function_and_wins_over_a_program_of_the_same_name(registered):
    register_handler("letter_fn", lambda question, ctx: re.findall(r'"(\w+)"', question)[-1][1])
    registered(step_handlers._FUNCTIONS, "letter_fn")
    result, trace, meter, _ = decomp({"bind": "str_position=letter_fn", "decomposer": "reference"})
    assert result.answer == "d y e" and meter.totals.calls == 0
    assert trace.of_type("decomp_step")[1]["kind"] == "function"


def test_a_function_handler_that_returns_no_text_is_that_steps_error(registered):
    register_handler("nothing", lambda question, ctx: None)
    registered(step_handlers._FUNCTIONS, "nothing")
    result, trace, _, _ = decomp({"bind": "str_position=nothing", "decomposer": "reference"})
    assert "returned NoneType, not str or list" in trace.of_type("decomp_step")[1]["error"]


@pytest.mark.parametrize("bind,says", [
    ("str_position", "expected NAME=STRATEGY"),
    ("str_position=sculpt-mctz", "unknown strategy 'sculpt-mctz'"),
    ("str_position=sculpt-mcts rollout=2", "has no option 'rollout'"),
    ("str_position=sculpt-mcts rollouts=0", "bad value for sculpt-mcts option rollouts: 0"),
])
def test_a_bad_binding_is_refused_when_the_strategy_is_built(bind, says):
    with pytest.raises(ConfigError, match=re.escape(says)):
        strategies.build("decomp", {"bind": bind})


def test_a_handler_function_name_is_registered_once(registered):
    register_handler("once", lambda q, ctx: q)
    registered(step_handlers._FUNCTIONS, "once")
    with pytest.raises(ValueError, match="registered twice"):
        register_handler("once", lambda q, ctx: q)

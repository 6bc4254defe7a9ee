"""The inspector's page of a run with a strategy as a step of another (issue 42's compositions): the run's
own structure is drawn from its own events; a step's (``within``) stay in the timeline only."""

import asyncio
import json
import re

from thoughtloom import strategies, tasks
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem
from thoughtloom.eval.record import EvalRecord
from thoughtloom.lm.meter import Metered
from thoughtloom.strategies.context import Context
from thoughtloom.testing import ScriptedLM
from thoughtloom.view.example_page import example_page

Q = 'Take the letters at position 2 of the words in "Ada Byron Lee" and concatenate them using a space.'


def reply(request):
    if request.json_schema is not None:
        return json.dumps({"score": 8, "feedback": "fine"})
    position, word = re.findall(r'position (\d+) of "(\w+)"', request.messages[-1].content)[-1]
    return f"The answer is: {word[int(position) - 1]}"


def test_an_mcts_handlers_trees_are_not_drawn_as_the_decomp_runs_tree():
    trace = Trace(example="q")
    ctx = Context(lm=Metered(ScriptedLM(reply), trace=trace), task=tasks.get("letter_cat"), trace=trace)
    strategy = strategies.build("decomp", {"decomposer": "reference", "handlers": "symbolic",
                                           "bind": "str_position=sculpt-mcts rollouts=1 k=1"})
    result = asyncio.run(strategy.run(Problem("q", Q), ctx))
    assert result.answer == "d y e" and trace.of_type("tree_node")  # three searches ran inside the program
    page = example_page(EvalRecord("q", input=Q, prediction=result.answer, details=result.details), trace.events, "em")
    assert 'class="programs"' in page and 'class="tree"' not in page
    assert page.count("tree_answer") >= 3  # the searches are in the timeline

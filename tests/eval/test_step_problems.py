"""What went wrong inside a run, counted from its trace (issue 13 item 5): one counting function
(core.events.count_step_problems) for ``thoughtloom run`` and the eval's records; the summary sums them."""

import json

from thoughtloom import tasks
from thoughtloom.core import Problem
from thoughtloom.core.events import STEP_PROBLEMS, count_step_problems, malformed
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Request
from thoughtloom.eval import EvalResources, EvalSettings, evaluate
from thoughtloom.eval.summary import STEP_PROBLEM_WORDS, step_problem_lines, tally_step_problems
from thoughtloom.lm import Budget
from thoughtloom.strategies.interface import Strategy
from thoughtloom.strategies.prompting import finished
from thoughtloom.strategies.result import Result
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM
from thoughtloom.core.types import Completion


def test_every_category_is_counted_and_said():
    assert set(STEP_PROBLEM_WORDS) == set(STEP_PROBLEMS)


def test_the_trace_events_fall_into_their_categories():
    trace = Trace()
    malformed(trace, "tree_child", "truncated", "half a")
    malformed(trace, "tree_child", "truncated", "half b")
    malformed(trace, "tree_evaluation", "unparseable", "{oops")
    malformed(trace, "hgot_plan", "invalid_plan", "nonsense")
    trace.emit("tree_eval_salvaged", node=3, items=2)
    trace.emit("tree_eval_limited", node=3, items=9, score=0.55)
    trace.emit("tree_eval_limited", node=4, items=10, score=0.5)
    trace.emit("budget_exceeded", limit="calls", cap=5, used=5)
    trace.emit("llm_call", request_hash="h")  # not a problem
    assert count_step_problems(trace.events) == {
        "cut_off": {"tree_child": 2},
        "unparsed": {"tree_evaluation": 1, "hgot_plan": 1},
        "salvaged": {"tree_evaluation": 1},
        "limited": {"tree_evaluation": 2},
        "budget_stopped": {"calls": 1},
    }
    assert count_step_problems([]) == {}
    assert step_problem_lines(tally_step_problems([count_step_problems(trace.events)]))[3] == (
        "held to the task's rubric limits (score_limits, a symbolic check): 2 evaluations (tree_evaluation 2)")


def test_the_tally_sums_examples_and_says_each_category_in_one_line():
    per_example = [
        {"cut_off": {"hgot_thought": 2}, "budget_stopped": {"calls": 1}},
        {"cut_off": {"hgot_thought": 1, "hgot_plan": 1}},
        {},
        None,  # a record written before the counts existed
        {"unparsed": "garbage", "nonsense": {"x": 1}, "salvaged": {"tree_evaluation": "2"}},  # hand-edited
    ]
    tally = tally_step_problems(per_example)
    assert tally == {"cut_off": {"total": 4, "examples": 2, "by": {"hgot_thought": 3, "hgot_plan": 1}},
                     "budget_stopped": {"total": 1, "examples": 1, "by": {"calls": 1}}}
    assert step_problem_lines(tally, examples=5) == [
        "malformed (cut off at max_tokens): 4 replies in 2 of 5 examples (hgot_thought 3, hgot_plan 1)",
        "budget-stopped: 1 refused call in 1 of 5 examples (calls 1)",
    ]
    one = tally_step_problems([{"unparsed": {"react_action": 1}}])
    # records from before the tree-search kernel's rename (sculpt_*) sum with today's
    mixed = tally_step_problems([{"cut_off": {"sculpt_child": 2}}, {"cut_off": {"tree_child": 1}}])
    assert mixed == {"cut_off": {"total": 3, "examples": 2, "by": {"tree_child": 3}}}
    old = [{"type": "malformed", "t": 0, "what": "sculpt_evaluation", "reason": "unparseable", "raw": ""},
           {"type": "sculpt_eval_salvaged", "t": 0, "node": 1, "items": 1}]
    assert count_step_problems(old) == {"unparsed": {"tree_evaluation": 1}, "salvaged": {"tree_evaluation": 1}}
    assert step_problem_lines(one) == ["malformed (unparsed): 1 reply (react_action 1)"]
    assert step_problem_lines({}) == []


class _Sloppy(Strategy):
    """Reads one reply per question: cut off for 'cut', off the format for 'bad', then asks until stopped."""

    name = "sloppy"

    async def solve(self, problem, ctx):
        reply = (await ctx.lm.generate([Request.of(problem.question)]))[0]
        if finished(ctx, reply, "json"):
            if reply.text == "bad":
                malformed(ctx.trace, "json", "unparseable", reply.text)
        ctx.best_so_far(lambda: Result(answer="1"))
        while problem.id == "greedy":
            await ctx.lm.generate([Request.of("again")])
        return Result(answer="1")


async def test_eval_records_keep_their_counts_and_the_summary_sums_them(tmp_path):
    def reply(req):
        text = req.messages[-1].content
        return Completion("cut", finish_reason="length") if text == "cut" else text

    examples = [Example(Problem(i, q), "1") for i, q in
                [("a", "cut"), ("b", "bad"), ("c", "fine"), ("greedy", "fine")]]
    summary = await evaluate(_Sloppy(), tasks.get("gsm8k"), examples, EvalResources(ScriptedLM(reply)), tmp_path,
                             settings=EvalSettings(budget=Budget(max_calls=3)))
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert records["a"]["step_problems"] == {"cut_off": {"json": 1}}
    assert records["b"]["step_problems"] == {"unparsed": {"json": 1}}
    assert records["c"]["step_problems"] == {}
    assert records["greedy"]["step_problems"] == {"budget_stopped": {"calls": 1}}
    assert summary["step_problems"] == {
        "cut_off": {"total": 1, "examples": 1, "by": {"json": 1}},
        "unparsed": {"total": 1, "examples": 1, "by": {"json": 1}},
        "budget_stopped": {"total": 1, "examples": 1, "by": {"calls": 1}},
    }
    assert json.loads((tmp_path / "summary.json").read_text())["step_problems"] == summary["step_problems"]

"""Anytime trajectories (issue 27): the point at budget b is the run capped at b.

One run records, before each batch of calls goes out, what the strategy would
answer if its budget were spent there (``strategies/anytime.py``). The claim
each test checks, for every registered strategy: for a budget ``b``, the
record of the same example run with ``--max-calls b`` has the prediction and
the scores of the uncapped run's last trajectory point at or below ``b``.
The scripted model answers each request by a hash of its text, so both runs
see the same reply to the same request, and a reply in the format its
strategy reads (a number, a score, a program step, a search action), so the
answer changes on the way.
"""

from __future__ import annotations

import hashlib
import re

import pytest

from support.fuzz_harness import PASSAGES, strategy_tasks
from thoughtloom import strategies, tasks
from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Request
from thoughtloom.entail import LexicalJudge
from thoughtloom.eval.runner import EvalResources, EvalSettings, run_example
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.anytime import Anytime
from thoughtloom.tasks.datasets import load_examples
from thoughtloom.testing import ScriptedLM, StaticRetriever

PAYLOADS = ["24", "12", "Paris", "1946", "Steven Spielberg", "(4 + 8) * 2", "6 * 4", "yes", "no",
            "a, b, c", "cat dog sun"]
FORMATS = [
    lambda p: f"Let me think step by step. The answer is {p}.",
    lambda p: f"Answer: {p}",
    lambda p: f"Expression: {p}\nThe answer is: {p}",
    lambda p: f'{{"score": {len(p) % 10}, "feedback": "check {p}", '
              f'"items": [{{"item": "{p}", "score": {len(p) % 7}, "feedback": "ok"}}]}}',
    lambda p: f"Score: {len(p) % 10}/10\nFeedback: try {p}",
    lambda p: f"Thought: look it up\nAction: Search[{p}]",
    lambda p: f"Thought: done\nAction: Finish[{p}]",
    lambda p: f"Follow up: who is {p}?\nIntermediate answer: {p}\nSo the final answer is: {p}",
    lambda p: f"{p} [1].\nAnswer: {p}",
    lambda p: f"1. Who is {p}?\n2. When was {p} born?",
    lambda p: f"4 + 8 = 12 (left: 12 {len(p)})\n6 * 4 = 24 (left: 24)\n{p}",
]
_QS = re.compile(r"QS: .*")


def _digest(req: Request, salt: int) -> int:
    text = f"{salt}|{req.prompt_text()}|{req.sample_index}|{req.temperature}"
    return int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "big")


def reply(req: Request, salt: int = 0) -> str:
    """A reply picked by the request's hash: the same request always gets the same reply."""
    h = _digest(req, salt)
    prompt = req.messages[-1].content
    steps = _QS.findall(prompt[-6000:])
    if steps and h % 3:  # a DecomP decomposer turn: a step of the prompt's own examples, or the end
        return "QS: [EOQ]" if h % 5 == 0 else steps[h % len(steps)]
    return FORMATS[h % len(FORMATS)](PAYLOADS[(h >> 8) % len(PAYLOADS)])


def _cases() -> list[tuple[str, str]]:
    """Each strategy on the first of its tasks with packaged data (a file in the wheel)."""
    out = []
    for name, names in sorted(strategy_tasks().items()):
        for task_name in names:
            try:
                if task_name == "outline":
                    break
                load_examples(tasks.get(task_name), None, limit=1)
                break
            except Exception:
                continue
        else:
            continue
        out.append((name, task_name))
    return out


def _example(task_name: str):
    task = tasks.get(task_name)
    if task_name == "outline":
        return task, task.load("seed")[0]
    return task, load_examples(task, None, limit=1).examples[0]


async def _record(name: str, task_name: str, max_calls: int | None, options: dict | None = None, salt: int = 0):
    cls = strategies.get(name)
    strategy = cls(cls.Config(**(options or {})))
    task, example = _example(task_name)
    lm = ScriptedLM(lambda req: reply(req, salt))
    judge = LexicalJudge() if name == "hgot" else None
    res = EvalResources(lm=lm, retriever=StaticRetriever(PASSAGES), entail=judge)
    record, _ = await run_example(strategy, task, example, res, EvalSettings(budget=Budget(max_calls=max_calls)))
    return record.to_dict(), lm  # the record as its results.jsonl line holds it


def _at(points: list[dict], b: int) -> dict:
    """The trajectory's point for budget b: the last one at or below b calls."""
    return [p for p in points if p["calls"] <= b][-1]


def _boundaries(lm: ScriptedLM) -> set[int]:
    """The calls sent before each batch went out (where a trimmed batch cannot fall)."""
    out, total = set(), 0
    for batch in lm.batches:
        out.add(total)
        total += len(batch)
    return out | {total}


def _budgets(points: list[dict], total: int, boundaries: set[int] | None) -> list[int]:
    wanted = {0, 1, 2, 3, total // 3, total // 2, total - 1, total} | {p["calls"] for p in points} \
        | {p["calls"] - 1 for p in points}
    wanted = {b for b in wanted if 0 <= b <= total}
    if boundaries is not None:
        wanted &= boundaries
    return sorted(wanted)[:12]


CASES = _cases() + [("decomp", "letter_cat"), ("decomp", "list_reversal")]  # foreach batches, nesting
SALTS = range(4)  # four scripted models: four paths through each strategy


def test_every_registered_strategy_is_checked():
    assert {name for name, _ in CASES} == set(strategies.available())


@pytest.mark.parametrize("name,task_name", CASES)
async def test_the_point_at_b_is_the_run_capped_at_b(name, task_name):
    """Issue 27: "the point at budget b must equal what the same run capped at b (--max-calls b)
    returns, wherever the strategy's choices do not depend on the remaining budget". The tree
    searches trim their last batch to the budget (their records say "batch boundaries"), so
    for them b is taken where a batch begins. Four scripted models, four paths through each."""
    longest = max([await _check_capped_runs(name, task_name, salt) for salt in SALTS])
    print(f"{name} on {task_name}: longest trajectory {longest} points")


async def _check_capped_runs(name: str, task_name: str, salt: int) -> int:
    """Checks one scripted model's run at several budgets; returns its trajectory's length."""
    full, lm = await _record(name, task_name, None, salt=salt)
    assert full["error"] is None, full["error"]
    anytime = full["anytime"]
    points, total = anytime["points"], full["usage"]["calls"]
    assert points[0]["calls"] == 0 and points[-1]["calls"] == total
    assert points[-1]["answer"] == full["prediction"] and points[-1]["metrics"] == full["metrics"]
    exact = anytime["exact"]
    assert exact == strategies.get(name).anytime_exact
    boundaries = _boundaries(lm) if exact == "batch boundaries" else None
    checked = 0
    for b in _budgets(points, total, boundaries):
        capped, _ = await _record(name, task_name, b, salt=salt)
        expected = _at(points, b)
        assert capped["usage"]["calls"] <= b
        assert (capped["prediction"] or "", capped["metrics"]) == (expected["answer"] or "", expected["metrics"]), \
            f"salt {salt}, budget {b}: capped run answered {capped['prediction']!r}, the trajectory says {expected['answer']!r}"
        checked += 1
    assert checked >= 1
    return len(points)


@pytest.mark.parametrize("name,options", [("sculpt-mcts", {"k": 1}), ("sculpt-dfs", {"k": 1}),
                                          ("tot-bfs", {"k": 1, "beam": 1, "value_samples": 1}),
                                          ("self-refine", {"k": 1})])
async def test_a_tree_search_one_call_at_a_time_is_exact_at_every_budget(name, options):
    """With one thought per expansion and one evaluation per node every batch is one call, so
    no batch can be trimmed and the curve equals the capped runs at every budget (batching off)."""
    full, lm = await _record(name, "game24", None, options)
    assert {len(b) for b in lm.batches} == {1}
    points, total = full["anytime"]["points"], full["usage"]["calls"]
    for b in range(0, total + 1, max(1, total // 8)):
        capped, _ = await _record(name, "game24", b, options)
        assert (capped["prediction"] or "", capped["metrics"]) == (_at(points, b)["answer"] or "",
                                                                     _at(points, b)["metrics"]), f"budget {b}"


async def test_cot_sc_points_are_the_votes_of_its_first_samples():
    """Wang et al. (self-consistency): "sample a diverse set of reasoning paths ... choose the
    most consistent answer". A run capped at i calls sends the first i samples and votes them,
    so the point at i is the majority of the first i answers."""
    answers = ["7", "8", "8", "7", "7"]
    lm = ScriptedLM([f"The answer is {a}." for a in answers])
    cls = strategies.get("cot-sc")
    task, example = _example("gsm8k")
    record, _ = await run_example(cls(cls.Config(n=5)), task, example, EvalResources(lm=lm), EvalSettings())
    at = {p["calls"]: p["answer"] for p in record.anytime["points"]}
    # first 1: 7; first 2: a 7-8 tie goes to the first seen (7); 3: 8; 4: tie, first seen 7;
    # 5: 7, the end (always a point)
    assert at == {0: "", 1: "7", 3: "8", 4: "7", 5: "7"}


def test_a_maker_that_fails_mid_run_is_a_point_with_no_answer_and_changes_nothing():
    trace = Trace()
    anytime = Anytime(trace)

    def peek():
        trace.emit("tree_answer", node=1)  # a maker's own events stay out of the trace
        raise RuntimeError("half-built tree")

    anytime.watch(peek)
    anytime.before_batch(0, 0)
    assert anytime.points[0].answer is None and trace.events == []


async def test_concurrent_batches_never_pass_the_call_budget():
    """The call budget counts calls in flight: two batches of 3 sent at once under a budget
    of 4 are 3 calls and a refusal, not 6 calls."""
    import asyncio

    from thoughtloom.core.errors import BudgetExceeded

    gate = asyncio.Event()

    class Slow(ScriptedLM):
        async def generate(self, requests):
            await gate.wait()
            return await super().generate(requests)

    lm = Metered(Slow(lambda r: "x"), budget=Budget(max_calls=4))
    batch = [Request.of("q")] * 3
    first = asyncio.ensure_future(lm.generate(batch))
    await asyncio.sleep(0)
    with pytest.raises(BudgetExceeded):
        await lm.generate(batch)
    gate.set()
    await first
    assert lm.totals.calls == 3


class SizesItsBatchByTheBudget(strategies.Strategy):
    """Test scaffolding: samples as many answers as the budget leaves (at most 4) and keeps the last;
    ``describes``: it says what it answers with each part of the batch (Context.within_batch)."""

    name = "sizes-by-budget"
    describes = False

    async def solve(self, problem, ctx):
        n = min(4, ctx.remaining_calls() or 4)
        completions = await ctx.lm.generate([Request.of(problem.question, sample_index=i) for i in range(n)])

        def answer_with(first):
            ctx.trace.emit("phase", name="a look inside the batch")  # muted: never in the trace
            return strategies.Result(first[-1].text)

        if self.describes:
            ctx.within_batch(completions, answer_with)
        return strategies.Result(completions[-1].text)


@pytest.mark.parametrize("describes,exact", [(False, "batch boundaries"), (True, "every budget")])
async def test_a_strategy_that_sizes_its_batch_by_the_budget_is_exact_only_where_it_says_so(describes, exact):
    """Issue 42: "the default anytime_exact is wrong for a strategy that sizes its batches by the
    budget". A run capped at 2 calls sends 2 samples, not 4, so an undescribed batch sized by the
    budget left is exact at its boundaries only; the recorder sees the read itself
    (``Context.remaining_calls``), whatever the strategy declares (here the default, "every
    budget"). Described with ``within_batch``, its points inside the batch are the capped runs'
    answers, and the trace holds none of the looks (the recorder mutes it, not the strategy)."""
    task, example = _example("gsm8k")
    lm = ScriptedLM(["one", "two", "three", "four"])
    strategy = SizesItsBatchByTheBudget()
    strategy.describes = describes
    assert strategy.anytime_exact == "every budget"
    record, events = await run_example(strategy, task, example, EvalResources(lm=lm), EvalSettings())
    assert record.anytime["exact"] == exact
    at = {p["calls"]: p["answer"] for p in record.anytime["points"]}
    assert at == ({0: "", 1: "one", 2: "two", 3: "three", 4: "four"} if describes else {0: "", 4: "four"})
    assert not any(e.get("name") == "a look inside the batch" for e in events)

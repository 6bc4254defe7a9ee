"""The trace-event schema (core/events.py) covers every event the package emits.

Statically: every ``.emit("type", ...)`` and ``malformed(...)`` call in
``src/thoughtloom`` names a type of :data:`EVENTS` with only its fields (and
all its required ones, where the call lists them). At run time: what the
eval runner writes to ``trace.jsonl`` fits the schema (the fuzz harness
checks every event of its runs the same way).
"""

import ast
import json
from pathlib import Path

import thoughtloom
from thoughtloom import strategies, tasks
from thoughtloom.core import Problem
from thoughtloom.core.events import (COMMON, EVENTS, MALFORMED_WHAT, RAW_CHARS, RENAMED, current_names,
                                     malformed, problems)
from thoughtloom.core.trace import Trace
from thoughtloom.eval import EvalResources, EvalSettings, evaluate
from thoughtloom.lm import Budget
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

SRC = Path(thoughtloom.__file__).parent


def emit_calls(root: Path) -> list[tuple[str, str | None, set[str], bool]]:
    """(where, event type or None if not a literal, keyword names, has **fields) of each
    ``<x>.emit(...)`` and ``malformed(trace, what, reason, raw, ...)`` call under ``root``."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            where = f"{path.relative_to(root)}:{node.lineno}"
            keywords = {k.arg for k in node.keywords if k.arg is not None}
            spread = any(k.arg is None for k in node.keywords)
            if name == "emit":
                first = node.args[0] if node.args else None
                literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
                out.append((where, literal, keywords, spread))
            elif name == "malformed":
                out.append((where, "malformed", keywords | {"what", "reason", "raw"}, spread))
    return out


def schema_violations(root: Path) -> list[str]:
    bad = []
    for where, kind, keywords, spread in emit_calls(root):
        if kind is None:
            bad.append(f"{where}: event type is not a literal string")
            continue
        spec = EVENTS.get(kind)
        if spec is None:
            bad.append(f"{where}: event type {kind!r} is not in core/events.py")
            continue
        unknown = keywords - set(spec.fields) - set(spec.optional) - set(COMMON)
        missing = set() if spread else set(spec.fields) - keywords
        bad += [f"{where}: {kind} field {f!r} is not in the schema" for f in sorted(unknown)]
        bad += [f"{where}: {kind} without its field {f!r}" for f in sorted(missing)]
    return bad


def test_every_emitted_event_is_in_the_schema_with_its_fields():
    assert schema_violations(SRC) == []


def test_every_event_in_the_schema_is_emitted_somewhere():
    emitted = {kind for _, kind, _, _ in emit_calls(SRC)}
    assert set(EVENTS) - emitted == set()


def test_the_check_catches_an_event_the_schema_does_not_know(tmp_path):
    (tmp_path / "mod.py").write_text(
        "def f(trace, kind):\n"
        "    trace.emit('plan', node='1', depth=0, question='q', steps=[], edges=[], levels=[])\n"  # fits
        "    trace.emit('surprise', x=1)\n"
        "    trace.emit('vote', tally={}, winner=None)\n"
        "    trace.emit('sample', index=0, answer='a', truncated=False, mood='glad')\n"
        "    trace.emit(kind)\n"
        "    malformed(trace, 'hgot_plan', 'unparseable', 'raw', colour='red')\n")
    assert schema_violations(tmp_path) == [
        "mod.py:3: event type 'surprise' is not in core/events.py",
        "mod.py:4: vote without its field 'confidence'",
        "mod.py:5: sample field 'mood' is not in the schema",
        "mod.py:6: event type is not a literal string",
        "mod.py:7: malformed field 'colour' is not in the schema",
    ]


def test_problems_of_one_event():
    trace = Trace(example="q1")
    malformed(trace, "hgot_plan", "unparseable", "x" * 2000, attempt=0)
    [event] = trace.events
    assert problems(event) == [] and len(event["raw"]) == RAW_CHARS
    assert problems({"type": "nope", "t": 0}) == ["unknown event type 'nope'"]
    assert problems({"type": "vote", "t": 0, "tally": {}, "winner": None, "confidence": 1, "mood": 1}) == [
        "vote: field 'mood' is not in the schema"]
    assert problems({"type": "error"}) == ["error: no field 't'", "error: no field 'error'"]


async def test_what_the_runner_writes_fits_the_schema(tmp_path):
    gsm = tasks.get("gsm8k")
    examples = [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(3)]
    sampled = iter(["The answer is: 1", "The answer is: 2", "no idea"] * 10)
    asking = iter(["Follow up: What is one?", "1", "no final answer here"] * 10)  # self-ask, closed book
    for name, reply, settings in (
            ("cot-sc", lambda req: next(sampled), EvalSettings(budget=Budget(max_calls=4))),
            ("self-ask", lambda req: next(asking), EvalSettings()),
            ("cot", lambda req: "4", EvalSettings(budget=Budget(max_calls=0)))):
        await evaluate(strategies.get(name)(), gsm, examples, EvalResources(ScriptedLM(reply)), tmp_path / name,
                       settings=settings)
    events = [json.loads(line) for name in ("cot-sc", "self-ask", "cot")
              for line in (tmp_path / name / "trace.jsonl").read_text().splitlines()]
    kinds = {e["type"] for e in events}
    assert {"llm_call", "sample", "vote", "budget_exceeded", "malformed", "retrieval"} <= kinds
    assert [p for e in events for p in problems(e)] == []


def test_renamed_names_lead_to_todays_and_old_ones_are_not_reused():
    """Issue 28: the tree-search kernel's events were sculpt_*, "old names still readable by
    the view": each old name maps to a type of the schema or a step of MALFORMED_WHAT, and
    no old name is a name of today."""
    assert set(RENAMED.values()) <= set(EVENTS) | set(MALFORMED_WHAT)
    assert not set(RENAMED) & (set(EVENTS) | set(MALFORMED_WHAT))
    assert RENAMED["sculpt_node"] == "tree_node" and RENAMED["sculpt_evaluation"] == "tree_evaluation"


def test_an_old_event_reads_with_todays_names_and_a_new_one_is_left_alone():
    old = {"type": "sculpt_eval", "t": 0.5, "example": "q1", "node": 2, "score": 0.7, "feedback": "ok",
           "evaluator": "model", "items": []}
    assert current_names(old) == {**old, "type": "tree_eval"} and old["type"] == "sculpt_eval"  # a copy
    bad = {"type": "malformed", "t": 0, "what": "sculpt_child", "reason": "truncated", "raw": "x"}
    assert current_names(bad) == {**bad, "what": "tree_child"} and problems(current_names(bad)) == []
    new = {"type": "tree_node", "t": 0, "node": 0}
    assert current_names(new) is new
    # only a malformed event's what is a step name; other fields and hostile types stay as they are
    other = {"type": "hgot_stop", "what": "sculpt_child", "t": 0}
    weird = {"type": ["sculpt_node"], "t": 0}
    assert current_names(other) is other and current_names(weird) is weird and current_names({}) == {}

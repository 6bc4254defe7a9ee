"""Trace.within: a step's events carry the scopes it runs in; steps side by side keep their own."""

import asyncio

from thoughtloom.core.events import problems
from thoughtloom.core.trace import Trace


def test_events_inside_a_scope_carry_it_and_nested_scopes_stack_outermost_first():
    trace = Trace(example="q1")
    trace.emit("phase", phase="before", step=None, of=None)
    with trace.within(step="decomp_handler", run="1.2.1"):
        trace.emit("phase", phase="outer", step=None, of=None)
        with trace.within(step="hgot_infer", node="1"):
            trace.emit("phase", phase="inner", step=None, of=None)
        trace.emit("phase", phase="outer again", step=None, of=None)
    trace.emit("phase", phase="after", step=None, of=None)
    got = {e["phase"]: e.get("within") for e in trace.events}
    outer = {"step": "decomp_handler", "run": "1.2.1"}
    assert got == {"before": None, "outer": [outer], "inner": [outer, {"step": "hgot_infer", "node": "1"}],
                   "outer again": [outer], "after": None}
    assert all(problems(e) == [] for e in trace.events)  # `within` is a common field of the schema
    assert [e["example"] for e in trace.events] == ["q1"] * 5


def test_steps_running_side_by_side_each_keep_their_own_scope():
    """Two steps interleave their events (each awaits between emits); each event carries its own
    step's scope, never the other's, and code outside both carries none."""
    trace = Trace()

    async def step(name: str) -> None:
        with trace.within(step=name):
            for i in range(3):
                trace.emit("phase", phase=name, step=i, of=3)
                await asyncio.sleep(0)

    async def both() -> None:
        await asyncio.gather(step("a"), step("b"))
        trace.emit("phase", phase="done", step=None, of=None)

    asyncio.run(both())
    order = [e["phase"] for e in trace.events]
    assert order[:6] != ["a"] * 3 + ["b"] * 3  # they did interleave
    for e in trace.events:
        assert e.get("within") == ([{"step": e["phase"]}] if e["phase"] != "done" else None)


def test_a_scope_belongs_to_its_own_trace():
    mine, other = Trace(), Trace()
    with mine.within(step="x"):
        other.emit("phase", phase="elsewhere", step=None, of=None)
        with other.within(step="y"):  # a scope on another trace starts afresh there
            other.emit("phase", phase="other's", step=None, of=None)
    assert [e.get("within") for e in other.events] == [None, [{"step": "y"}]]


def test_a_muted_trace_keeps_nothing_inside_a_scope_either():
    trace = Trace()
    with trace.within(step="x"), trace.muted():
        trace.emit("phase", phase="muted", step=None, of=None)
    assert trace.events == []

"""DecomP programs rebuilt from their trace.

Each executed step is a ``decomp_step`` event and each program's end a
``program_end``; ``run`` names the program run: ``"1"`` is the top program
and ``"1.3.2"`` the nested run that answered input 2 (a foreach item) of
step 3 of run ``"1"``, so nesting is read from the ids. ``kind`` says what
answered the step: a symbolic function, a prompt, retrieval, or a nested
program. Replies the decomposer wrote that could not be read as a step
(``malformed``, ``what: decomp_step``) stay with their run. A trace from
before events carried ``run`` has one run per (program, depth), unnested.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable


@dataclass
class ProgramStep:
    number: int
    handler: str
    kind: str  # symbolic, prompt, retrieval, program; "" in older traces
    operator: str
    question: str
    inputs: list[Any]
    answer: Any
    tokens: Any
    calls: Any
    error: Any
    children: list["ProgramRun"] = field(default_factory=list)


@dataclass
class ProgramRun:
    id: str
    program: str
    depth: int
    question: Any = None  # the input it answers (nested runs; the top run answers the example)
    status: str | None = None  # ok, malformed, step_limit, depth_limit; None: no program_end seen
    reason: str | None = None  # why a malformed program stopped (which step, the error)
    steps: list[ProgramStep] = field(default_factory=list)
    malformed: list[dict[str, Any]] = field(default_factory=list)


def _run_key(e: dict[str, Any]) -> str:
    run = e.get("run")
    return run if isinstance(run, str) and run else f"{e.get('program')}@{e.get('depth')}"


def programs(events: Iterable[dict[str, Any]]) -> list[ProgramRun]:
    """The top-level program runs the events describe (nested runs inside their steps); [] if none."""
    runs: dict[str, ProgramRun] = {}

    def run_of(e: dict[str, Any]) -> ProgramRun:
        key = _run_key(e)
        if key not in runs:
            depth = e.get("depth") if isinstance(e.get("depth"), int) else 0
            runs[key] = ProgramRun(key, str(e.get("program", "")), depth)
        return runs[key]

    for e in events:
        kind = e.get("type")
        if kind == "decomp_step":
            number = e.get("step") if isinstance(e.get("step"), int) else len(run_of(e).steps) + 1
            run_of(e).steps.append(ProgramStep(
                number, str(e.get("handler", "")), str(e.get("kind") or ""), str(e.get("operator", "")),
                str(e.get("question", "")), list(e.get("inputs") or []), e.get("answer"), e.get("tokens"),
                e.get("calls"), e.get("error")))
        elif kind == "program_end":
            run_of(e).status = str(e.get("status"))
            run_of(e).reason = str(e["reason"]) if e.get("reason") else None
        elif kind == "malformed" and e.get("what") == "decomp_step":
            run_of(e).malformed.append(e)
    return _nest(runs)


def _nest(runs: dict[str, ProgramRun]) -> list[ProgramRun]:
    """Put each nested run under the step that started it; return the runs that have no caller."""
    top = []
    for key, run in runs.items():
        parts = key.split(".")
        caller = runs.get(".".join(parts[:-2])) if len(parts) >= 3 else None
        step_no, item = (_int(parts[-2]), _int(parts[-1])) if len(parts) >= 3 else (None, None)
        step = next((s for s in caller.steps if s.number == step_no), None) if caller else None
        if step is None:
            top.append(run)
            continue
        step.children.append(run)
        if item is not None and 0 < item <= len(step.inputs):
            run.question = step.inputs[item - 1]
    for run in runs.values():
        for step in run.steps:
            step.children.sort(key=lambda r: _int(r.id.rsplit(".", 1)[-1]) or 0)
    return top


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None

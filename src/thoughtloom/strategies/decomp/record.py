"""The record of an executed program: a :class:`Run` and its :class:`StepRecord` s.

The controller fills them in as a program runs. ``Run.to_json()`` is what
reaches ``Result.details["executed"]`` and the results file (its keys and
their order are the format); ``Run.render()`` prints the program as the
paper does, nested programs indented.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.types import Passage
from .language import Answer, render_value


@dataclass
class StepRecord:
    """One executed step: what it asked, what it answered, what it cost."""

    line: str  # the step as a QS line
    handler: str
    operator: str
    inputs: list[str]  # the handler's inputs after #k substitution (one per foreach item)
    answer: Answer  # the combined answer
    tokens: int
    calls: int
    error: str | None  # the first handler error of the step, if any
    children: list[Run]  # nested program runs (hierarchical and recursive handlers)

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "handler": self.handler, "operator": self.operator,
                "inputs": self.inputs, "answer": self.answer, "tokens": self.tokens, "calls": self.calls,
                "error": self.error, "children": [c.to_json() for c in self.children]}


@dataclass
class Run:
    """One program on one question: its steps so far and the controller's state for it."""

    program: str
    question: str
    context: str
    depth: int
    steps: list[StepRecord] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    evidence: list[Passage] = field(default_factory=list)  # every passage retrieved, first seen first
    id: str = "1"  # "1" the top program; "1.3.2": the run answering input 2 of step 3 of run "1"
    script: list[str] | None = None  # the reference program, when it runs in place of the decomposer
    done: bool = False
    status: str = "ok"  # ok | malformed | step_limit | depth_limit | budget (stopped before its end)
    # why a program stopped: a malformed one's step, tries and error; a nested run's that did not finish
    stop_reason: str | None = None
    unread: str = ""  # the last step reply that could not be read (the stop reason if no re-ask reads one)
    tokens: int = 0
    calls: int = 0
    format_errors: int = 0
    resampled: int = 0  # decomposer re-asks at retry_temperature (max_retries > 0), here and in nested programs
    cut_off: int = 0  # handler replies cut off at max_tokens, here and in nested programs
    evidence_shortened: int = 0  # passages a prompt showed shortened to fit its evidence budget (nested too)
    evidence_dropped: int = 0  # passages a prompt left out to fit its evidence budget (nested too)

    def final(self) -> Answer:
        return self.answers[-1] if self.answers else ""

    def to_json(self) -> dict[str, Any]:
        return {"program": self.program, "question": self.question, "depth": self.depth,
                "status": self.status, "steps": [s.to_json() for s in self.steps], "answer": self.final(),
                "tokens": self.tokens, "calls": self.calls, "format_errors": self.format_errors,
                "stop_reason": self.stop_reason}

    def render(self, indent: str = "") -> str:
        """The executed program as the paper prints it; nested programs indented."""
        lines = [f"{indent}QC: {self.question}"]
        for step in self.steps:
            lines.append(f"{indent}QS: {step.line}")
            for child in step.children:
                lines.append(child.render(indent + "    "))
            note = f"   [error: {step.error}]" if step.error else ""
            lines.append(f"{indent}A: {render_value(step.answer)}{note}")
        why = f" at {self.stop_reason}" if self.stop_reason else ""
        end = "QS: [EOQ]" if self.status == "ok" else f"(stopped: {self.status}{why})"
        lines.append(f"{indent}{end}")
        return "\n".join(lines)

"""``decomp`` and its baselines as registered strategies.

``decomp`` runs the task's decomposed program (``--set program=NAME`` picks
another). The baselines are fixed programs in the same controller, so every
method is traced, counted and printed the same way:

* ``decomp-cot``: one chain of thought + pattern extraction (all tasks);
* ``decomp-cot-rollout``, ``decomp-least-to-most``: k-th letter baselines;
* ``decomp-nodecomp-ctxt``, ``decomp-no-ctxt``: open-domain QA baselines.

``--set decomposer=reference --set handlers=symbolic`` is the controller
check: the task's reference program with symbolic handlers.

Only a program that reached ``[EOQ]`` answers (the paper: at ``[EOQ]`` the
last answer is the prediction). One that stopped first -- ``malformed`` (its
decomposer replies could not be read; ``stop_reason``, printed on its last
line, says at which step and why), ``step_limit``, ``depth_limit`` (also
when a nested program stopped so), or ``budget`` (a spent budget) -- has no
answer: its last step answered a sub-question, not the question. Its
record keeps the program as far as it ran and its ``status``.
"""

from __future__ import annotations

import re

from ...core.errors import ConfigError
from ...core.protocols import TaskView
from ...core.types import Problem
from ..context import Context
from ..interface import Strategy
from ..registry import register
from ..result import Result
from .catalogue import DEFAULTS, default_name, default_program, get_program
from .config import DecompConfig
from .controller import Controller
from .handlers import Call
from .language import render_value
from .record import Run
from .step_handlers import parse_bindings


class _DecompBase(Strategy):
    Config = DecompConfig
    paper = "DecomP"

    def __init__(self, config: DecompConfig | None = None) -> None:
        super().__init__(config)
        parse_bindings(self.config.bind)  # a bad binding is refused when the strategy is built, before any call

    @classmethod
    def supports(cls, task: TaskView) -> bool:
        """The tasks this strategy has a default program for, by name or by shape (``--set program=`` runs others)."""
        return default_name(cls.name, task) is not None

    def retrieves(self, task: TaskView) -> bool:
        """Whether the program run for ``task`` has a retrieval step (Decomp-Ctxt, NoDecomp-Ctxt)."""
        try:
            program = get_program(self.config.program) if self.config.program else default_program(self.name, task)
        except ConfigError:  # no program: the run refuses it before any search
            return False
        steps = program.handlers if not program.fixed or program.reference is None else program.reference("")
        return any(re.match(r"\(?retrieve", step) for step in steps)

    def notes(self, task: TaskView) -> list[str]:
        """The program picked by the task's question shape (a task with no program of its own)."""
        if self.config.program or task.name in DEFAULTS.get(self.name, {}):
            return []
        name = default_name(self.name, task)
        if name is None:
            return []
        program = get_program(name)
        return [f"{self.name} runs program {name} on task {task.name} ({program.description or 'its default'}); "
                "--set program=NAME picks another"]

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        cfg = self.config
        program = get_program(cfg.program) if cfg.program else default_program(self.name, ctx.task)
        controller = Controller(ctx, cfg, k=cfg.k or program.k)
        call = Call(problem.question, problem.context)
        ctx.best_so_far(lambda: _stopped(controller, program.name))
        (run,) = await controller.run(program, [call], depth=0)
        return _result(run)

    def report(self, result: Result) -> str:
        return result.text


def _result(run: Run) -> Result:
    """The program's last answer if it reached ``[EOQ]`` (none if it stopped), its rendering
    and its record."""
    answer = run.final() if run.status == "ok" else ""
    text = (answer if isinstance(answer, str) else render_value(answer)).strip().strip('"').strip()
    return Result(
        answer=text,
        text=run.render(),
        truncated=not text and run.status == "ok" and run.cut_off > 0,  # no answer: a reply was cut off
        details={"program": run.program, "status": run.status, "steps": len(run.steps),
                 "format_errors": run.format_errors, "resampled": run.resampled, "cut_off": run.cut_off,
                 "evidence_shortened": run.evidence_shortened, "evidence_dropped": run.evidence_dropped,
                 "executed": run.to_json()},
    )


def _stopped(controller: Controller, program: str) -> Result:
    """A budget stop's result: the program as far as it ran, with no answer (it never
    reached ``[EOQ]``)."""
    if not controller.started:
        return Result(answer="", details={"program": program})
    run = controller.started[0]
    status, run.status = run.status, "budget"
    try:
        return _result(run)
    finally:  # an anytime look goes on with the run as it was
        run.status = status


@register("decomp")
class Decomp(_DecompBase):
    """Decomposed Prompting: a decomposer writes a program of sub-task handler calls."""


@register("decomp-cot")
class DecompCoT(_DecompBase):
    """DecomP baseline: one chain of thought, answer by pattern extraction."""


@register("decomp-cot-rollout")
class DecompCoTRollout(_DecompBase):
    """DecomP baseline (k-th letter): CoT whose demos spell out every letter."""


@register("decomp-least-to-most")
class DecompLeastToMost(_DecompBase):
    """DecomP baseline (k-th letter): least-to-most over growing prefixes."""


@register("decomp-nodecomp-ctxt")
class DecompNoDecompCtxt(_DecompBase):
    """DecomP baseline (open-domain QA): one retrieval of K passages, then answer."""


@register("decomp-no-ctxt")
class DecompNoCtxt(_DecompBase):
    """DecomP baseline (open-domain QA): closed-book answer."""

"""``decomp`` and its baselines as registered strategies.

``decomp`` runs the task's decomposed program (``--set program=NAME`` picks
another). The baselines are fixed programs in the same controller, so every
method is traced, counted and printed the same way:

* ``decomp-cot``: one chain of thought + pattern extraction (all tasks);
* ``decomp-cot-rollout``, ``decomp-least-to-most``: k-th letter baselines;
* ``decomp-nodecomp-ctxt``, ``decomp-no-ctxt``: open-domain QA baselines.

``--set decomposer=reference --set handlers=symbolic`` is the controller
check: the task's reference program with symbolic handlers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.errors import BudgetExceeded, ConfigError
from ...core.types import Problem
from ..base import Context, Result, Strategy, register
from .controller import Engine, EngineSettings, render_program
from .handlers import Call
from .catalogue import default_program, get_program
from .language import render_value


@dataclass(frozen=True)
class DecompConfig:
    program: str = ""  # empty: the task's default program for this strategy
    decomposer: str = "lm"  # lm | reference
    handlers: str = "lm"  # lm | symbolic (symbolic functions win over prompts)
    max_steps: int = 10
    max_depth: int = 12
    max_retries: int = 2
    retry_temperature: float = 0.7
    decomposer_max_tokens: int = 96
    k: int = 0  # passages per retrieval; 0: the program's default
    structured: bool = False  # decomposer steps as schema-constrained JSON
    max_calls: int = 300  # finite bound on model calls per question (a runaway program ends)


class _DecompBase(Strategy):
    Config = DecompConfig

    async def run(self, problem: Problem, ctx: Context) -> Result:
        cfg = self.config
        if cfg.decomposer not in ("lm", "reference") or cfg.handlers not in ("lm", "symbolic"):
            raise ConfigError("decomposer must be lm|reference and handlers lm|symbolic")
        program = get_program(cfg.program) if cfg.program else default_program(self.name, ctx.task.name)
        settings = EngineSettings(cfg.decomposer, cfg.handlers, cfg.max_steps, cfg.max_depth,
                                  cfg.max_retries, cfg.retry_temperature, cfg.decomposer_max_tokens,
                                  cfg.k or program.k, cfg.structured)
        engine = Engine(ctx, settings)
        call = Call(problem.question, problem.context)
        try:
            (run,) = await engine.run(program, [call], depth=0)
        except BudgetExceeded:
            return Result(answer="", details={"budget_exceeded": True, "program": program.name})
        answer = run.final()
        text = answer if isinstance(answer, str) else render_value(answer)
        return Result(
            answer=text.strip().strip('"').strip(),
            text=render_program(run.to_json()),
            details={"program": program.name, "status": run.status, "steps": len(run.steps),
                     "format_errors": run.format_errors, "executed": run.to_json()},
        )

    def report(self, result: Result) -> str:
        return result.text


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

"""A strategy, or a plain function, as one step of another strategy: the seam that DecomP's handlers
(:mod:`.decomp.step_handlers`) and HGOT's Infer (:mod:`.hgot.infer_steps`) share.

A step is named by a *spec*, ``NAME [KEY=VALUE ...]``: a registered strategy and its options
(``"cot-sc n=3 temperature=0.5"``), read by the one options coercer (:func:`parse_spec`,
:func:`build_step`). :func:`run_step` runs it on one sub-problem with the run's own context:

- the same task, retriever, judge, prompt folder, seed and role models, and the model the outer
  method gives the step (DecomP's ``handler`` role, HGOT's Infer model);
- its calls go through the run's one budget (the outer ``Strategy.run`` already put ``ctx.lm``
  behind the question's meter and the outer strategy's cap), and are counted for the step
  (:class:`StepRun`), so the outer method records what its step spent without counting by hand
  while other steps run beside it;
- its events go into the run's one trace inside ``trace.within(step=..., ...)``: each carries
  ``within``, the scopes it ran in (its ``llm_call`` events too);
- the step strategy's own ``max_calls`` bounds the step: when it is spent the step ends with the
  step strategy's best result so far (``StepRun.result.stopped == "budget"``) and the outer run
  goes on; when the *run's* budget is spent, :class:`BudgetExceeded` ends the whole run, and the
  outer strategy answers with its own best so far (the step's best so far never replaces it).

:func:`run_function_step` does the same for a function ``fn(question, ctx)`` (sync or async).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import shlex
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence, TypeVar

from ..core.errors import BudgetExceeded, ConfigError
from ..core.protocols import LM, TaskView
from ..core.types import Completion, Problem, Request
from ..lm.meter import remaining_calls
from .context import Context
from .interface import Strategy
from .result import Result, SoFar

T = TypeVar("T")


@dataclass(frozen=True)
class StepSpec:
    """A step named by a spec: a strategy (or a registered function) and its options as given."""

    name: str
    options: tuple[tuple[str, str], ...] = ()

    def render(self) -> str:
        return " ".join([self.name, *(f"{k}={v}" for k, v in self.options)])


def parse_spec(text: str, where: str) -> StepSpec:
    """``NAME [KEY=VALUE ...]`` (shell-style words, so a value may be quoted) as a :class:`StepSpec`;
    a ConfigError naming ``where`` (the option it came from) for an empty spec or a word without ``=``."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ConfigError(f"bad value for {where}: {text!r} ({exc})") from None
    if not words:
        raise ConfigError(f"bad value for {where}: {text!r} (expected NAME [KEY=VALUE ...])")
    options = []
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise ConfigError(f"bad value for {where}: {word!r} in {text!r} (an option is KEY=VALUE)",
                              hint=f"e.g. {words[0]} n=3")
        options.append((key.strip(), value))
    return StepSpec(words[0], tuple(options))


def build_step(spec: StepSpec, task: TaskView | None = None, where: str = "") -> Strategy:
    """The registered strategy ``spec`` names, with its options read by the one coercer (an unknown
    name or option, or a bad value, is a ConfigError before any model call; ``where``, the option
    the spec came from, heads its message)."""
    from . import build  # the package's builder; imported here, the package imports this module's users

    try:
        return build(spec.name, dict(spec.options), task)
    except ConfigError as exc:
        if not where:
            raise
        raise ConfigError(f"{where}: {exc.args[0] if exc.args else exc}", hint=exc.hint) from None


@dataclass
class _Tally:
    """What one step sent and spent; ``bound``: the step strategy's own ``max_calls`` (None: only the run's)."""

    bound: int | None = None
    sent: int = 0
    calls: int = 0
    tokens: int = 0


class StepBudgetSpent(BudgetExceeded):
    """The step strategy's own ``max_calls`` is spent: the step ends, the outer run goes on."""


@dataclass
class _StepLM:
    """``inner`` (a model of the run, behind its meter) for one step: counts the step's calls and
    tokens and holds it to its own bound. Its ``remaining_calls`` is the tighter of the step's bound
    and the run's, so a step strategy that sizes a batch to the budget left sees both."""

    inner: LM
    tally: _Tally
    context: Context

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def remaining_calls(self) -> int | None:
        own = None if self.tally.bound is None else max(0, self.tally.bound - self.tally.sent)
        other = remaining_calls(self.inner)
        return own if other is None else other if own is None else min(own, other)

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        requests = list(requests)
        t = self.tally
        if t.bound is not None and t.sent + len(requests) > t.bound:
            self.context.trace.emit("budget_exceeded", limit="strategy_calls", cap=t.bound, used=t.sent)
            raise StepBudgetSpent(f"the step's bound of {t.bound} calls is spent ({t.sent} used)")
        t.sent += len(requests)
        completions = await self.inner.generate(requests)
        t.calls += len(completions)
        t.tokens += sum(c.usage.total_tokens for c in completions)
        return completions

    async def aclose(self) -> None:  # the run's model is closed by its owner
        return None


@dataclass(frozen=True)
class StepRun:
    """A step's result and what it spent (calls answered and their tokens)."""

    result: Result
    calls: int
    tokens: int


def step_context(ctx: Context, tally: _Tally, lm: LM | None = None) -> Context:
    """``ctx`` for one step: ``lm`` (default ``ctx.lm``) and every role's model behind the step's
    tally; a best-so-far of its own (a step's budget stop must not become the run's answer, and
    ``Strategy.run`` sees an outer run and adds no second cap); no anytime recorder (the run's
    records the outer strategy's answers, not a step's)."""
    role_lms = {role: _StepLM(m, tally, ctx) for role, m in ctx.role_lms.items()}
    return dataclasses.replace(ctx, lm=_StepLM(lm if lm is not None else ctx.lm, tally, ctx),
                               role_lms=role_lms, so_far=SoFar(), anytime=None)


async def run_step(strategy: Strategy, problem: Problem, ctx: Context, /, *, lm: LM | None = None,
                   **scope: Any) -> StepRun:
    """``strategy`` on ``problem`` as a step of the run ``ctx`` belongs to (see the module): its events
    inside ``ctx.trace.within(**scope)``, its calls counted, its own ``max_calls`` its bound."""
    tally = _Tally(bound=strategy.call_bound())
    child = step_context(ctx, tally, lm)
    assert child.so_far is not None
    with ctx.trace.within(**scope):
        try:
            result = await strategy.run(problem, child)
        except StepBudgetSpent:  # the step's own bound: its best so far; the run's budget ends the run
            result = child.so_far.stopped("budget")
    return StepRun(result, tally.calls, tally.tokens)


StepFunction = Callable[[str, Context], Any]


async def run_function_step(fn: StepFunction, question: str, ctx: Context, /, *, lm: LM | None = None,
                            **scope: Any) -> tuple[Any, int, int]:
    """``fn(question, step_ctx)`` (awaited if it returns an awaitable) as a step: its value, and the
    calls and tokens it spent through ``step_ctx``; bounded by the run's budget."""
    tally = _Tally()
    with ctx.trace.within(**scope):
        value = fn(question, step_context(ctx, tally, lm))
        if inspect.isawaitable(value):
            value = await value
    return value, tally.calls, tally.tokens


async def all_of(steps: Sequence[Awaitable[T]]) -> list[T]:
    """Independent steps, concurrently, in order; the first to fail (a spent budget) cancels the
    others, so none runs on after the run has stopped."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_awaited(one)) for one in steps]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [t.result() for t in tasks]


async def _awaited(one: Awaitable[T]) -> T:
    return await one

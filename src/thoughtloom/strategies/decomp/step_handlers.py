"""Handlers that are whole strategies or plain functions: DecomP's handler seam.

Every handler answers a batch of :class:`~.handlers.Call`\\ s with one :class:`~.handlers.Outcome`
each (:class:`~.handlers.Handler`, the protocol). Besides prompt files, ``@symbolic`` functions,
retrieval and nested programs (:mod:`.handlers`, :mod:`.controller`), a handler may be

* a **registered strategy**, named in a program as a handler (``(cot-sc) "What is 6 * 7?"``) or
  bound to a handler name of the program with the ``bind`` option: ``--set bind="math_cot=sculpt-mcts
  rollouts=2"`` (several bindings separated by ``;``): each of its questions is one run of that
  strategy (:func:`thoughtloom.strategies.steps.run_step`);
* a **function** registered with :func:`register_handler`: ``fn(question, ctx)``, sync or async,
  returning the answer (a string or a list).

Either runs with the run's own :class:`~thoughtloom.strategies.context.Context` (the task, the
retriever, the prompt folder, the role models; ``ctx.lm`` is the ``handler`` role's model), its
calls count against the run's one budget and are the step's ``calls`` and ``tokens`` in its
``decomp_step`` event, and its events are in the run's trace with ``within: [{"step":
"decomp_handler", "run": ..., "handler": ..., "strategy": ...}]`` (``run``: the id a nested program
answering that input would have). A strategy's own ``max_calls`` bounds its step.

The order a name resolves in: a ``bind`` of this run (it wins over every other meaning of the
name), a program (the controller), a registered function, a built-in or prompt or symbolic handler
(:func:`.handlers.resolve`), a registered strategy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ...core.errors import ConfigError
from ...core.types import Problem
from ..context import Context
from ..registry import available
from ..steps import StepFunction, StepSpec, all_of, build_step, parse_spec, run_function_step, run_step
from .handlers import Call, Handler, HandlerEnv, Outcome, render_evidence, resolve

_FUNCTIONS: dict[str, StepFunction] = {}


def register_handler(name: str, fn: StepFunction | None = None):
    """Register ``fn(question, ctx)`` as the handler ``name`` (as a decorator, or called with ``fn``);
    a name another function holds is refused."""
    def deco(f: StepFunction) -> StepFunction:
        if name in _FUNCTIONS and _FUNCTIONS[name] is not f:
            raise ValueError(f"handler function {name!r} is registered twice")
        _FUNCTIONS[name] = f
        return f

    return deco(fn) if fn is not None else deco


def function_names() -> set[str]:
    return set(_FUNCTIONS)


def _context_of(env: HandlerEnv) -> Context:
    if env.ctx is None:
        raise ConfigError("a strategy or function handler needs the run's context (HandlerEnv.ctx)")
    return env.ctx


def _problem_text(call: Call) -> str:
    """The call's context and the passages its run retrieved so far, as the step's problem context."""
    evidence = render_evidence(call.evidence)[0] if call.evidence else ""
    return "\n\n".join(part for part in (call.context, evidence) if part)


class StrategyHandler(Handler):
    """A registered strategy as a handler: each call one run of it, concurrently (see the module)."""

    kind = "strategy"

    def __init__(self, name: str, spec: StepSpec) -> None:
        self.name, self.spec = name, spec

    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]:
        ctx = _context_of(env)
        strategy = build_step(self.spec, ctx.task)

        async def one(call: Call) -> Outcome:
            problem = Problem(f"decomp:{call.run_id}", call.question, _problem_text(call))
            step = await run_step(strategy, problem, ctx, lm=env.lm, step="decomp_handler", run=call.run_id,
                                  handler=self.name, strategy=self.spec.name)
            answer = step.result.answer
            error = None if answer else f"{self.spec.name} gave no answer" + (
                f" (stopped: {step.result.stopped})" if step.result.stopped else "")
            return Outcome(answer, tokens=step.tokens, calls=step.calls, error=error)

        return await all_of([one(c) for c in calls])


class FunctionHandler(Handler):
    """A registered function as a handler: ``fn(question, ctx)`` per call, concurrently."""

    kind = "function"

    def __init__(self, name: str, fn: StepFunction) -> None:
        self.name, self.fn = name, fn

    async def answer(self, calls: Sequence[Call], env: HandlerEnv) -> list[Outcome]:
        ctx = _context_of(env)

        async def one(call: Call) -> Outcome:
            value, calls_, tokens = await run_function_step(self.fn, call.question, ctx, lm=env.lm,
                                                            step="decomp_handler", run=call.run_id,
                                                            handler=self.name, strategy=self.name)
            if not isinstance(value, (str, list)):
                return Outcome("", tokens=tokens, calls=calls_,
                               error=f"handler {self.name!r} returned {type(value).__name__}, not str or list")
            return Outcome(value, tokens=tokens, calls=calls_)

        return await all_of([one(c) for c in calls])


@dataclass(frozen=True)
class Binding:
    """``NAME=TARGET [KEY=V ...]``: the handler name a program calls, and the strategy (with its
    options) or registered function that answers it."""

    name: str
    target: StepSpec


def parse_bindings(text: str) -> dict[str, Binding]:
    """The ``bind`` option: ``NAME=TARGET [KEY=V ...]`` separated by ``;``. Each target is checked
    here, before any model call: a registered function (no options), or a registered strategy whose
    options the one coercer reads."""
    out: dict[str, Binding] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        name, sep, rest = part.partition("=")
        name = name.strip()
        if not sep or not name or not rest.strip():
            raise ConfigError(f"bad value for decomp option bind: {part!r} (expected NAME=STRATEGY [KEY=V ...])",
                              hint="e.g. bind=\"math_cot=sculpt-mcts rollouts=2\"")
        spec = parse_spec(rest, "decomp option bind")
        if spec.name in _FUNCTIONS:
            if spec.options:
                raise ConfigError(f"bad value for decomp option bind: {part!r} (a function handler takes no options)")
        else:
            build_step(spec, where=f"decomp option bind {part!r}")  # an unknown strategy or a bad option fails now
        out[name] = Binding(name, spec)
    return out


def resolve_handler(name: str, bindings: dict[str, Binding], *, prefer_symbolic: bool,
                    prompt_dir: str | Path | None, task: str = "") -> Handler:
    """The handler for ``name`` (not a program), in the order the module gives."""
    if name in bindings:
        target = bindings[name].target
        if target.name in _FUNCTIONS:
            return FunctionHandler(name, _FUNCTIONS[target.name])
        return StrategyHandler(name, target)
    if name in _FUNCTIONS:
        return FunctionHandler(name, _FUNCTIONS[name])
    try:
        return resolve(name, prefer_symbolic=prefer_symbolic, prompt_dir=prompt_dir, task=task)
    except ConfigError:
        if name in available():
            return StrategyHandler(name, StepSpec(name))
        raise


def step_names(bindings: dict[str, Binding]) -> set[str]:
    """Handler names this seam adds to what a program may call: the run's bindings and the
    registered functions (strategies only where a program lists them or its script names them)."""
    return set(bindings) | set(_FUNCTIONS)

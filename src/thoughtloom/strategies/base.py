"""What every strategy is: a frozen config plus ``run(problem, ctx) -> Result``.

Strategies are stateless: all per-run state lives in local variables and in
the :class:`Context` the caller builds for each question, so one strategy
object serves any number of concurrent questions.

Every strategy has a finite default bound on its model calls: a
``max_calls`` option in its config (:data:`DEFAULT_MAX_CALLS` unless it says
otherwise), shown by ``thoughtloom strategies``. ``run`` sees ``ctx.lm``
behind a :class:`CallCap`, so a run that would pass the bound gets
:class:`BudgetExceeded` however its replies steer it, e.g. a decomposer that
keeps calling its own program.

Budget stops are caught in one place: the wrapper every strategy's ``run``
goes through. A spent budget (the strategy's ``max_calls``, the runner's
call or token budget) ends the run with the strategy's best result so far,
marked ``Result.stopped = "budget"``; a strategy says what that result is
as it goes with :meth:`Context.best_so_far` (no answer if it never does),
and never catches :class:`BudgetExceeded` itself.

A strategy retrieves only through :meth:`Context.search`, which handles
the closed-book case and traces every search as one ``retrieval`` event.

A strategy registers itself by name so the CLI and the eval runner can
address it::

    @register("cot")
    class ChainOfThought(Strategy):
        Config = CoTConfig
        async def run(self, problem, ctx): ...
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

from ..core.errors import BudgetExceeded
from ..core.names import unknown
from ..core.protocols import SearchTask, TaskView
from ..core.types import Problem
from ..lm.meter import CallCap
from .context import Context
from .prompting import LAYOUTS, LayoutChecked, check_layout, demo_turn, few_shot, finished, render_demos
from .result import Result, SoFar
from .vote import vote_samples


#: A strategy's default bound on model calls per question (``max_calls``).
DEFAULT_MAX_CALLS = 1000


def _capped(run: typing.Callable) -> typing.Callable:
    """``run`` with ``ctx.lm`` behind the config's ``max_calls``, and the one
    catch of a budget stop (once, however deep the super() chain)."""

    @functools.wraps(run)
    async def capped_run(self: "Strategy", problem: Problem, ctx: Context) -> "Result":
        if ctx.so_far is not None:  # an outer run (super() or a calling strategy) stops it
            return await run(self, problem, ctx)
        max_calls = getattr(self.config, "max_calls", None)
        lm = CallCap(ctx.lm, max_calls, ctx.trace) if max_calls is not None else ctx.lm
        so_far = SoFar()
        if ctx.anytime is not None:  # the anytime recorder looks at the same best result so far
            ctx.anytime.watch(so_far.peek)
        try:
            return await run(self, problem, dataclasses.replace(ctx, lm=lm, so_far=so_far))
        except BudgetExceeded:  # the question's budget is spent: the best result so far
            return so_far.stopped("budget")

    capped_run.__capped__ = True  # type: ignore[attr-defined]
    return capped_run


@dataclass(frozen=True)
class NoConfig:
    pass


#: What a strategy may need of a task (``Strategy.needs``): nothing, open-domain
#: questions (answered from retrieved passages), or a SearchTask view (candidates to
#: generate, evaluate and revise; other tasks are searched with generic prompts).
NEEDS = ("", "open_domain", "search")


class Strategy(ABC):
    name: ClassVar[str] = ""
    Config: ClassVar[type] = NoConfig
    #: the paper it comes from ("DecomP", "HGOT", "ThoughtSculpt"), or "baselines"
    paper: ClassVar[str] = "baselines"
    #: what a task must offer for this strategy to be built for it (one of NEEDS)
    needs: ClassVar[str] = ""
    #: named sets of option values (``--set preset=NAME``, a suite's ``preset = "NAME"``); options
    #: given beside the preset override its values (:func:`~thoughtloom.strategies.config.resolve_options`)
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    #: where the anytime trajectory's point at budget b equals a run capped at b (one of
    #: :data:`.anytime.EXACT`; a strategy that reads the budget left says where it does not)
    anytime_exact: ClassVar[str] = "every budget"

    @classmethod
    def supports(cls, task: TaskView) -> bool:
        """Whether the strategy is built for ``task`` (``thoughtloom strategies`` lists these)."""
        if cls.needs == "open_domain":
            return bool(getattr(task, "open_domain", False))
        if cls.needs == "search":
            return isinstance(task, SearchTask)
        return True

    def __init__(self, config: Any = None) -> None:
        self.config = config if config is not None else self.Config()
        #: where each option's value came from (set by ``strategies.build``; empty for a config given directly)
        self.sources: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        run = cls.__dict__.get("run")
        if run is not None and not getattr(run, "__isabstractmethod__", False) \
                and not getattr(run, "__capped__", False):
            cls.run = _capped(run)  # type: ignore[method-assign]

    @abstractmethod
    async def run(self, problem: Problem, ctx: Context) -> Result: ...

    def report(self, result: Result) -> str:
        """A human-readable account of how the answer was reached (the executed
        program, the question hierarchy, the search tree...), printed by
        ``thoughtloom run``. Empty by default."""
        return ""


_REGISTRY: dict[str, type[Strategy]] = {}


def register(name: str):
    def deco(cls: type[Strategy]) -> type[Strategy]:
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"strategy {name!r} is registered twice")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return deco


def get(name: str) -> type[Strategy]:
    from . import _load_builtins

    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise unknown("strategy", name, available()) from None


def available() -> list[str]:
    from . import _load_builtins

    _load_builtins()
    return sorted(_REGISTRY)

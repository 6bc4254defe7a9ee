"""What every strategy is: a frozen config plus ``solve(problem, ctx) -> Result``.

Strategies are stateless: all per-run state lives in local variables and in
the :class:`~.context.Context` the caller builds for each question, so one
strategy object serves any number of concurrent questions.

A strategy writes :meth:`Strategy.solve`; callers call :meth:`Strategy.run`,
which is final (a subclass that defines ``run`` is a TypeError) and is the
one wrapper around every ``solve``:

- it puts ``ctx.lm`` (and every role's model, ``ctx.role_lms``) behind one
  :class:`~thoughtloom.lm.meter.CallCap` of :meth:`Strategy.call_bound`: the
  config's declared ``max_calls``; a config without that field is bounded by
  the run's budget, or by :data:`DEFAULT_MAX_CALLS` where there is none. Every strategy has a finite bound on its model calls
  (shown by ``thoughtloom strategies``), so a run that would pass it gets
  :class:`BudgetExceeded` however its replies steer it, e.g. a decomposer
  that keeps calling its own program;
- it is the one place a budget stop is caught. A spent budget (the
  strategy's ``max_calls``, the runner's call or token budget) ends the run
  with the strategy's best result so far, marked ``Result.stopped =
  "budget"``; a strategy says what that result is as it goes with
  :meth:`Context.best_so_far` (no answer if it never does), and never
  catches :class:`BudgetExceeded` itself;
- it shows the eval runner's anytime recorder (``ctx.anytime``) the same
  best result so far (:mod:`.anytime`).

It does this once per question: a ``solve`` that calls ``super().solve``
runs inside the same wrapper, and a strategy that runs another one
(``await other.run(problem, ctx)``) gets its ``solve`` without a second cap
or catch (the outer run's ``ctx.so_far`` is set), so the stop reaches the
outermost run, whose answer is the latest best so far either reported.

A strategy registers itself by name so the CLI and the eval runner can
address it (:mod:`.registry`)::

    @register("cot")
    class ChainOfThought(Strategy):
        Config = CoTConfig
        async def solve(self, problem, ctx): ...
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, NamedTuple, Sequence, final

from ..core.errors import BudgetExceeded
from ..core.protocols import SearchTask, TaskView
from ..core.types import Problem
from ..lm.meter import CallCap, remaining_calls
from .context import Context
from .result import Result, SoFar

#: A strategy's default bound on model calls per question (``max_calls``).
DEFAULT_MAX_CALLS = 1000


@dataclass(frozen=True)
class NoConfig:
    pass


def declares_max_calls(config_type: type) -> bool:
    """Whether a strategy's config class declares a ``max_calls`` field (a dataclass field: the
    option ``--max-calls`` and ``--set max_calls=`` set), its own call bound."""
    return dataclasses.is_dataclass(config_type) and any(f.name == "max_calls"
                                                         for f in dataclasses.fields(config_type))


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
    #: methods a subclass may not define, each with what it writes instead: a definition would never be
    #: called (or would replace the wrapper), so it is refused when the class is made
    retired: ClassVar[Mapping[str, str]] = {
        "run": "a strategy writes solve(problem, ctx) and Strategy.run wraps it with the call cap and the budget stop",
    }

    @classmethod
    def supports(cls, task: TaskView) -> bool:
        """Whether the strategy is built for ``task`` (``thoughtloom strategies`` lists these)."""
        if cls.needs == "open_domain":
            return bool(task.open_domain)
        if cls.needs == "search":
            return isinstance(task, SearchTask)
        return True

    def retrieves(self, task: TaskView) -> bool:
        """Whether this strategy searches a retriever on ``task``; without one (no ``--index``, no
        pooled paragraphs) its every search finds nothing: it runs closed book."""
        return type(self).needs == "open_domain"

    def notes(self, task: TaskView) -> list[str]:
        """Choices this strategy made for ``task`` that a user did not ask for, one line each (shown before a
        run starts; none by default)."""
        return []

    def demo_annotation(self) -> DemoAnnotation | None:
        """The demonstrations this strategy annotates itself before an eval runs it (HGOT+KNN and
        +Sampling: a :class:`DemoAnnotation`), which the eval runs first; None (the
        default): it needs none."""
        return None

    def __init__(self, config: Any = None) -> None:
        self.config = config if config is not None else self.Config()
        #: where each option's value came from (set by ``strategies.build``; empty for a config given directly)
        self.sources: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, instead in cls.retired.items():
            if name in cls.__dict__:
                raise TypeError(f"{cls.__qualname__} defines {name}(); {instead}")

    @final
    def call_bound(self) -> int | None:
        """This strategy's own bound on model calls per question: its config's ``max_calls`` where the
        config declares that field (:func:`declares_max_calls`), else None: the run's budget bounds it
        (``--max-calls``), and where no budget applies either :meth:`run` caps it at
        :data:`DEFAULT_MAX_CALLS`, so a config of a user's that leaves the field out is never unbounded."""
        return self.config.max_calls if declares_max_calls(type(self.config)) else None

    @final
    async def run(self, problem: Problem, ctx: Context) -> Result:
        """The strategy's answer to ``problem``: :meth:`solve` within ``ctx.lm`` capped at the
        config's ``max_calls``, or its best result so far when a budget stops it (see the module)."""
        if ctx.so_far is not None:  # an outer run (a calling strategy) caps and catches
            return await self.solve(problem, ctx)
        bound = self.call_bound()
        if bound is None and remaining_calls(ctx.lm) is None:  # no bound of its own nor of the run's
            bound = DEFAULT_MAX_CALLS
        cap = CallCap(ctx.lm, bound, ctx.trace) if bound is not None else None
        lm = ctx.lm if cap is None else cap
        role_lms = ctx.role_lms if cap is None else {r: cap.for_role(m) for r, m in ctx.role_lms.items()}
        so_far = SoFar()
        if ctx.anytime is not None:  # the anytime recorder looks at the same best result so far
            ctx.anytime.watch(so_far.peek)
        try:
            return await self.solve(problem, dataclasses.replace(ctx, lm=lm, role_lms=role_lms, so_far=so_far))
        except BudgetExceeded:  # the question's budget is spent: the best result so far
            return so_far.stopped("budget")

    @abstractmethod
    async def solve(self, problem: Problem, ctx: Context) -> Result:
        """The strategy itself; called through :meth:`run` (never directly), it may call
        ``super().solve``, reports its best result so far with ``ctx.best_so_far`` and
        lets :class:`BudgetExceeded` pass."""

    def report(self, result: Result) -> str:
        """A human-readable account of how the answer was reached (the executed
        program, the question hierarchy, the search tree...), printed by
        ``thoughtloom run``. Empty by default."""
        return ""


# A step a strategy may declare before an eval runs it (:meth:`Strategy.demo_annotation`): HGOT+KNN and
# HGOT+Sampling (appendix D, after DSP) show demonstrations made by the method itself. The eval layer
# (:mod:`thoughtloom.eval.annotate`) runs the step -- it alone reads gold answers -- and never looks
# inside a strategy's config to guess whether one is needed.


class AnnotationRun(NamedTuple):
    """One run of the strategy without demos on a training question, as the eval recorded it."""

    question: str
    details: Mapping[str, Any]  # the run's ``Result.details``
    gold: Any


@dataclass(frozen=True)
class DemoAnnotation(ABC):
    """Demonstrations a strategy annotates itself before an eval of it.

    The eval runs :attr:`plain` on the first :attr:`n` training questions
    (:attr:`train_file`'s pool, else the task's demos, less every question the
    eval asks), hands the runs to :meth:`qualified` with the task's judgement
    of an answer, writes the rows kept with :meth:`write`, and evaluates
    :meth:`annotated` of that file. :attr:`label` names the step in messages.
    """

    plain: Strategy
    n: int
    train_file: str | None
    label: str

    @abstractmethod
    def qualified(self, runs: Sequence[AnnotationRun], correct: Callable[[str, Any], bool]) -> list[dict[str, str]]:
        """The demonstration rows of the runs that qualify; ``correct(prediction, gold)`` is the task's
        judgement of an answer."""

    @abstractmethod
    def write(self, rows: Sequence[dict[str, str]], path: str) -> None:
        """Write ``rows`` as a demonstration file at ``path``."""

    @abstractmethod
    def annotated(self, path: str) -> Strategy:
        """The strategy that shows the demonstrations written at ``path``."""

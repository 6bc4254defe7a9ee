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
import time
import typing
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

from ..core.errors import BudgetExceeded, ConfigError
from ..core.events import malformed
from ..core.names import unknown
from ..core.protocols import LM, Entailment, Retriever, SearchTask, TaskView
from ..core.trace import Trace
from ..core.types import Completion, Demo, Message, Problem, Request, ScoredPassage, user
from .. import prompts
from ..lm.meter import CallCap, remaining_calls
from .anytime import Anytime
from .passages import bounded
from .vote import Vote, weighted_vote


@dataclass
class Context:
    """Everything a strategy may use for one question, passed explicitly."""

    lm: LM
    task: TaskView
    trace: Trace = field(default_factory=Trace)
    retriever: Retriever | None = None
    entail: Entailment | None = None
    prompt_dir: str | Path | None = None
    seed: int = 0
    # where best_so_far leaves the run's fallback result; made by Strategy.run
    so_far: "SoFar | None" = field(default=None, repr=False)
    # the run's anytime trajectory, when the eval runner records one (strategies/anytime.py)
    anytime: Anytime | None = field(default=None, repr=False)

    def prompt(self, name: str, **fields: object) -> str:
        return prompts.render(name, self.prompt_dir, **fields)

    def best_so_far(self, make: Callable[[], "Result"]) -> None:
        """How to build this run's best result so far, should its budget run out.

        ``make`` is called on a budget stop, and, when the runner records an
        anytime trajectory, before each batch of calls (with the trace
        muted), so it may read the run's live state (a tree, a scratchpad)
        but must leave it as it was; call again when a better one appears.
        Without one, a budget stop is a result with no answer.
        """
        if self.so_far is not None:
            self.so_far.make = make

    def within_batch(self, completions: typing.Sequence[Completion], results: typing.Sequence["Result"]) -> None:
        """For a strategy that sizes a batch from the budget left: ``results[i]`` is what it
        answers had only the first ``i + 1`` of ``completions`` come back, as a run capped
        there would (see :mod:`.anytime`). Must describe the batch just returned."""
        if self.anytime is not None:
            self.anytime.within_batch([c.usage.total_tokens for c in completions], results)

    def remaining_calls(self) -> int | None:
        """Calls left in this question's budget (the runner's and the strategy's own,
        whichever is tighter), or None where no call cap applies."""
        return remaining_calls(self.lm)

    async def search(self, queries: typing.Sequence[str], k: int, *,
                     required: bool = False) -> list[list[ScoredPassage]]:
        """The top ``k`` passages for each query, in one batched call to ``retriever``.

        The one way a strategy retrieves, and the one place a ``retrieval``
        trace event is emitted, one per call (its fields:
        :data:`thoughtloom.core.events.EVENTS`). Without a retriever (closed
        book) every list is empty and the event says ``note: "no
        retriever"``; a strategy that cannot work closed
        book passes ``required=True`` and gets a ConfigError naming --index.
        Every passage comes back bounded (:func:`.passages.bounded`): a corpus
        cannot put more than that into a prompt.
        """
        queries = list(queries)
        if not queries:
            return []
        if self.retriever is None:
            if required:
                raise ConfigError("this strategy retrieves, but no retriever is configured",
                                  hint="pass --index DIR (see `thoughtloom index build`)")
            self.trace.emit("retrieval", queries=queries, k=k, results=[[] for _ in queries],
                            note="no retriever")
            return [[] for _ in queries]
        t0 = time.perf_counter()
        results = [[hit if (p := bounded(hit.passage)) is hit.passage else dataclasses.replace(hit, passage=p)
                    for hit in hits] for hits in await self.retriever.search(queries, k)]
        self.trace.emit("retrieval", queries=queries, k=k,
                        results=[[{"id": h.passage.id, "title": h.passage.title, "score": round(h.score, 6),
                                   "rank": h.rank} for h in hits] for hits in results],
                        seconds=round(time.perf_counter() - t0, 6))
        return results


#: A strategy's default bound on model calls per question (``max_calls``).
DEFAULT_MAX_CALLS = 1000


@dataclass
class SoFar:
    """The result a run gives if its budget runs out first (see :meth:`Context.best_so_far`)."""

    make: Callable[[], "Result"] | None = None

    def peek(self) -> "Result":
        """The result a budget stop here would give; the run's state is left as it was."""
        result = self.make() if self.make is not None else Result(answer="")
        result.stopped = "budget"
        return result

    def stopped(self, reason: str) -> "Result":
        result = self.make() if self.make is not None else Result(answer="")
        result.stopped = reason
        return result


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


@dataclass
class Result:
    """A strategy's answer. The runner adds usage, timing and the trace."""

    answer: str
    text: str = ""
    confidence: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    # the answer came from a reply cut off at max_tokens: the runner scores it
    # as no answer unless the task allows (``Task.score_truncated``)
    truncated: bool = False
    # why the run ended before the strategy finished: "budget" (a call or token
    # budget ran out; the result is its best so far, see Context.best_so_far)
    stopped: str | None = None


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


def finished(ctx: Context, reply: Completion, what: str, **fields: object) -> bool:
    """Whether ``reply`` ended on its own; a reply cut off at ``max_tokens`` is
    not a finished plan, program step, evaluation or answer, and is traced as a
    ``malformed`` event (``what`` names the step, ``reason: truncated``) for the
    caller to treat as unreadable."""
    if reply.truncated:
        malformed(ctx.trace, what, "truncated", reply.text, **fields)
        return False
    return True


def vote_samples(ctx: Context, replies: typing.Sequence[Completion]) -> tuple["Result", Vote]:
    """Self-consistency over sampled replies: each one's answer (traced as a
    ``sample`` event; a sample cut off at ``max_tokens`` has none, so it does not
    vote), the majority vote (traced as ``vote``), and the result: the winner,
    the reply that gave it, its vote share, ``truncated`` when every sample was,
    ``details["samples"]``. Callers add their own details."""
    answers = [None if c.truncated else ctx.task.extract_answer(c.text) for c in replies]
    for i, (answer, reply) in enumerate(zip(answers, replies)):
        ctx.trace.emit("sample", index=i, answer=answer, truncated=reply.truncated)
    vote = weighted_vote(answers, ctx.task.normalize)
    ctx.trace.emit("vote", tally=vote.tally, winner=vote.key, confidence=vote.confidence)
    best = next((c.text for c, a in zip(replies, answers)
                 if a is not None and ctx.task.normalize(a) == vote.key), "")
    result = Result(answer=vote.winner or "", text=best, confidence=vote.confidence,
                    truncated=all(c.truncated for c in replies), details={"samples": answers})
    return result, vote


#: How a few-shot prompt is sent (see :mod:`thoughtloom.prompts`): ``chat``
#: puts each demo in its own user/assistant turns and the instruction in a
#: system message; ``text`` writes everything into one user message.
LAYOUTS = ("chat", "text")


def check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ConfigError(f"unknown prompt layout {layout!r}", hint=f"layout is one of: {', '.join(LAYOUTS)}")


class LayoutChecked:
    """For a strategy config with a ``layout`` field: an unknown layout is a
    ConfigError when the config is made (``--set layout=...``), before any call."""

    def __post_init__(self) -> None:
        check_layout(self.layout)  # type: ignore[attr-defined]


def demo_turn(demo: Demo, *, with_rationale: bool) -> tuple[str, str]:
    """A demo as (question, answer) texts; the answer carries the rationale when asked."""
    if with_rationale and demo.rationale:
        return f"Question: {demo.question}", f"{demo.rationale}\nThe answer is: {demo.answer}"
    return f"Question: {demo.question}", f"Answer: {demo.answer}"


def render_demos(demos: typing.Sequence[Demo], *, with_rationale: bool) -> str:
    """Few-shot blocks in the same Question/answer layout the templates use."""
    blocks = ("\n".join(demo_turn(d, with_rationale=with_rationale)) for d in demos)
    return "".join(f"\n{b}\n" for b in blocks)


def few_shot(ctx: Context, name: str, demos: typing.Sequence[Demo], *, with_rationale: bool,
             layout: str, **fields: object) -> tuple[Message, ...]:
    """The messages of prompt ``name`` with ``demos``, laid out as ``layout``."""
    if layout == "text":
        return (user(ctx.prompt(name, demos=render_demos(demos, with_rationale=with_rationale), **fields)),)
    check_layout(layout)
    turns = [demo_turn(d, with_rationale=with_rationale) for d in demos]
    return tuple(prompts.render_turns(name, ctx.prompt_dir, turns, **fields))

"""One way to assemble a run: :class:`RunSpec`, what an eval runs on, and its one :meth:`RunSpec.open`.

A run is a model stack (the model, its completion cache and cache mode,
how many requests go at once, the embedded model's context, threads and
batch, a server's per-call timeout), a per-question budget, the services
every question shares (the ``--index`` retriever, the ``--entail`` judge,
prompt overrides) and the sampling seed. ``thoughtloom run``/``eval``
(:class:`thoughtloom.cli.options.RunOptions`), ``thoughtloom reproduce``,
:func:`thoughtloom.solve`/:func:`thoughtloom.evaluate` and each Ray worker
(:mod:`.ray_executor`, which is sent the spec itself) all build it here, so
one set of flags or keywords opens one set of services wherever it runs.

The spec is plain, frozen and picklable. It holds the API key as a value
(never printed): environment variables are read by the CLI alone, which
puts the key in the spec; the spec carries it to the Ray workers.

``max_calls`` means one thing: the runner's budget per question and, for a
strategy with that option (unless its options set it), its own cap
(:meth:`RunSpec.strategy`, :func:`thoughtloom.strategies.build`).

An eval is a spec and an :class:`EvalRequest` (the strategy and its
options, the task and its examples, the folder, how failures are treated),
put together once by :func:`assemble` -- the strategy built and its options
checked, the settings, the notes for the user and for summary.json -- and
run by :meth:`AssembledEval.run` on the spec's services (or on an
executor's workers, which open their own from the spec). ``thoughtloom
eval``, :func:`thoughtloom.evaluate` and each cell of ``reproduce`` go
through these two and nothing else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Iterable, Mapping, Sequence

from .. import strategies
from ..core.errors import ConfigError
from ..core.protocols import LM
from ..lm import MODES, Budget, CacheMode, ModelSpec, open_lm, requests_at_once
from ..strategies.context import check_role
from ..strategies.interface import DEFAULT_MAX_CALLS
from ..tasks.base import Task
from ..tasks.datasets import Dataset, load_examples
from .breaker import BreakerSettings
from .executors import Executor
from .identity import DataSource
from .progress import Progress
from .runner import evaluate, run_notes
from .services import open_entail, open_retriever
from .settings import EvalResources, EvalSettings

#: The embedded (.gguf) model's context window unless ``--n-ctx`` says otherwise.
DEFAULT_N_CTX = 4096
#: Seconds one call to a server may take unless ``--timeout`` says otherwise (each retry gets as long).
DEFAULT_TIMEOUT_S = 300.0


def default_out(task: str, strategy: str) -> Path:
    """An eval's results folder when none is given: ``runs/<task>_<strategy>``."""
    return Path("runs") / f"{task}_{strategy}"


def default_suite_out(suite: str) -> Path:
    """A reproduction suite's folder when none is given: ``runs/reproduce/<suite>`` (its cells below it)."""
    return Path("runs") / "reproduce" / suite


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)


@dataclass(frozen=True)
class RunSpec:
    """Everything a run's services are opened from (see the module's docstring).

    ``model`` is a spec string (``embedded``, a ``.gguf`` path,
    ``openai:MODEL[@URL]``, ``litellm:PROVIDER/MODEL``), or None when the
    caller hands :meth:`open` an LM of its own. ``cache`` None (or
    ``cache_mode="off"``) runs without a completion cache. ``concurrency``
    is the questions in flight at once; the model stack takes as many
    requests as that needs (:func:`thoughtloom.lm.requests_at_once`).
    """

    model: str | None = "embedded"
    api_key: str | None = field(default=None, repr=False)  # a credential: never in a repr, a log or a record
    cache: Path | None = None
    cache_mode: CacheMode = "use"
    max_calls: int | None = None  # None: the runner's default (DEFAULT_MAX_CALLS), the strategies' own caps
    max_tokens: int | None = None
    index: Path | None = None
    entail: str = "llm"
    prompts: Path | None = None
    seed: int = 0
    n_ctx: int = DEFAULT_N_CTX
    threads: int | None = None
    parallel: int | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S  # one call to a server (``--timeout``), not an example's deadline
    concurrency: int = 1
    #: ``(role, model spec)`` pairs, sorted: the roles (:data:`thoughtloom.strategies.ROLES`) that ask a
    #: model of their own instead of ``model`` (``--role-model ROLE=MODEL``); a mapping is taken too
    role_models: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "role_models", role_pairs(self.role_models))
        # str paths from the library's keywords are kept as Path, so that equal runs make equal specs
        for name in ("cache", "index", "prompts"):
            object.__setattr__(self, name, _path(getattr(self, name)))
        if self.cache_mode not in MODES:
            raise ConfigError(f"unknown cache mode {self.cache_mode!r}", hint=f"use one of {', '.join(MODES)}")
        if not (isinstance(self.timeout_s, (int, float)) and math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise ConfigError(f"bad --timeout {self.timeout_s}", hint="pass a number of seconds")
        for name in ("concurrency", "n_ctx", "threads", "parallel"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be at least 1, got {value}")

    @property
    def recorded_cache_mode(self) -> str:
        """The cache mode the run has: ``off`` without a cache file."""
        return "off" if self.cache is None else self.cache_mode

    def budget(self) -> Budget:
        """The runner's per-question budget."""
        return Budget(max_calls=DEFAULT_MAX_CALLS if self.max_calls is None else self.max_calls,
                      max_tokens=self.max_tokens)

    def settings(self, **more: Any) -> EvalSettings:
        """The eval's settings: this spec's concurrency, budget and seed, and ``more`` (``retry_errors``,
        ``example_timeout_s``, ``breaker``, ...)."""
        return EvalSettings(concurrency=self.concurrency, budget=self.budget(), seed=self.seed, **more)

    def strategy(self, name: str, options: Mapping[str, Any] | None = None, task: Any = None, *,
                 cap: bool = True) -> strategies.Strategy:
        """The strategy with ``options`` (checked before any model call); ``max_calls`` is also its own cap
        unless ``cap`` is False (:attr:`EvalRequest.cap_strategy`)."""
        return strategies.build(name, options, task, max_calls=self.max_calls if cap else None)

    def setup_notes(self, strategy: strategies.Strategy, task: Any, *, pooled: bool = False) -> list[str]:
        """What a user should know of how ``strategy`` will answer ``task`` before it starts, one line each:
        the choices it made for the task (:meth:`~thoughtloom.strategies.Strategy.notes`) and, for a
        strategy that retrieves with no ``index`` and no pooled paragraphs (``pooled``), that it runs
        closed book and how to give it passages."""
        lines = list(strategy.notes(task))
        if self.index is None and not pooled and strategy.retrieves(task):
            lines.append(f"{strategy.name} runs closed book: no --index, so every search finds nothing and the "
                         "model answers alone; give it passages with --index DIR (`thoughtloom index build "
                         "--corpus FILE --out DIR`)")
        return lines

    def notes(self, dataset: Dataset, settings: EvalSettings, *, offset: int = 0,
              limit: int | None = None) -> dict[str, Any]:
        """What an eval's summary.json says about how it was asked for (:func:`.runner.run_notes`)."""
        notes = run_notes(dataset, settings, offset=offset, limit=limit, cache_mode=self.recorded_cache_mode,
                          index=self.index, entail=self.entail, timeout_s=self.timeout_s)
        return notes | ({"role_models": dict(self.role_models)} if self.role_models else {})

    def check_model(self) -> None:
        """Refuse a malformed model spec here (one line), before workers elsewhere each fail on it."""
        for spec in (self.model, *dict(self.role_models).values()):
            if spec is not None:
                ModelSpec.parse(spec)

    def open_lm(self) -> LM:
        """The model stack alone; the caller closes it (``await lm.aclose()``). :meth:`open` uses it."""
        return open_model(self)

    @contextlib.asynccontextmanager
    async def open(self, lm: LM | None = None,
                   role_lms: Mapping[str, LM] | None = None) -> AsyncIterator[EvalResources]:
        """The services an eval runs on, for the length of the block: the model stack (``res.lm``), the
        ``index`` retriever, the ``entail`` judge (which may ask the model) and the prompt folder.

        The model opened here is closed at the end; ``lm``, an LM the caller opened (a
        :class:`~thoughtloom.testing.ScriptedLM`, a stack of its own), is used instead of ``model`` and
        stays the caller's. Each of :attr:`role_models` is opened here too (one stack per distinct spec,
        closed at the end); ``role_lms``, role LMs the caller opened, take those roles' place.
        """
        own = lm is None
        model = self.open_lm() if lm is None else lm
        opened: dict[str, LM] = {}  # one stack per distinct role model spec
        try:
            given = {check_role(r, "role in role_lms"): m for r, m in (role_lms or {}).items()}
            for role, spec in self.role_models:
                if role not in given and spec not in opened:
                    opened[spec] = open_model(self, spec)
            roles = {role: opened[spec] for role, spec in self.role_models if role not in given} | given
            judge = roles.get("judge", model)
            yield EvalResources(model, open_retriever(self.index), open_entail(self.entail, judge, self.prompts),
                                prompt_dir=self.prompts, role_lms=roles)
        finally:
            for stack in opened.values():
                await stack.aclose()
            if own:
                await model.aclose()


@dataclass(frozen=True)
class EvalRequest:
    """One eval beyond the services its spec opens: the strategy (a registered name and its options, built
    and checked once, by :func:`assemble`), the task and its examples, the results folder and how the
    runner treats failures. ``thoughtloom eval``, :func:`thoughtloom.evaluate` and each ``reproduce`` cell
    make one; where they differ, it is a field here."""

    strategy: str
    task: Task
    options: Mapping[str, Any] = field(default_factory=dict)
    #: a data file or folder (None: the task's packaged sample), read from ``offset`` for ``limit``
    #: examples; or a :class:`Dataset` already read (examples given in memory, a suite's slice)
    data: str | Path | Dataset | None = None
    offset: int = 0
    limit: int | None = None
    source: DataSource | None = None  # the data's identity in run.json; default: the file and its slice
    out: Path | None = None  # default: :func:`default_out`
    retry_errors: bool = False
    example_timeout_s: float | None = None
    breaker: BreakerSettings = BreakerSettings()
    #: whether the spec's ``max_calls`` is also the strategy's own cap where its options leave that unset
    #: (one number bounds a question, from the CLI and the API); a suite states each method's settings
    #: (its paper's), so a ``reproduce`` cell's budget is the runner's alone and its cells' recorded
    #: configs stay those the suite names
    cap_strategy: bool = True
    #: the roles that ask a model of their own, of those the spec gives (None: all; a suite method's
    #: ``own_models``)
    roles: tuple[str, ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)  # more for summary.json (a suite's cell)
    force: bool = False
    command: Sequence[str] | str | None = None


@dataclass(frozen=True)
class AssembledEval:
    """An eval put together (:func:`assemble`), before any model is opened: run it with :meth:`run`."""

    spec: RunSpec
    request: EvalRequest
    strategy: strategies.Strategy
    dataset: Dataset
    source: DataSource
    settings: EvalSettings
    out: Path
    #: what a user should know before it starts, one line each (:meth:`RunSpec.setup_notes`)
    notes: tuple[str, ...]
    #: with no ``index``, the task's pooled paragraphs that a retrieving strategy searches (BM25), else None
    pooled_note: str | None
    summary_notes: Mapping[str, Any]  # what summary.json says of how the eval was asked for

    async def run(self, *, lm: LM | None = None, role_lms: Mapping[str, LM] | None = None,
                  res: EvalResources | None = None, executor: Executor | None = None,
                  progress: Progress | None = None, lock: bool = True, pilot: int | None = None) -> dict[str, Any]:
        """Run the eval; returns its summary. Its services: ``res`` when the caller opened them (a suite
        opens them once for all its cells), else the spec's, opened here (:meth:`RunSpec.open`, with the
        caller's ``lm`` and ``role_lms`` in place of the models they stand for) and closed after; with an
        ``executor`` (Ray) none opens here: its workers open their own from the spec. ``pilot``: only the
        first that many examples (a dry run's). ``lock=False``: the caller holds the folder's lock."""
        examples = list(self.dataset.examples)[:pilot] if pilot is not None else self.dataset.examples
        if executor is not None:
            return await self._evaluate(examples, None, executor, progress, lock)
        if res is not None:
            return await self._evaluate(examples, self._roles(res), None, progress, lock)
        async with self.spec.open(lm, role_lms) as opened:
            return await self._evaluate(examples, self._roles(opened), None, progress, lock)

    def _roles(self, res: EvalResources) -> EvalResources:
        """``res`` with only the request's roles on models of their own."""
        if self.request.roles is None:
            return res
        return dataclasses.replace(res, role_lms={r: m for r, m in res.role_lms.items() if r in self.request.roles})

    async def _evaluate(self, examples: Sequence[Any], res: EvalResources | None, executor: Executor | None,
                        progress: Progress | None, lock: bool) -> dict[str, Any]:
        # on an executor's workers the model is known only there: the executor adds it
        meta = dict(self.summary_notes) if res is None else {"model": res.lm.model_id, **self.summary_notes}
        return await evaluate(self.strategy, self.request.task, examples, res, self.out, settings=self.settings,
                              progress=progress, meta=meta, lock=lock, source=self.source,
                              command=self.request.command, force=self.request.force, executor=executor)


def assemble(spec: RunSpec, request: EvalRequest) -> AssembledEval:
    """``request`` on ``spec``, put together once, before any model call: the strategy built (its options
    checked, a bad one refused in one line before the data is read), the settings, the examples read, the
    results folder, and what the user and summary.json are told."""
    strategy = spec.strategy(request.strategy, request.options, request.task, cap=request.cap_strategy)
    timeout = request.example_timeout_s
    if timeout is not None and not (isinstance(timeout, (int, float)) and 0 < timeout < math.inf):
        raise ConfigError(f"bad --example-timeout {timeout}", hint="pass a number of seconds")
    task = request.task
    if isinstance(request.data, Dataset):
        dataset = request.data
    else:
        dataset = load_examples(task, request.data, offset=request.offset, limit=request.limit)
    source = request.source or DataSource(dataset.path, request.offset, request.limit)
    settings = spec.settings(retry_errors=request.retry_errors, example_timeout_s=timeout, breaker=request.breaker)
    pooled = task.pooled_corpus()
    pooled_note = None
    if spec.index is None and pooled is not None and type(strategy).needs == "open_domain":
        pooled_note = (f"no --index: {strategy.name} retrieves from the paragraphs of the data file pooled "
                       f"({pooled.path}, BM25); pass --index DIR to search a corpus of your own")
    notes = spec.notes(dataset, settings, offset=request.offset, limit=request.limit) | dict(request.meta)
    return AssembledEval(spec, request, strategy, dataset, source, settings,
                         request.out or default_out(task.name, strategy.name),
                         tuple(spec.setup_notes(strategy, task, pooled=pooled is not None)), pooled_note, notes)


def role_pairs(role_models: Mapping[str, str] | Iterable[tuple[str, str]] | None) -> tuple[tuple[str, str], ...]:
    """``role_models`` as sorted ``(role, spec)`` pairs, each role checked (one line naming the roles)."""
    items = role_models.items() if isinstance(role_models, Mapping) else (role_models or ())
    pairs = dict((check_role(str(role), "role in role_models"), str(spec)) for role, spec in items)
    return tuple(sorted(pairs.items()))


def open_model(spec: RunSpec, model: str | None = None) -> LM:
    """A model stack of ``spec`` (:func:`thoughtloom.lm.open_lm`): its ``model`` or a role's ``model``,
    each with the same cache, concurrency and timeouts; the one place a run's LMs are opened."""
    model = spec.model if model is None else model
    if model is None:
        raise ConfigError("no model: the run spec names none and no LM was given",
                          hint="pass model='embedded' (or a .gguf path, openai:MODEL@URL), or an LM object")
    cache = None if spec.cache is None or spec.cache_mode == "off" else spec.cache.expanduser()
    return open_lm(model, api_key=spec.api_key, cache_path=cache,
                   cache_mode=spec.cache_mode, max_concurrent=requests_at_once(model, spec.concurrency),
                   n_ctx=spec.n_ctx, timeout_s=spec.timeout_s, threads=spec.threads, max_parallel=spec.parallel)


__all__ = ["DEFAULT_N_CTX", "DEFAULT_TIMEOUT_S", "AssembledEval", "EvalRequest", "RunSpec", "assemble",
           "default_out", "default_suite_out", "open_model", "role_pairs"]

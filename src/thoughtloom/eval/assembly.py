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
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Iterable, Mapping

from .. import strategies
from ..core.errors import ConfigError
from ..core.protocols import LM
from ..lm import MODES, Budget, CacheMode, ModelSpec, open_lm, requests_at_once
from ..strategies.context import check_role
from ..strategies.interface import DEFAULT_MAX_CALLS
from ..tasks.datasets import Dataset
from .runner import run_notes
from .services import open_entail, open_retriever
from .settings import EvalResources, EvalSettings

#: The embedded (.gguf) model's context window unless ``--n-ctx`` says otherwise.
DEFAULT_N_CTX = 4096
#: Seconds one call to a server may take unless ``--timeout`` says otherwise (each retry gets as long).
DEFAULT_TIMEOUT_S = 300.0


def default_out(task: str, strategy: str) -> Path:
    """An eval's results folder when none is given: ``runs/<task>_<strategy>``."""
    return Path("runs") / f"{task}_{strategy}"


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

    def strategy(self, name: str, options: Mapping[str, Any] | None = None, task: Any = None) -> strategies.Strategy:
        """The strategy with ``options`` (checked before any model call); ``max_calls`` is also its own cap."""
        return strategies.build(name, options, task, max_calls=self.max_calls)

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


__all__ = ["DEFAULT_N_CTX", "DEFAULT_TIMEOUT_S", "RunSpec", "default_out", "open_model", "role_pairs"]

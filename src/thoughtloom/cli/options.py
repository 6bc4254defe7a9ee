"""Shared CLI options and the one place that reads THOUGHTLOOM_* variables.

``run`` and ``eval`` take the same options for the strategy, model, cache,
budget and services: :class:`RunOptions`, added to both commands by
:func:`with_run_options`. It is only the typer front of a run: it makes the
:class:`~thoughtloom.eval.assembly.RunSpec` (:meth:`RunOptions.spec`) that
every command, the library and the Ray workers open a run from.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import os
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from .. import strategies
from ..core.errors import ConfigError
from ..eval.assembly import DEFAULT_N_CTX, DEFAULT_TIMEOUT_S, RunSpec
from ..strategies.interface import DEFAULT_MAX_CALLS
from . import usercode
from .index import EntailSpec, IndexDir

DEFAULT_CACHE = Path("~/.cache/thoughtloom/cache.sqlite")

Model = Annotated[str, typer.Option(
    "--model", "-m", envvar="THOUGHTLOOM_MODEL",
    help="'embedded' (SmolLM2-135M, shipped), a .gguf path, openai:MODEL[@BASE_URL] "
         "(OpenAI's API without @URL) or litellm:PROVIDER/MODEL.")]
CachePath = Annotated[Path, typer.Option(
    "--cache", envvar="THOUGHTLOOM_CACHE", help="SQLite completion cache file.")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the cache.")]
Replay = Annotated[bool, typer.Option(
    "--replay", help="Answer only from the cache; a miss is an error (zero-cost reproduction).")]
Refresh = Annotated[bool, typer.Option("--refresh", help="Call the model and overwrite cached entries.")]
Concurrency = Annotated[int, typer.Option(
    "--concurrency", "-c", min=1, envvar="THOUGHTLOOM_CONCURRENCY",
    help="Questions in flight at once (eval) and requests in flight to the backend.")]
Sets = Annotated[Optional[list[str]], typer.Option(
    "--set", "-s", help="Strategy option KEY=VALUE, repeatable (e.g. --set n=10).")]
PromptDir = Annotated[Optional[Path], typer.Option(
    "--prompts", envvar="THOUGHTLOOM_PROMPTS", help="Folder of <role>.txt files overriding our prompts.")]
NCtx = Annotated[int, typer.Option("--n-ctx", envvar="THOUGHTLOOM_N_CTX", min=1, help="Context window for .gguf models.")]
Timeout = Annotated[float, typer.Option(
    "--timeout", min=0.001, envvar="THOUGHTLOOM_TIMEOUT",
    help="Seconds one call to an OpenAI-compatible server may take (each retry gets as long).")]
MaxCalls = Annotated[Optional[int], typer.Option(
    min=1, help=f"Budget: LLM calls per question (default {DEFAULT_MAX_CALLS}); also the strategy's own "
                "max_calls, unless --set gives that.")]
MaxTokens = Annotated[Optional[int], typer.Option(min=1, help="Budget: tokens per question.")]
Threads = Annotated[Optional[int], typer.Option(
    "--threads", min=1, envvar="THOUGHTLOOM_THREADS",
    help="CPU threads for .gguf models (default: all cores; fewer leaves room for other work).")]
Parallel = Annotated[Optional[int], typer.Option(
    "--parallel", min=1, envvar="THOUGHTLOOM_PARALLEL",
    help="Sequences a .gguf model decodes together in one batch (default 16; 1 = one at a time).")]

RoleModels = Annotated[Optional[list[str]], typer.Option(
    "--role-model", help=f"ROLE=MODEL, repeatable: the model one role asks instead of --model "
                         f"(roles: {', '.join(strategies.ROLES)}); same budget, cache and trace.")]


def parse_role_models(items: list[str] | None, flag: str = "--role-model") -> tuple[tuple[str, str], ...]:
    """``ROLE=MODEL`` items as sorted ``(role, model)`` pairs; a malformed item or an unknown role is
    one error line naming ``flag`` (and the roles)."""
    pairs: dict[str, str] = {}
    for item in items or []:
        role, sep, model = item.partition("=")
        if not sep or not role.strip() or not model.strip():
            raise ConfigError(f"bad {flag} {item!r}", hint="use ROLE=MODEL, e.g. evaluator=openai:gpt-4o-mini")
        pairs[strategies.check_role(role.strip(), f"{flag} role")] = model.strip()
    return tuple(sorted(pairs.items()))


def complete_strategy(incomplete: str) -> list[str]:
    """Shell completion of a strategy name."""
    return [name for name in strategies.available() if name.startswith(incomplete)]


def complete_task(incomplete: str) -> list[str]:
    """Shell completion of a task name."""
    from .. import tasks

    return [name for name in tasks.available() if name.startswith(incomplete)]


StrategyName = Annotated[str, typer.Option(
    "--strategy", "-S", help="Strategy name, or MODULE:CLASS for a strategy of your own.",
    autocompletion=complete_strategy)]
TaskName = Annotated[str, typer.Option(
    "--task", "-t", help="Task name (qa: your own data), or MODULE:CLASS for a task of your own.",
    autocompletion=complete_task)]
InputField = Annotated[str, typer.Option(
    "--input-field", help="With --task qa: the record field holding the question.")]
GoldField = Annotated[str, typer.Option(
    "--gold-field", help="With --task qa: the record field holding the gold answer (or a JSON list of them).")]
MetricSpec = Annotated[Optional[str], typer.Option(
    "--metric", help="With --task qa: em (default, with f1), f1, contains, numeric, choice, or MODULE:FUNCTION "
                     "for fn(prediction, gold) -> float.")]

def api_key() -> str | None:
    """The API key for ``openai:`` models from the environment (THOUGHTLOOM_API_KEY, else OPENAI_API_KEY),
    or None; the run spec carries it (to the Ray workers too)."""
    return os.environ.get("THOUGHTLOOM_API_KEY") or os.environ.get("OPENAI_API_KEY") or None


def cache_mode(no_cache: bool, replay: bool, refresh: bool) -> str:
    chosen = [name for name, on in (("--no-cache", no_cache), ("--replay", replay), ("--refresh", refresh)) if on]
    if len(chosen) > 1:
        raise ConfigError(f"{' and '.join(chosen)} cannot be used together")
    return {"--no-cache": "off", "--replay": "replay", "--refresh": "refresh"}.get(
        chosen[0] if chosen else "", "use")


def run_spec(model: str, cache: Path, mode: str, **fields: Any) -> RunSpec:
    """The run spec for command-line values, with the API key from the environment (:func:`api_key`)."""
    return RunSpec(model=model, api_key=api_key(), cache=cache, cache_mode=mode,  # type: ignore[arg-type]
                   **fields)


def parse_sets(sets: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in sets or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"bad --set {item!r}", hint="use --set KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


@dataclass(frozen=True)
class RunOptions:
    """What ``run`` and ``eval`` both let the user choose: strategy options, model, cache, budget, services."""

    sets: Sets = None
    model: Model = "embedded"
    cache: CachePath = DEFAULT_CACHE
    no_cache: NoCache = False
    replay: Replay = False
    refresh: Refresh = False
    prompts: PromptDir = None
    n_ctx: NCtx = DEFAULT_N_CTX
    threads: Threads = None
    parallel: Parallel = None
    timeout: Timeout = DEFAULT_TIMEOUT_S
    max_calls: MaxCalls = None
    max_tokens: MaxTokens = None
    index: IndexDir = None
    entail: EntailSpec = "llm"
    role_model: RoleModels = None

    def cache_mode(self) -> str:
        return cache_mode(self.no_cache, self.replay, self.refresh)

    def spec(self, *, concurrency: int = 1, seed: int = 0) -> RunSpec:
        """The run these flags ask for (``concurrency`` and ``seed`` are ``eval``'s own options)."""
        return run_spec(self.model, self.cache, self.cache_mode(), max_calls=self.max_calls,
                        max_tokens=self.max_tokens, index=self.index, entail=self.entail, prompts=self.prompts,
                        seed=seed, n_ctx=self.n_ctx, threads=self.threads, parallel=self.parallel,
                        timeout_s=self.timeout, concurrency=concurrency,
                        role_models=parse_role_models(self.role_model))

    def strategy(self, name: str, task: Any = None) -> strategies.Strategy:
        """The strategy with its ``--set`` options, checked before any model call; ``--max-calls`` is
        also its own cap (:meth:`RunSpec.strategy`). ``run`` and ``eval`` build it from their one spec
        instead (``eval`` in :func:`thoughtloom.eval.assembly.assemble`); this is for scripts and tests."""
        return self.spec().strategy(usercode.strategy(name), parse_sets(self.sets), task)


RUN_OPTIONS_PANEL = "Strategy, model, cache, budget and services (run and eval)"


def _in_panel(annotation: Any) -> Any:
    """``annotation`` (``Annotated[type, typer.Option(...)]``) with its option shown under RUN_OPTIONS_PANEL."""
    base, *extras = typing.get_args(annotation)
    info = [copy.copy(x) for x in extras]
    for x in info:
        x.rich_help_panel = RUN_OPTIONS_PANEL
    return Annotated[(base, *info)]  # type: ignore[return-value]


_RUN_OPTION_ANNOTATIONS = [(f, _in_panel(typing.get_type_hints(RunOptions, include_extras=True)[f.name]))
                           for f in dataclasses.fields(RunOptions)]


def with_run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with :class:`RunOptions`' fields added to its typer options; it gets them as ``opts``.

    typer reads a command's options from its signature, so the wrapper's
    signature is the command's own parameters (less ``opts``) followed by one
    keyword parameter per field.
    """
    hints = typing.get_type_hints(command, include_extras=True)
    own = [p.replace(annotation=hints.get(name, p.annotation))
           for name, p in inspect.signature(command).parameters.items() if name != "opts"]
    shared = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=annotation)
              for f, annotation in _RUN_OPTION_ANNOTATIONS]

    @functools.wraps(command)
    def with_opts(**kwargs: Any) -> Any:
        opts = RunOptions(**{f.name: kwargs.pop(f.name) for f in dataclasses.fields(RunOptions)})
        return command(**kwargs, opts=opts)

    with_opts.__signature__ = inspect.Signature(own + shared)  # type: ignore[attr-defined]
    with_opts.__annotations__ = {p.name: p.annotation for p in own + shared}
    return with_opts

"""Shared CLI options and the one place that reads THOUGHTLOOM_* variables."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from .. import strategies
from ..core.errors import ConfigError
from ..core.options import check_options
from ..core.protocols import LM
from ..lm import open_lm

DEFAULT_CACHE = Path("~/.cache/thoughtloom/cache.sqlite")

Model = Annotated[str, typer.Option(
    "--model", "-m", envvar="THOUGHTLOOM_MODEL",
    help="'embedded' (SmolLM2-135M, shipped), a .gguf path, or openai:MODEL@BASE_URL.")]
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
MaxTokens = Annotated[Optional[int], typer.Option(min=1, help="Budget: tokens per question.")]
Threads = Annotated[Optional[int], typer.Option(
    "--threads", min=1, envvar="THOUGHTLOOM_THREADS",
    help="CPU threads for .gguf models (default: all cores; fewer leaves room for other work).")]
Parallel = Annotated[Optional[int], typer.Option(
    "--parallel", min=1, envvar="THOUGHTLOOM_PARALLEL",
    help="Sequences a .gguf model decodes together in one batch (default 16; 1 = one at a time).")]

DEFAULT_TIMEOUT_S = 300.0


def cache_mode(no_cache: bool, replay: bool, refresh: bool) -> str:
    chosen = [name for name, on in (("--no-cache", no_cache), ("--replay", replay), ("--refresh", refresh)) if on]
    if len(chosen) > 1:
        raise ConfigError(f"{' and '.join(chosen)} cannot be used together")
    return {"--no-cache": "off", "--replay": "replay", "--refresh": "refresh"}.get(
        chosen[0] if chosen else "", "use")


def build_lm(model: str, cache: Path, mode: str, concurrency: int, n_ctx: int = 4096,
             timeout_s: float = DEFAULT_TIMEOUT_S, threads: int | None = None,
             parallel: int | None = None) -> LM:
    if not math.isfinite(timeout_s):
        raise ConfigError(f"bad --timeout {timeout_s}", hint="pass a number of seconds")
    api_key = os.environ.get("THOUGHTLOOM_API_KEY") or os.environ.get("OPENAI_API_KEY")
    return open_lm(
        model,
        api_key=api_key,
        cache_path=None if mode == "off" else cache.expanduser(),
        cache_mode=mode,  # type: ignore[arg-type]
        max_concurrent=max(concurrency, 1) if model.startswith("openai:") else 64,
        n_ctx=n_ctx,
        timeout_s=timeout_s,
        threads=threads,
        max_parallel=parallel,
    )


def parse_sets(sets: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in sets or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"bad --set {item!r}", hint="use --set KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def build_strategy(name: str, sets: list[str] | None) -> strategies.Strategy:
    """The strategy with its ``--set`` options, type- and range-checked before any model call."""
    cls = strategies.get(name)
    try:
        config = strategies.make_config(cls, parse_sets(sets))
    except (TypeError, ValueError) as exc:  # a config's own __post_init__ check
        raise ConfigError(f"bad --set for {name}: {exc}") from None
    check_options(config, owner=name)
    return cls(config)

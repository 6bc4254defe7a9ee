"""Language-model backends and the wrappers composed around them.

``open_lm`` builds the usual stack for a model spec::

    Cached(Retrying(Limited(Backend)))

and per question the eval runner adds ``Metered`` (budget, usage, trace).
Backends are imported lazily: ``import thoughtloom.lm`` loads neither
llama_cpp nor httpx's servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ConfigError
from ..core.protocols import LM
from .cache import MODES, Cached, CacheMode, CompletionStore
from .limits import Limited
from .meter import Budget, Metered, UsageTotals
from .retry import Retrying
from .structured import generate_json, parse_json
from .sync import SyncLM


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--model`` value."""

    kind: str  # "gguf" or "openai"
    path: Path | None = None  # gguf; None = the embedded default
    name: str = ""  # openai model name
    base_url: str = ""

    @classmethod
    def parse(cls, spec: str) -> "ModelSpec":
        spec = spec.strip()
        if spec in ("", "embedded"):
            return cls("gguf")
        if spec.startswith("openai:"):
            rest = spec[len("openai:"):]
            name, sep, base = rest.partition("@")
            if not name or not sep or not base.startswith(("http://", "https://")):
                raise ConfigError(
                    f"bad model spec {spec!r}",
                    hint="use openai:MODEL@BASE_URL, e.g. openai:qwen@http://127.0.0.1:8000/v1",
                )
            return cls("openai", name=name, base_url=base)
        if spec.endswith(".gguf"):
            path = Path(spec).expanduser()
            if not path.is_file():
                raise ConfigError(f"model file not found: {path}", hint="check the --model path")
            return cls("gguf", path=path)
        raise ConfigError(
            f"unknown model spec {spec!r}",
            hint="use 'embedded', a path to a .gguf file, or openai:MODEL@BASE_URL",
        )


def open_backend(spec: str | ModelSpec, *, api_key: str | None = None, n_ctx: int = 4096,
                 max_concurrent: int = 8, timeout_s: float | None = None, threads: int | None = None,
                 max_parallel: int | None = None) -> LM:
    """The bare backend for a spec, with no wrappers.

    ``timeout_s`` bounds one call to an OpenAI-compatible server (default 300 s);
    the embedded backend has no per-call timeout. ``threads`` and
    ``max_parallel`` (sequences decoded together) apply to .gguf models;
    ``None`` keeps the embedded backend's defaults.
    """
    ms = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    if ms.kind == "openai":
        from .openai_compat import OpenAICompatLM

        timeout = {} if timeout_s is None else {"timeout_s": timeout_s}
        return OpenAICompatLM(ms.name, ms.base_url, api_key=api_key, max_connections=max_concurrent, **timeout)
    from .llamacpp import DEFAULT_MAX_PARALLEL, LlamaCppLM

    return LlamaCppLM(ms.path, n_ctx=n_ctx, threads=threads,
                      max_parallel=max_parallel or DEFAULT_MAX_PARALLEL)


def open_lm(
    spec: str | ModelSpec = "embedded",
    *,
    api_key: str | None = None,
    cache_path: str | Path | None = None,
    cache_mode: CacheMode = "use",
    max_concurrent: int = 8,
    rpm: float | None = None,
    tpm: float | None = None,
    retries: int = 4,
    n_ctx: int = 4096,
    timeout_s: float | None = None,
    threads: int | None = None,
    max_parallel: int | None = None,
) -> LM:
    """The standard stack: ``Cached(Retrying(Limited(backend)))``.

    ``cache_path=None`` or ``cache_mode="off"`` disables the cache.
    ``timeout_s`` is the per-call timeout of an OpenAI-compatible backend.
    """
    backend = open_backend(spec, api_key=api_key, n_ctx=n_ctx, max_concurrent=max_concurrent,
                           timeout_s=timeout_s, threads=threads, max_parallel=max_parallel)
    lm: LM = Limited(backend, max_concurrent=max_concurrent, rpm=rpm, tpm=tpm)
    lm = Retrying(lm, attempts=retries)
    if cache_path is None or cache_mode == "off":
        if cache_mode == "replay":
            raise ConfigError("--replay needs a cache file", hint="pass --cache PATH")
        return lm
    return Cached(lm, CompletionStore(cache_path), cache_mode)


__all__ = [
    "MODES", "Budget", "CacheMode", "Cached", "CompletionStore", "Limited", "Metered",
    "ModelSpec", "Retrying", "SyncLM", "UsageTotals", "generate_json", "open_backend",
    "open_lm", "parse_json",
]

"""Language-model backends and the wrappers composed around them.

``open_lm`` builds the usual stack for a model spec::

    Cached(Retrying(Limited(Backend)))

and per question the eval runner adds ``Metered`` (budget, usage, trace).
The backends, one file each, chosen by the spec's form:

- ``embedded`` or ``PATH.gguf``: :mod:`.llamacpp` (llama.cpp in a worker process);
- ``openai:MODEL[@BASE_URL]``: :mod:`.openai_compat` (any OpenAI-compatible
  server; without ``@BASE_URL``, OpenAI's own API, which needs a key);
  ``openai:MODEL@URL1,URL2,...``: several servers of one model behind one
  backend (:mod:`.server_pool`);
- ``litellm:PROVIDER/MODEL``: :mod:`.litellm_api` (hosted APIs through the
  optional LiteLLM extra).

Backends are imported lazily: ``import thoughtloom.lm`` loads neither
llama_cpp nor httpx's servers nor LiteLLM.
"""

from __future__ import annotations

import base64
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import ConfigError
from ..core.names import suggestion
from ..core.text import redact_credentials, split_userinfo
from ..core.protocols import LM
from .cache import MODES, Cached, CacheMode, CompletionStore
from .limits import Limited
from .meter import Budget, Metered, UsageTotals
from .retry import Retrying
from .structured import generate_json, parse_json
from .sync import SyncLM


#: Where ``openai:MODEL`` (no ``@URL``) sends its requests.
OPENAI_BASE_URL = "https://api.openai.com/v1"
SPEC_FORMS = "'embedded', a path to a .gguf file, openai:MODEL[@BASE_URL] or litellm:PROVIDER/MODEL"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--model`` value."""

    kind: str  # "gguf", "openai" or "litellm"
    path: Path | None = None  # gguf; None = the embedded default
    name: str = ""  # openai model name, or litellm's PROVIDER/MODEL
    base_url: str = ""  # several servers of one model: comma-separated (see base_urls)
    # the user-info of the URL (``user:password``), taken out of it: sent as the auth header, never
    # part of the model id, a message or a file
    userinfo: str = field(default="", repr=False, compare=False)

    @property
    def base_urls(self) -> tuple[str, ...]:
        """The servers of ``openai:MODEL@URL1,URL2,...`` (one for a plain spec)."""
        return tuple(url.strip() for url in self.base_url.split(","))

    @classmethod
    def parse(cls, spec: str) -> "ModelSpec":
        spec = spec.strip()
        if spec in ("", "embedded"):
            return cls("gguf")
        if spec.startswith("openai:"):
            name, sep, base = spec[len("openai:"):].partition("@")
            urls = [split_userinfo(u.strip()) for u in base.split(",")] if sep else []
            if not name or (sep and not all(u.startswith(("http://", "https://")) for u, _ in urls)):
                raise ConfigError(
                    f"bad model spec {redact_credentials(spec)!r}",
                    hint="use openai:MODEL (OpenAI's API) or openai:MODEL@BASE_URL, "
                         "e.g. openai:qwen@http://127.0.0.1:8000/v1 (several servers: openai:MODEL@URL1,URL2)",
                )
            secrets = {info for _, info in urls if info}
            if len(secrets) > 1 or (secrets and len(urls) > 1):
                raise ConfigError("user-info in a model URL is for one server",
                                  hint="serve the pool without user:password in its URLs and set THOUGHTLOOM_API_KEY")
            return cls("openai", name=name, base_url=",".join(u for u, _ in urls) if sep else OPENAI_BASE_URL,
                       userinfo=next(iter(secrets), ""))
        if spec.startswith("litellm:"):
            # no @URL form: provider model names may hold an '@' (vertex_ai/claude-...@20240620)
            name = spec[len("litellm:"):]
            if "/" not in name.strip("/"):
                raise ConfigError(f"bad model spec {spec!r}",
                                  hint="use litellm:PROVIDER/MODEL, e.g. litellm:anthropic/claude-3-5-haiku-latest")
            return cls("litellm", name=name)
        if spec.endswith(".gguf"):
            path = Path(spec).expanduser()
            if not path.is_file():
                raise ConfigError(f"model file not found: {path}", hint="check the --model path")
            return cls("gguf", path=path)
        said = redact_credentials(spec)
        raise ConfigError(f"unknown model spec {said!r}", hint=f"{_did_you_mean(said)}use {SPEC_FORMS}")


def basic_auth(userinfo: str) -> str:
    """``user:password`` (as a URL writes it, %-escaped) as an HTTP Basic ``Authorization`` value."""
    user, _, password = userinfo.partition(":")
    token = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}".encode()
    return "Basic " + base64.b64encode(token).decode("ascii")


def _did_you_mean(spec: str) -> str:
    """'did you mean ...? ' for a misspelt kind ('embeded', 'opneai:gpt-4o') or a bare
    model name ('gpt-4o-mini' -> 'openai:gpt-4o-mini'), else ''."""
    prefix, colon, rest = spec.partition(":")
    kind = suggestion(prefix + colon, ("embedded", "openai:", "litellm:"))
    if kind:
        guess = kind + rest if colon else kind
    elif not colon and "/" not in spec and " " not in spec:
        guess = f"openai:{spec}"
    else:
        return ""
    return f"did you mean {guess!r}? "


def open_backend(spec: str | ModelSpec, *, api_key: str | None = None, n_ctx: int = 4096,
                 max_concurrent: int = 8, timeout_s: float | None = None, threads: int | None = None,
                 max_parallel: int | None = None) -> LM:
    """The bare backend for a spec, with no wrappers.

    ``timeout_s`` bounds one call to an OpenAI-compatible server or a LiteLLM
    provider (default 300 s); the embedded backend has no per-call timeout.
    ``api_key`` is for ``openai:`` models (required for OpenAI's own URL);
    LiteLLM reads each provider's key from that provider's variable. ``threads`` and
    ``max_parallel`` (sequences decoded together) apply to .gguf models;
    ``None`` keeps the embedded backend's defaults.
    """
    ms = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    if ms.kind == "openai":
        from .openai_compat import OpenAICompatLM

        if not api_key and ms.base_url == OPENAI_BASE_URL:
            raise ConfigError(f"openai:{ms.name} calls OpenAI's API, which needs a key",
                              hint="set OPENAI_API_KEY or THOUGHTLOOM_API_KEY (in Python: pass api_key=...), "
                                   "or add @BASE_URL for a local server")

        timeout = {} if timeout_s is None else {"timeout_s": timeout_s}
        if ms.userinfo:  # http://user:password@host: HTTP Basic auth, as the URL meant, from a header
            if api_key:
                raise ConfigError(f"openai:{ms.name}@{ms.base_url} has two credentials: a user:password in its "
                                  "URL and an API key (THOUGHTLOOM_API_KEY or OPENAI_API_KEY)",
                                  hint="keep one: drop the user:password from --model, or unset the key")
            return OpenAICompatLM(ms.name, ms.base_url, authorization=basic_auth(ms.userinfo),
                                  max_connections=max_concurrent, **timeout)
        if len(ms.base_urls) > 1:  # the max_concurrent calls in flight are split evenly between the servers
            from .server_pool import ServerPool

            return ServerPool(ms.name, ms.base_urls, api_key=api_key, **timeout,
                              max_per_server=-(-max_concurrent // len(ms.base_urls)))
        return OpenAICompatLM(ms.name, ms.base_url, api_key=api_key, max_connections=max_concurrent, **timeout)
    if ms.kind == "litellm":
        from .litellm_api import LiteLLMBackend

        return LiteLLMBackend(ms.name, **({} if timeout_s is None else {"timeout_s": timeout_s}))
    from .llamacpp import DEFAULT_MAX_PARALLEL, LlamaCppLM

    return LlamaCppLM(ms.path, n_ctx=n_ctx, threads=threads,
                      max_parallel=max_parallel or DEFAULT_MAX_PARALLEL)


def requests_at_once(spec: str, concurrency: int) -> int:
    """How many requests the stack for ``spec`` takes at once when ``concurrency`` questions run.

    A hosted API (``openai:``, ``litellm:``) gets one request per question in
    flight; the embedded engine takes up to 64 and batches them itself.
    """
    return max(concurrency, 1) if spec.startswith(("openai:", "litellm:")) else 64


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
    "requests_at_once",
    "MODES", "OPENAI_BASE_URL", "Budget", "CacheMode", "Cached", "CompletionStore", "Limited", "Metered",
    "ModelSpec", "Retrying", "SyncLM", "UsageTotals", "generate_json", "open_backend",
    "open_lm", "parse_json",
]

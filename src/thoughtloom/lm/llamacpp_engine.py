"""The embedded engine: one GGUF model decoding many sequences per llama.cpp batch.

It runs inside the model worker process (:mod:`.llamacpp_worker`), speaks
plain dicts (no thoughtloom types cross the process boundary) and calls
llama.cpp's C API (a high-level ``Llama`` object decodes one sequence at a
time) in one of two libraries (``library``): llama-cpp-python's bindings,
compiled at install for this CPU (the default dependency), or the prebuilt
library that the ``xllamacpp`` wheel ships, through our own declarations
(:mod:`.llamacpp_capi`; the ``prebuilt`` extra). Both run the same code
below; what differs is how a JSON schema becomes a grammar (llama-cpp-python's
GBNF converter, or llguidance in the prebuilt library) and the CPU kernels
each was compiled with (docs/benchmarks.md, "Engine libraries side by side").
The llama.cpp side (library, model, context, tokens, samplers) is
:mod:`.llamacpp_model`; this module is the scheduler on top of it.

How requests are admitted and decoded (continuous batching)
-----------------------------------------------------------
Requests arrive at any time (:meth:`Engine.submit`, from the worker's
socket between two steps) and wait in arrival order. The engine has
``max_parallel`` sequence slots (``--parallel``) and runs in *steps*
(:meth:`Engine.step`); each step does two things:

1. **Admission and prefill.** While a slot is free, the next waiting request
   is admitted (:func:`.llamacpp_slots.pick_next`: the one whose prompt shares
   the longest prefix with a prompt in the KV cache, oldest first among
   equals, and one passed over ``max_parallel`` times goes next regardless).
   Its prompt is rendered with the model's own chat template (the GGUF's
   ``tokenizer.chat_template``, as llama-cpp-python renders it:
   :mod:`.chat_template`). The longest prefix it shares with a decoding
   sequence's prompt or a *resident* prompt (below) is copied
   (``llama_memory_seq_cp``: in a unified KV cache a copy only tags the cells,
   it costs no memory), and only the rest is evaluated, in chunks of
   ``PROMPT_CHUNK`` tokens counted from where the copy ends, each chunk its
   own ``llama_decode``. A step evaluates about ``PROMPT_CHUNK`` prompt tokens
   at most, so a newcomer's long prompt is spread over several steps and the
   sequences already decoding wait at most one chunk between two of their
   tokens. When its last chunk is done the request draws its first token and
   starts decoding; waiting requests with the very same prompt (N samples of
   one prompt) are admitted at once, copy all of its cells and draw from the
   same logits, with no decode of their own. An admission needs its cells to
   fit (:class:`.llamacpp_slots.KVLedger`: its prompt past the copied prefix
   plus ``max_tokens``, a copied prefix counted once for as long as any
   holder lives); resident prompts are dropped to make room, and otherwise
   the request waits for a running sequence to end.
2. **Decode.** Every decoding sequence advances one token in a single
   ``llama_decode``: the weights are read once per step for all of them
   (matrix-matrix instead of matrix-vector products). Each sequence has its
   own sampler chain (its JSON-schema grammar, temperature, top_p and seed)
   and ends on its own (end of generation, a stop string, ``max_tokens`` or
   the context limit). An ended sequence hands back its result and its slot
   at the end of the step, so the next step can admit a waiting request in
   its place.

Where a new token's KV cell lands matters for exactness: llama.cpp puts it in
the first free cell from its search head, and CPU flash attention sums a
query's visible cells in cache order, so a sequence whose later cells land in
a hole *before* its earlier ones sums in another order than alone (measured:
2 of 6 24-token greedy replies of the embedded model changed when ended
sequences' cells were freed at once). An ended sequence's cells therefore go
to a *grave* sequence id (``llama_memory_seq_cp`` to it, then
``llama_memory_seq_rm`` of the sequence's own id, which is free at once) and
are freed together only when nothing decodes; a request waits for that
when the cache is full. Every running sequence's cells then stay in position
order, as alone.

A request that arrives while others decode therefore joins the running batch
at the next step instead of waiting for the batch to end (``eval -c 4``:
four questions' calls keep four slots busy). Prefill and decode are separate
``llama_decode`` calls, never one mixed batch: a decoding sequence's token is
computed in a batch of decoding tokens only, as it is alone, which keeps
greedy replies the same alone or batched (below).

An ended request's prompt stays *resident* in the KV cache (under an id of
its own, ``[max_parallel, max_parallel + resident)``), with the most recent
earlier ones (up to ``resident`` prompts, default ``RESIDENT``; one that is
a prefix of a newer one goes), so later requests reuse its prefix: a long
few-shot preamble shared by questions asked one at a time is evaluated once.
:meth:`Engine.generate` (a list in, its results out) submits and steps until
its requests are done. :meth:`Engine.stats` counts decode steps, the most
sequences in one step and the requests that joined a running batch.

Sampling matches llama-cpp-python's ``create_chat_completion`` defaults:
greedy at temperature 0, else top-k 40 → top-p → min-p 0.05 → temperature →
a seeded draw, seeded per request (``seed``), so a sampled request gives the
same text alone or in a batch as long as the model's logits are the same.
What is exact and what is not (measured on the embedded model; the
integration tests pin short cases of the first two):

- decoding a request in a batch or alone (arriving together or while the
  others decode) gives the same greedy text and the
  same seeded sample, token for token, in nearly every case: 24 of 24
  32-token greedy replies, and 7 of 8 sampled 256-token cot replies (one
  flipped at a near-tie after ~200 tokens; a batch can route part of the
  model through another matrix kernel). llama.cpp's flash-attention kernel
  (on by default, ``flash_attn_type`` AUTO) matters here: with it off, 6 of
  12 32-token greedy replies changed when batched;
- the prompt is rendered and tokenized exactly as llama-cpp-python's
  ``create_chat_completion`` does (same tokens for SmolLM2 and Qwen2.5);
- reusing a prompt prefix kept from an *earlier* batch is not bit-exact: the
  new tokens' KV cells land elsewhere in the cache, attention sums in another
  order, and a greedy near-tie can go the other way (15 of 24 32-token
  greedy replies were identical with reuse vs without). ``resident=0`` turns
  that reuse off; exact replay of a run is the completion cache's job;
- against the previous backend (llama-cpp-python's high-level API, flash
  attention off), 6 of 12 such replies were identical: the same near-ties,
  decided by the other attention kernel.

Threads under load and weight repacking: :mod:`.cpu`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .llamacpp_model import PROMPT_CHUNK, EngineError, ModelContext
from .llamacpp_slots import Holding, KVLedger, common_prefix, pick_next

#: Prompts kept in the KV cache after their request ends, for later requests' prefixes.
RESIDENT = 4


@dataclass(eq=False)
class _Seq:
    """One request, from its arrival to its result."""

    key: Any  # the caller's name for it, handed back with its result
    req: dict[str, Any]
    prompt: list[int]
    t0: float  # arrival
    passed: int = 0  # admissions that went before it while it waited
    seq_id: int = -1
    holding: Holding | None = None
    sampler: Any = None
    fed: int = 0  # prompt tokens whose KV cells are in the cache
    pos: int = 0
    last: int = -1  # the token to feed next
    out_bytes: bytearray = field(default_factory=bytearray)
    text: str = ""
    n_out: int = 0
    finish: str = ""
    cancelled: bool = False
    logprobs: list[dict[str, Any]] | None = None
    error: dict[str, str] | None = None


class Engine(ModelContext):
    """The scheduler: requests admitted into ``max_parallel`` sequence slots of one
    llama.cpp context and decoded together, one token per sequence per step."""

    def __init__(self, model_path: str, *, n_ctx: int = 4096, threads: int | None = None,
                 max_parallel: int = 16, repack: bool | None = None, logprobs: bool = False,
                 resident: int = RESIDENT, library: str = "auto") -> None:
        self.max_parallel = max(1, max_parallel)
        self.n_resident = max(0, resident)
        # Sequence ids: [0, max_parallel) decode, [max_parallel, +n_resident) keep prompts,
        # and the last one holds ended sequences' cells until the batch drains (see above).
        self.grave = self.max_parallel + self.n_resident
        super().__init__(model_path, n_ctx=n_ctx, threads=threads, n_seq_max=self.grave + 1,
                         batch_tokens=self.max_parallel, repack=repack, logprobs=logprobs, library=library)
        self.resident: list[tuple[int, list[int], Holding]] = []  # (seq_id, prompt tokens, cells), newest first
        self.ledger = KVLedger(self.kv_cells)
        self.free_ids = list(range(self.max_parallel))
        self.waiting: list[_Seq] = []  # arrived, not yet admitted (oldest first)
        self.head: _Seq | None = None  # admitted, its prompt being evaluated
        self.live: list[_Seq] = []  # decoding
        self.done: list[tuple[Any, dict[str, Any]]] = []  # results not yet handed back
        self.buried: list[Holding] = []  # ended sequences whose cells the grave id holds
        self.counters = {"decode_steps": 0, "peak_live": 0, "admitted": 0, "joined": 0, "flushes": 0}

    def describe(self) -> dict[str, Any]:
        return {"library": self.library, "repack": self.repack,
                "threads": "auto" if self.auto_threads else self.threads,
                "max_parallel": self.max_parallel,
                "n_ctx": self.n_ctx, "kv_cells": self.kv_cells,
                "system_info": self.ll.llama_print_system_info().decode(errors="replace")}

    # -- requests in and results out ------------------------------------------
    def submit(self, items: list[tuple[Any, dict[str, Any]]]) -> None:
        """Queue ``(key, request)`` pairs; each comes back from :meth:`step` as
        ``(key, result)`` (see :meth:`generate` for the result's fields). A request
        that cannot run (its chat, its length) comes back from the next step."""
        now = time.perf_counter()
        for key, req in items:
            try:
                prompt, template_stop = self.render(req["messages"])
                if not prompt:
                    raise EngineError("error", "the chat template rendered an empty prompt")
                if len(prompt) >= self.n_ctx:
                    raise EngineError("prompt_too_long", f"Requested tokens ({len(prompt)}) exceed "
                                      f"context window of {self.n_ctx}")
            except EngineError as exc:
                self.done.append((key, {"error": exc.kind, "message": str(exc)}))
                continue
            except Exception as exc:  # the chat template refused these messages: this request only
                self.done.append((key, {"error": "error",
                                        "message": f"cannot render the chat: {type(exc).__name__}: {exc}"}))
                continue
            req = {**req, "stop": list(req.get("stop") or ()) + template_stop}
            self.waiting.append(_Seq(key=key, req=req, prompt=prompt, t0=now))

    def cancel(self, keys: list[Any]) -> None:
        """Forget these requests: no result, and their slots go to others."""
        gone = set(keys)
        self.waiting = [s for s in self.waiting if s.key not in gone]
        for s in self.live:
            if s.key in gone:
                s.cancelled = True
        if self.head is not None and self.head.key in gone:
            self.head.cancelled = True
            self._release(self.head)  # nothing copies from a prompt still being evaluated
            self.head = None

    @property
    def busy(self) -> bool:
        return bool(self.waiting or self.head or self.live or self.done)

    def stats(self) -> dict[str, int]:
        """Counters since the engine started: ``decode_steps``, ``peak_live`` (most
        sequences in one decode step), ``admitted`` and ``joined`` (admitted while
        other sequences were decoding)."""
        return dict(self.counters)

    def generate(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One result dict per request, in order: ``text``, ``finish_reason``,
        ``prompt_tokens``, ``completion_tokens``, ``latency_s``, ``logprobs``;
        or ``error`` (kind) and ``message`` for a request that could not run."""
        mine = object()
        self.submit([((mine, i), req) for i, req in enumerate(requests)])
        results: list[dict[str, Any] | None] = [None] * len(requests)
        while self.busy and any(r is None for r in results):
            for (owner, i), out in self.step():
                if owner is mine:
                    results[i] = out
        return results  # type: ignore[return-value]

    def fail_all(self, message: str) -> list[tuple[Any, dict[str, Any]]]:
        """End every request in the engine with ``message`` (after an unexpected
        exception: the engine's state is not trusted to go on)."""
        error = {"error": "error", "message": message}
        out = list(self.done) + [(s.key, error) for s in self.waiting]
        self.done, self.waiting = [], []
        for s in ([self.head] if self.head else []) + self.live:
            s.error = error
            self._release(s)
        self.head, self.live = None, []
        out += self.done
        self.done = []
        return out

    # -- one step: admit and prefill, then decode ------------------------------
    def step(self) -> list[tuple[Any, dict[str, Any]]]:
        """Admit waiting requests into free slots and evaluate their prompts (at
        most about ``PROMPT_CHUNK`` tokens), advance every decoding sequence by one
        token, and return the ``(key, result)`` of each request that ended."""
        budget = PROMPT_CHUNK
        while budget > 0:
            if self.head is None and not self._admit():
                break
            if self.head is not None:
                budget -= self._prefill_chunk()
        self._decode_live()
        keep = []
        for s in self.live:
            if s.finish or s.error is not None or s.cancelled:
                self._release(s)
            else:
                keep.append(s)
        self.live = keep
        out, self.done = self.done, []
        return out

    def _slots_taken(self) -> int:
        return len(self.live) + (self.head is not None)

    def _extent(self, s: _Seq) -> int:
        """KV cells ``s`` may come to hold: its prompt and the longest reply it may write."""
        return min(len(s.prompt) + int(s.req.get("max_tokens", 256)), self.n_ctx)

    def _admit(self) -> bool:
        """Make the next waiting request the one being prefilled; False when none
        can be (no request, no free slot, or its cells do not fit while others run)."""
        if not self.waiting or self._slots_taken() >= self.max_parallel:
            return False
        if not self.live and self.head is None:
            self._flush_grave()
        cached = [(s.seq_id, s.prompt, s.holding) for s in self.live if s.error is None]
        cached += self.resident
        s = self.waiting[pick_next(self.waiting, [p for _, p, _ in cached], self.max_parallel)]
        src, shared, parent = -1, 0, None
        for seq_id, toks, holding in cached:
            n = min(common_prefix(toks, s.prompt), len(s.prompt) - 1)  # the last is evaluated for its logits
            if n > shared:
                src, shared, parent = seq_id, n, holding
        while not self.ledger.fits(self._extent(s), shared):
            spare = [r for r in self.resident if r[0] != src] or ([] if self.live else self.resident)
            if not spare:
                if self.live:
                    return False  # wait for the running sequences to end: then the grave is flushed
                break  # nothing runs and nothing is kept: the cache is empty
            if spare[-1][0] == src:
                src, shared, parent = -1, 0, None
            self._drop_resident(spare[-1])
        self.waiting.remove(s)
        try:
            s.sampler = self._sampler(s.req)
        except EngineError as exc:
            self.done.append((s.key, {"error": exc.kind, "message": str(exc)}))
            return True
        s.seq_id = min(self.free_ids)
        self.free_ids.remove(s.seq_id)
        s.logprobs = [] if (self.logprobs and s.req.get("logprobs")) else None
        if shared > 0:
            self.ll.llama_memory_seq_cp(self.mem, src, s.seq_id, 0, shared)
        s.fed = shared
        s.holding = self.ledger.hold(self._extent(s), parent, shared)
        self.head = s
        self.counters["admitted"] += 1
        self.counters["joined"] += any(not x.finish for x in self.live)
        return True

    def _prefill_chunk(self) -> int:
        """Evaluate the next ``PROMPT_CHUNK`` tokens of the head's prompt (chunks
        counted from where its copied prefix ends, as alone); after the last one,
        draw its first token and start it decoding. Returns the tokens evaluated."""
        s = self.head
        assert s is not None
        end = min(len(s.prompt), s.fed + PROMPT_CHUNK)
        self.batch.n_tokens = 0
        for pos in range(s.fed, end):
            self._add(s.prompt[pos], pos, s.seq_id, pos == len(s.prompt) - 1)
        n, s.fed = end - s.fed, end
        try:
            self._decode()
        except EngineError as exc:
            s.error = {"error": exc.kind, "message": str(exc)}
            self.head = None
            self._release(s)
            return n
        if s.fed == len(s.prompt):
            self.head = None
            s.pos = len(s.prompt)
            self.live.append(s)
            self._sample(s, self.batch.n_tokens - 1)
            self._admit_copies(s)
        return n

    def _admit_copies(self, s: _Seq) -> None:
        """Admit waiting requests whose prompt is ``s``'s (samples of one prompt):
        each copies all of its KV cells and draws from the logits just computed,
        with no decode of its own."""
        idx = self.batch.n_tokens - 1
        for w in list(self.waiting):
            if self._slots_taken() >= self.max_parallel:
                return
            if w.prompt != s.prompt:
                if w.passed >= self.max_parallel:
                    return  # an overdue request goes first
                continue
            if not self.ledger.fits(self._extent(w), len(s.prompt)):
                return
            for older in self.waiting[:self.waiting.index(w)]:
                older.passed += 1
            self.waiting.remove(w)
            try:
                w.sampler = self._sampler(w.req)
            except EngineError as exc:
                self.done.append((w.key, {"error": exc.kind, "message": str(exc)}))
                continue
            w.seq_id = min(self.free_ids)
            self.free_ids.remove(w.seq_id)
            w.logprobs = [] if (self.logprobs and w.req.get("logprobs")) else None
            self.ll.llama_memory_seq_cp(self.mem, s.seq_id, w.seq_id, 0, len(s.prompt))
            w.fed = w.pos = len(s.prompt)
            w.holding = self.ledger.hold(self._extent(w), s.holding, len(s.prompt))
            self.live.append(w)
            self.counters["admitted"] += 1
            self._sample(w, idx)

    def _decode_live(self) -> None:
        """One token for every decoding sequence, in a single llama_decode."""
        running = [s for s in self.live if not s.finish and s.error is None and not s.cancelled]
        if not running:
            return
        self.batch.n_tokens = 0
        for s in running:
            self._add(s.last, s.pos, s.seq_id, True)
            s.pos += 1
        try:
            self._decode()
        except EngineError as exc:
            for s in running:
                s.error = {"error": exc.kind, "message": str(exc)}
            return
        self.counters["decode_steps"] += 1
        self.counters["peak_live"] = max(self.counters["peak_live"], len(running))
        for i, s in enumerate(running):
            self._sample(s, i)

    def _release(self, s: _Seq) -> None:
        """``s`` ended: its result out, its prompt kept for later prefixes, its
        sampler and slot freed; its cells go to the grave id (see above)."""
        ll = self.ll
        if s.sampler is not None:
            ll.llama_sampler_free(s.sampler)
            s.sampler = None
        if s.seq_id >= 0:
            if s.error is None and not s.cancelled and s.fed == len(s.prompt):
                self._keep_resident(s)
            ll.llama_memory_seq_cp(self.mem, s.seq_id, self.grave, -1, -1)
            ll.llama_memory_seq_rm(self.mem, s.seq_id, -1, -1)
            self.free_ids.append(s.seq_id)
            s.seq_id = -1
        if s.holding is not None:
            s.holding.extent = max(s.pos, s.fed)  # the cells it wrote, held until the flush
            self.buried.append(s.holding)
            s.holding = None
        if not s.cancelled:
            self.done.append((s.key, s.error or _result(s)))

    def _flush_grave(self) -> None:
        """Free the ended sequences' cells: only when nothing decodes (or is being
        prefilled), so no running sequence's later cells land before its earlier ones."""
        if self.buried:
            self.ll.llama_memory_seq_rm(self.mem, self.grave, -1, -1)
            for h in self.buried:
                self.ledger.end(h)
            self.buried = []
            self.counters["flushes"] += 1

    def _sample(self, s: _Seq, idx: int) -> None:
        ll = self.ll
        token = ll.llama_sampler_sample(s.sampler, self.ctx, idx)
        if s.logprobs is not None:
            s.logprobs.append(self._logprob(idx, token, int(s.req["logprobs"])))
        if ll.llama_vocab_is_eog(self.vocab, token):
            s.finish = "stop"
            if s.logprobs:
                s.logprobs.pop()
            return
        s.n_out += 1
        s.last = token
        before = len(s.text)
        s.out_bytes += self._piece(token)
        s.text = s.out_bytes.decode("utf-8", errors="ignore")
        for stop in s.req.get("stop") or ():
            at = s.text.find(stop, max(0, before - len(stop) + 1))
            if stop and at >= 0:
                s.text = s.text[:at]
                s.finish = "stop"
                return
        if s.n_out >= int(s.req.get("max_tokens", 256)) or s.pos + 1 >= self.n_ctx:
            s.finish = "length"

    # -- prompts kept for later requests ----------------------------------------
    def _keep_resident(self, s: _Seq) -> None:
        """Keep ended ``s``'s prompt (the ``n_resident`` most recent are kept), unless
        a kept prompt already starts with it; a kept prompt that is a prefix of it
        is redundant and goes."""
        if not self.n_resident or any(toks[:len(s.prompt)] == s.prompt for _, toks, _ in self.resident):
            return
        for entry in [r for r in self.resident if s.prompt[:len(r[1])] == r[1]]:
            self._drop_resident(entry)
        while len(self.resident) >= self.n_resident:
            self._drop_resident(self.resident[-1])
        taken = {rid for rid, _, _ in self.resident}
        rid = min(r for r in range(self.max_parallel, self.max_parallel + self.n_resident) if r not in taken)
        self.ll.llama_memory_seq_cp(self.mem, s.seq_id, rid, 0, len(s.prompt))
        self.resident.insert(0, (rid, s.prompt, self.ledger.hold(len(s.prompt), s.holding, len(s.prompt))))

    def _drop_resident(self, entry: tuple[int, list[int], Holding]) -> None:
        self.ll.llama_memory_seq_rm(self.mem, entry[0], -1, -1)
        self.ledger.end(entry[2])
        self.resident.remove(entry)

    def close(self) -> None:
        for s in ([self.head] if self.head else []) + self.live:
            if s.sampler is not None and self.ctx:
                self.ll.llama_sampler_free(s.sampler)
                s.sampler = None
        super().close()


def _result(s: _Seq) -> dict[str, Any]:
    return {
        "text": s.text,
        "finish_reason": s.finish or "length",
        "prompt_tokens": len(s.prompt),
        "completion_tokens": s.n_out,
        "latency_s": time.perf_counter() - s.t0,  # from its arrival in the engine
        "logprobs": s.logprobs,
    }


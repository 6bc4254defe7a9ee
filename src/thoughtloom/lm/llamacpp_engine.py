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

How a batch of requests is decoded
----------------------------------
1. Each request's messages are rendered with the model's own chat template
   (the GGUF's ``tokenizer.chat_template``, as llama-cpp-python renders it:
   :mod:`.chat_template`) and tokenized.
2. Prompts are sorted by their tokens, so a prompt's longest shared prefix
   is with its predecessor (or with a prompt kept *resident* from the
   previous batch). That prefix's KV cells are copied to the new sequence
   (``llama_memory_seq_cp``: in a unified KV cache a copy only tags the
   cells, it costs no memory) and only the rest of the prompt is evaluated.
   N samples of one prompt therefore evaluate the prompt once.
3. Then every live sequence advances one token per ``llama_decode``: a
   single batch, so the weights are read once per step for all sequences
   (matrix-matrix instead of matrix-vector products). Each sequence has its
   own sampler chain (its JSON-schema grammar, temperature, top_p and seed)
   and finishes on its own (end of generation, a stop string, max_tokens or
   the context limit).
4. At the end, the batch's prompts stay resident in the KV cache, with the
   most recent earlier ones (up to ``resident`` prompts in all, default
   ``RESIDENT``), so later batches can reuse their prefixes: a long few-shot
   preamble shared by questions asked one at a time is evaluated once.

Sampling matches llama-cpp-python's ``create_chat_completion`` defaults:
greedy at temperature 0, else top-k 40 → top-p → min-p 0.05 → temperature →
a seeded draw, seeded per request (``seed``), so a sampled request gives the
same text alone or in a batch as long as the model's logits are the same.
What is exact and what is not (measured on the embedded model; the
integration tests pin short cases of the first two):

- decoding a request in a batch or alone gives the same greedy text and the
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

import ctypes
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from .chat_template import ChatTemplate
from .cpu import LoadMeter, cpu_flags, repack_safe, threads_for

#: Prompts kept in the KV cache after a batch for the next batch's prefixes.
RESIDENT = 4
#: Tokens per llama_decode call while evaluating prompts.
PROMPT_CHUNK = 512
#: Sampling defaults of llama-cpp-python's create_chat_completion.
TOP_K, MIN_P = 40, 0.05


class EngineError(Exception):
    """A request the engine cannot serve; ``kind`` is 'prompt_too_long' or 'error'."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


#: The llama.cpp libraries the engine runs on: ``auto`` takes the first installed
#: (llama-cpp-python, compiled for this CPU; the prebuilt one was not shown to be
#: as fast, docs/benchmarks.md).
LIBRARIES = ("llama-cpp-python", "xllamacpp")


def open_library(name: str = "auto") -> tuple[str, Any, Any]:
    """(library name, namespace of llama.cpp's C functions, JSON-schema sampler
    factory ``(vocab, schema) -> sampler``) for ``llama-cpp-python`` (compiled
    at install, the default dependency), ``xllamacpp`` (the prebuilt wheel of
    the ``prebuilt`` extra, through :mod:`.llamacpp_capi`) or ``auto``."""
    if name not in ("auto", *LIBRARIES):
        raise EngineError("error", f"unknown llama.cpp library {name!r}: choose auto, {', '.join(LIBRARIES)}")
    tried = []
    for lib in LIBRARIES if name == "auto" else (name,):
        try:
            other = "llama_cpp" if lib == "xllamacpp" else "xllamacpp"
            # both export llama.cpp's symbols, and one would bind to the other's
            if sys.modules.get(other) is not None:
                raise ImportError(f"{other} is already loaded in this process; "
                                  "run each library in a process of its own (the model worker)")
            if lib == "xllamacpp":
                from . import llamacpp_capi

                ns = llamacpp_capi.load()
                return lib, ns, lambda vocab, schema: llamacpp_capi.json_grammar(ns, vocab, schema)
            import logging

            import llama_cpp
            from llama_cpp.llama_grammar import json_schema_to_gbnf

            # llama-cpp-python prints llama.cpp's log lines at or above this
            # logger's level: keep warnings and errors (they end up in a crash
            # message), drop the thousand lines of model-loading detail.
            logging.getLogger("llama-cpp-python").setLevel(logging.WARNING)
            return lib, llama_cpp, lambda vocab, schema: llama_cpp.llama_sampler_init_grammar(
                vocab, json_schema_to_gbnf(json.dumps(schema)).encode(), b"root")
        except ImportError as exc:
            tried.append(f"{lib}: {exc}")
    raise EngineError("error", "no llama.cpp library could be loaded (" + "; ".join(tried)
                      + "): pip install llama-cpp-python, or 'thoughtloom[prebuilt]'")


@dataclass
class _Seq:
    """One request being decoded."""

    index: int  # position in the caller's batch
    req: dict[str, Any]
    prompt: list[int]
    seq_id: int = -1
    sampler: Any = None
    pos: int = 0
    last: int = -1  # the token to feed next
    out_bytes: bytearray = field(default_factory=bytearray)
    text: str = ""
    n_out: int = 0
    finish: str = ""
    logprobs: list[dict[str, Any]] | None = None
    t0: float = 0.0
    error: dict[str, str] | None = None


class Engine:
    """A loaded GGUF model and one llama.cpp context with ``max_parallel`` sequences."""

    def __init__(self, model_path: str, *, n_ctx: int = 4096, threads: int | None = None,
                 max_parallel: int = 16, repack: bool | None = None, logprobs: bool = False,
                 resident: int = RESIDENT, library: str = "auto") -> None:
        self.library, ll, self._json_grammar = open_library(library)
        self.ll = ll
        self.n_ctx = n_ctx
        self.max_parallel = max(1, max_parallel)
        self.n_resident = max(0, resident)
        self.logprobs = logprobs
        self.repack = repack_safe(cpu_flags()) if repack is None else repack
        self.cores = os.cpu_count() or 1
        self.auto_threads = threads is None
        self.threads = threads or self.cores
        self.load = LoadMeter() if self.auto_threads else None
        self._load_checked = time.monotonic()
        ll.llama_backend_init()
        mparams = ll.llama_model_default_params()
        mparams.use_extra_bufts = self.repack
        self.model = ll.llama_model_load_from_file(str(model_path).encode(), mparams)
        if not self.model:
            raise EngineError("error", f"llama.cpp could not load {model_path}")
        self.vocab = ll.llama_model_get_vocab(self.model)
        self.n_vocab = ll.llama_vocab_n_tokens(self.vocab)
        # Sequence ids: [0, max_parallel) decode, [max_parallel, +n_resident) keep prompts.
        self.kv_cells = 2 * n_ctx
        cparams = ll.llama_context_default_params()
        cparams.n_ctx = self.kv_cells
        cparams.n_batch = PROMPT_CHUNK
        cparams.n_ubatch = PROMPT_CHUNK
        cparams.n_seq_max = self.max_parallel + self.n_resident
        cparams.kv_unified = True
        cparams.n_threads = self.threads
        cparams.n_threads_batch = self.threads
        cparams.no_perf = True
        cparams.flash_attn_type = ll.LLAMA_FLASH_ATTN_TYPE_AUTO  # batch-invariant attention (see above)
        self.ctx = ll.llama_init_from_model(self.model, cparams)
        if not self.ctx:
            raise EngineError("error", f"llama.cpp could not create a context of {self.kv_cells} cells")
        self.mem = ll.llama_get_memory(self.ctx)
        self.batch = ll.llama_batch_init(max(PROMPT_CHUNK, self.max_parallel), 0, 1)
        self.resident: list[tuple[int, list[int]]] = []  # (seq_id, prompt tokens)
        eos = ll.llama_vocab_eos(self.vocab)
        self.template = ChatTemplate(self._meta("tokenizer.chat_template"), eos_token=self._piece_text(eos),
                                     bos_token=self._piece_text(ll.llama_vocab_bos(self.vocab)))

    # -- model facts ------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {"library": self.library, "repack": self.repack,
                "threads": "auto" if self.auto_threads else self.threads,
                "max_parallel": self.max_parallel,
                "n_ctx": self.n_ctx, "kv_cells": self.kv_cells,
                "system_info": self.ll.llama_print_system_info().decode(errors="replace")}

    def _meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(1 << 16)
        n = self.ll.llama_model_meta_val_str(self.model, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            self.ll.llama_model_meta_val_str(self.model, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", errors="replace")

    def _piece_text(self, token: int) -> str:
        if token < 0:
            return ""
        return self.ll.llama_vocab_get_text(self.vocab, token).decode("utf-8", errors="replace")

    def _piece(self, token: int) -> bytes:
        buf = ctypes.create_string_buffer(64)
        n = self.ll.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = self.ll.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        return buf.raw[:n]

    # -- prompts ----------------------------------------------------------
    def tokenize(self, text: str, *, add_bos: bool) -> list[int]:
        data = text.encode("utf-8")
        cap = len(data) + 8
        buf = (self.ll.llama_token * cap)()
        n = self.ll.llama_tokenize(self.vocab, data, len(data), buf, cap, add_bos, True)
        if n < 0:
            cap = -n
            buf = (self.ll.llama_token * cap)()
            n = self.ll.llama_tokenize(self.vocab, data, len(data), buf, cap, add_bos, True)
        return list(buf[:n])

    def render(self, messages: list[dict[str, str]]) -> tuple[list[int], list[str]]:
        """Prompt tokens and the template's own stop strings."""
        prompt, stop = self.template.render(messages)
        return self.tokenize(prompt, add_bos=False), stop

    def count_tokens(self, requests: list[dict[str, Any]]) -> list[int | None]:
        """Each request's prompt tokens exactly as :meth:`generate` feeds them
        (chat template applied); None where the template refuses the chat."""
        counts: list[int | None] = []
        for req in requests:
            try:
                counts.append(len(self.render(req["messages"])[0]))
            except Exception:  # the chat template refused these messages; generate says why
                counts.append(None)
        return counts

    # -- samplers ---------------------------------------------------------
    def _sampler(self, req: dict[str, Any]) -> Any:
        ll = self.ll
        chain = ll.llama_sampler_chain_init(ll.llama_sampler_chain_default_params())
        schema = req.get("json_schema")
        if schema is not None:
            try:
                grammar = self._json_grammar(self.vocab, schema)
            except Exception as exc:  # llama-cpp-python's converter asserts on a schema it cannot read
                grammar, why = None, f": {type(exc).__name__}: {exc}"
            else:
                why = ""
            if not grammar:
                ll.llama_sampler_free(chain)
                raise EngineError("error", f"cannot constrain the reply to this JSON schema{why}")
            ll.llama_sampler_chain_add(chain, grammar)
        temperature = float(req.get("temperature", 0.0))
        if temperature <= 0:
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_greedy())
        else:
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_top_k(TOP_K))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_top_p(float(req.get("top_p", 1.0)), 1))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_min_p(MIN_P, 1))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_temp(temperature))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_dist(int(req.get("seed", 0)) & 0xFFFFFFFF))
        return chain

    # -- the batch --------------------------------------------------------
    def generate(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One result dict per request, in order: ``text``, ``finish_reason``,
        ``prompt_tokens``, ``completion_tokens``, ``latency_s``, ``logprobs``;
        or ``error`` (kind) and ``message`` for a request that could not run."""
        results: list[dict[str, Any] | None] = [None] * len(requests)
        seqs: list[_Seq] = []
        for i, req in enumerate(requests):
            try:
                prompt, template_stop = self.render(req["messages"])
                if not prompt:
                    raise EngineError("error", "the chat template rendered an empty prompt")
                if len(prompt) >= self.n_ctx:
                    raise EngineError("prompt_too_long", f"Requested tokens ({len(prompt)}) exceed "
                                      f"context window of {self.n_ctx}")
                req = {**req, "stop": list(req.get("stop") or ()) + template_stop}
                seqs.append(_Seq(index=i, req=req, prompt=prompt))
            except EngineError as exc:
                results[i] = {"error": exc.kind, "message": str(exc)}
            except Exception as exc:  # the chat template refused these messages: this request only
                results[i] = {"error": "error", "message": f"cannot render the chat: {type(exc).__name__}: {exc}"}
        seqs.sort(key=lambda s: s.prompt)
        for group in self._fit(seqs):
            try:
                self._run(group)
            except EngineError as exc:
                for s in group:
                    s.error = {"error": exc.kind, "message": str(exc)}
            for s in group:
                results[s.index] = s.error or _result(s)
        return results  # type: ignore[return-value]

    def _cells(self, seq: _Seq, prev: _Seq | None) -> int:
        """KV cells ``seq`` adds after ``prev`` (its sorted predecessor): the
        prompt past their shared prefix, which is stored once, plus its reply."""
        shared = _common_prefix(prev.prompt, seq.prompt) if prev else 0
        return min(len(seq.prompt) + int(seq.req.get("max_tokens", 256)), self.n_ctx) - shared

    def _group_cells(self, group: list[_Seq]) -> int:
        return sum(self._cells(s, group[i - 1] if i else None) for i, s in enumerate(group))

    def _fit(self, seqs: list[_Seq]) -> list[list[_Seq]]:
        """Split sorted sequences into groups that fit the sequence slots and KV cells."""
        groups: list[list[_Seq]] = []
        cur: list[_Seq] = []
        cells = 0
        for s in seqs:
            need = self._cells(s, cur[-1] if cur else None)
            if cur and (len(cur) == self.max_parallel or cells + need > self.kv_cells):
                groups.append(cur)
                cur, cells, need = [], 0, self._cells(s, None)
            cur.append(s)
            cells += need
        if cur:
            groups.append(cur)
        return groups

    def _run(self, group: list[_Seq]) -> None:
        """Decode one group of sequences to the end; a request whose sampler
        cannot be built gets its own error and the others go on."""
        ll = self.ll
        if self._group_cells(group) + sum(len(t) for _, t in self.resident) > self.kv_cells:
            self._drop_resident()
        t0 = time.perf_counter()
        try:
            for seq_id, s in enumerate(group):
                s.seq_id, s.t0 = seq_id, t0
                try:
                    s.sampler = self._sampler(s.req)
                except EngineError as exc:
                    s.error = {"error": exc.kind, "message": str(exc)}
                s.logprobs = [] if (self.logprobs and s.req.get("logprobs")) else None
            runnable = [s for s in group if s.error is None]
            self._prefill(runnable)
            live = [s for s in runnable if not s.finish]
            while live:
                self.batch.n_tokens = 0
                for s in live:
                    self._add(s.last, s.pos, s.seq_id, True)
                    s.pos += 1
                self._decode()
                for i, s in enumerate(live):
                    self._sample(s, i)
                live = [s for s in live if not s.finish]
            self._keep_resident(runnable)
        finally:
            for s in group:
                if s.sampler is not None:
                    ll.llama_sampler_free(s.sampler)
                    s.sampler = None
                ll.llama_memory_seq_rm(self.mem, s.seq_id, -1, -1)

    def _prefill(self, group: list[_Seq]) -> None:
        """Evaluate each prompt after its longest already-evaluated prefix, and
        draw each sequence's first token. A prompt equal to the one before it
        (samples of one prompt: sorting puts them side by side) copies its
        whole KV and draws from the same logits, with no decode of its own."""
        done: list[tuple[int, list[int]]] = list(self.resident)
        prev: _Seq | None = None
        for s in group:
            if prev is not None and prev.prompt == s.prompt:
                self.ll.llama_memory_seq_cp(self.mem, prev.seq_id, s.seq_id, 0, len(s.prompt))
                s.pos = len(s.prompt)
                self._sample(s, self.batch.n_tokens - 1)
                continue
            prev = s
            src, shared = -1, 0
            for seq_id, toks in done:
                n = _common_prefix(toks, s.prompt)
                if n > shared:
                    src, shared = seq_id, n
            shared = min(shared, len(s.prompt) - 1)  # the last token is evaluated for its logits
            if src >= 0 and shared > 0:
                self.ll.llama_memory_seq_cp(self.mem, src, s.seq_id, 0, shared)
            rest = s.prompt[shared:]
            for start in range(0, len(rest), PROMPT_CHUNK):
                chunk = rest[start:start + PROMPT_CHUNK]
                self.batch.n_tokens = 0
                for j, tok in enumerate(chunk):
                    last = start + j == len(rest) - 1
                    self._add(tok, shared + start + j, s.seq_id, last)
                self._decode()
            s.pos = len(s.prompt)
            self._sample(s, self.batch.n_tokens - 1)
            done.append((s.seq_id, s.prompt))

    def _add(self, token: int, pos: int, seq_id: int, logits: bool) -> None:
        b, i = self.batch, self.batch.n_tokens
        b.token[i] = token
        b.pos[i] = pos
        b.n_seq_id[i] = 1
        b.seq_id[i][0] = seq_id
        b.logits[i] = logits
        b.n_tokens = i + 1

    def _decode(self) -> None:
        if self.load is not None and time.monotonic() - self._load_checked >= 1.0:
            self._adapt_threads()
        rc = self.ll.llama_decode(self.ctx, self.batch)
        if rc != 0:
            raise EngineError("error", f"llama_decode failed with status {rc}")

    def _adapt_threads(self) -> None:
        self._load_checked = time.monotonic()
        others = self.load.others() if self.load else None
        if others is None:
            return
        n = threads_for(self.cores, others)
        if n != self.threads:
            self.ll.llama_set_n_threads(self.ctx, n, n)
            self.threads = n

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

    def _logprob(self, idx: int, token: int, top: int) -> dict[str, Any]:
        import numpy as np

        ptr = self.ll.llama_get_logits_ith(self.ctx, idx)
        logits = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).astype(np.float64)
        peak = logits.max()
        logz = peak + np.log(np.exp(logits - peak).sum())
        best = np.argpartition(-logits, min(top, self.n_vocab - 1))[:top]
        best = best[np.argsort(-logits[best])]
        text = lambda t: self._piece(int(t)).decode("utf-8", errors="replace")  # noqa: E731
        return {"token": text(token), "logprob": float(logits[token] - logz),
                "top": [(text(t), float(logits[t] - logz)) for t in best]}

    # -- prompts kept between batches --------------------------------------
    def _keep_resident(self, group: list[_Seq]) -> None:
        """Keep this batch's prompts (longest first) and then the most recent
        earlier ones, up to ``n_resident``; a kept prompt that is a prefix of a
        newer one is redundant and goes."""
        fresh: list[_Seq] = []
        for s in sorted(group, key=lambda s: -len(s.prompt)):
            if len(fresh) < self.n_resident and not any(f.prompt[:len(s.prompt)] == s.prompt for f in fresh):
                fresh.append(s)
        old, dropped = [], []
        for rid, toks in self.resident:
            redundant = any(f.prompt[:len(toks)] == toks for f in fresh)
            (dropped if redundant or len(old) + len(fresh) >= self.n_resident else old).append((rid, toks))
        for rid, _ in dropped:
            self.ll.llama_memory_seq_rm(self.mem, rid, -1, -1)
        taken = {rid for rid, _ in old}
        free = [r for r in range(self.max_parallel, self.max_parallel + self.n_resident) if r not in taken]
        new = []
        for s, rid in zip(fresh, free):
            self.ll.llama_memory_seq_cp(self.mem, s.seq_id, rid, 0, len(s.prompt))
            new.append((rid, s.prompt))
        self.resident = new + old

    def _drop_resident(self) -> None:
        for rid, _ in self.resident:
            self.ll.llama_memory_seq_rm(self.mem, rid, -1, -1)
        self.resident = []

    def close(self) -> None:
        ll = self.ll
        if self.ctx:
            ll.llama_batch_free(self.batch)
            ll.llama_free(self.ctx)
            self.ctx = None
        if self.model:
            ll.llama_model_free(self.model)
            self.model = None


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _result(s: _Seq) -> dict[str, Any]:
    return {
        "text": s.text,
        "finish_reason": s.finish or "length",
        "prompt_tokens": len(s.prompt),
        "completion_tokens": s.n_out,
        "latency_s": time.perf_counter() - s.t0,
        "logprobs": s.logprobs,
    }


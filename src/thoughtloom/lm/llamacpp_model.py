"""A GGUF model and its llama.cpp context: the part of the embedded engine
that knows llama.cpp and no scheduling (which is :mod:`.llamacpp_engine`).

Which library, loading the model and a context with a unified KV cache,
rendering and tokenizing chats, one sampler chain per request, adding tokens
to the batch and one ``llama_decode``, the thread pool that follows the
free cores (:mod:`.cpu`).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from typing import Any

from .chat_template import ChatTemplate
from .cpu import LoadMeter, cpu_flags, repack_safe, threads_for

#: Tokens per llama_decode call while evaluating prompts.
PROMPT_CHUNK = 512
#: Sampling defaults of llama-cpp-python's create_chat_completion.
TOP_K, MIN_P = 40, 0.05



class EngineError(Exception):
    """A request the engine cannot serve; ``kind`` is 'prompt_too_long' or 'error'."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


#: The llama.cpp libraries the engine runs on: ``auto`` takes the first installed:
#: llama-cpp-python (the ``llamacpp-src`` extra, compiled for this CPU) where a user
#: installed it, as it is faster on AVX-512 CPUs (0.45x to 0.83x for the prebuilt
#: wheel on ours, docs/benchmarks.md), else xllamacpp's prebuilt wheel (a dependency).
LIBRARIES = ("llama-cpp-python", "xllamacpp")


def open_library(name: str = "auto") -> tuple[str, Any, Any]:
    """(library name, namespace of llama.cpp's C functions, JSON-schema sampler
    factory ``(vocab, schema) -> sampler``) for ``llama-cpp-python`` (compiled
    at install, the ``llamacpp-src`` extra), ``xllamacpp`` (the prebuilt wheel,
    a dependency, through :mod:`.llamacpp_capi`) or ``auto``."""
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
    from .llamacpp_capi import PINNED  # ctypes declarations only: no library is loaded

    raise EngineError("error", "no llama.cpp library could be loaded (" + "; ".join(tried)
                      + f"): pip install xllamacpp=={PINNED} (a dependency of thoughtloom), or "
                      "'thoughtloom[llamacpp-src]' to compile llama.cpp")


class ModelContext:
    """A loaded GGUF model and one llama.cpp context of ``2 * n_ctx`` KV cells
    shared by ``n_seq_max`` sequence ids (a unified cache: a copied prefix is stored once)."""

    def __init__(self, model_path: str, *, n_ctx: int, threads: int | None, n_seq_max: int,
                 batch_tokens: int, repack: bool | None, logprobs: bool, library: str) -> None:
        self.library, ll, self._json_grammar = open_library(library)
        self.ll = ll
        self.n_ctx = n_ctx
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
        self.kv_cells = 2 * n_ctx
        cparams = ll.llama_context_default_params()
        cparams.n_ctx = self.kv_cells
        cparams.n_batch = PROMPT_CHUNK
        cparams.n_ubatch = PROMPT_CHUNK
        cparams.n_seq_max = n_seq_max
        cparams.kv_unified = True
        cparams.n_threads = self.threads
        cparams.n_threads_batch = self.threads
        cparams.no_perf = True
        # batch-invariant attention: greedy replies alone and batched agree (see llamacpp_engine)
        cparams.flash_attn_type = ll.LLAMA_FLASH_ATTN_TYPE_AUTO
        self.ctx = ll.llama_init_from_model(self.model, cparams)
        if not self.ctx:
            raise EngineError("error", f"llama.cpp could not create a context of {self.kv_cells} cells")
        self.mem = ll.llama_get_memory(self.ctx)
        self.batch = ll.llama_batch_init(max(PROMPT_CHUNK, batch_tokens), 0, 1)
        eos = ll.llama_vocab_eos(self.vocab)
        self.template = ChatTemplate(self._meta("tokenizer.chat_template"), eos_token=self._piece_text(eos),
                                     bos_token=self._piece_text(ll.llama_vocab_bos(self.vocab)))

    # -- model facts ------------------------------------------------------
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

    # -- one llama_decode ---------------------------------------------------
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

    def close(self) -> None:
        ll = self.ll
        if self.ctx:
            ll.llama_batch_free(self.batch)
            ll.llama_free(self.ctx)
            self.ctx = None
        if self.model:
            ll.llama_model_free(self.model)
            self.model = None



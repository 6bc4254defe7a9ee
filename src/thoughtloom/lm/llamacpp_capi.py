"""Our ctypes binding of llama.cpp's C API in the prebuilt library that ``xllamacpp`` ships.

``xllamacpp`` (PyPI, MIT) is a 34 MB abi3 wheel: llama.cpp compiled once,
no compiler at install time. Its one shared object,
``xllamacpp/xllamacpp.abi3.so``, exports llama.cpp's C API (252 ``llama_*``
symbols) beside its own Python module. The embedded engine
(:mod:`.llamacpp_engine`) calls that C API directly through the declarations
below (``library="xllamacpp"``; the ``prebuilt`` extra), the same calls it
makes through llama-cpp-python's bindings on the default library.

The wheel is pinned (:data:`PINNED`): struct layouts and signatures are those
of llama.cpp build b11549, which is what xllamacpp 2026.10.11549 was built
from (its version is ``YYYY.M.<llama.cpp build number>``). The layouts of
``llama_model_params`` (80 bytes: ``load_mode`` and ``lazy_mode`` replaced the
``use_mmap``/``use_mlock``/``use_direct_io`` booleans) and
``llama_context_params`` (168 bytes) were checked against the library itself:
the default-params functions write exactly those many bytes, and every
default lands in the field it belongs to (tests/lm/test_llamacpp_capi.py).
Another xllamacpp version is refused rather than guessed at.

JSON schemas are enforced with llguidance, which this build of llama.cpp
links (``llama_sampler_init_llg``, kind ``"json"``): llama.cpp's own schema
support, instead of llama-cpp-python's GBNF converter.
"""

from __future__ import annotations

import ctypes
import json
import logging
import sys
from ctypes import (CFUNCTYPE, POINTER, Structure, c_bool, c_char_p, c_float, c_int, c_int8,
                    c_int32, c_size_t, c_uint32, c_void_p)
from types import SimpleNamespace
from typing import Any

#: The xllamacpp wheel these declarations follow (llama.cpp b11549).
PINNED = "2026.10.11549"

LLAMA_FLASH_ATTN_TYPE_AUTO = -1
GGML_LOG_LEVEL_WARN, GGML_LOG_LEVEL_ERROR, GGML_LOG_LEVEL_CONT = 3, 4, 5
#: What llama_context_default_params sets, as llama.cpp b11549 defines it.
GGML_DEFAULT_N_THREADS = 4

llama_token = c_int32
llama_pos = c_int32
llama_seq_id = c_int32


class llama_model_params(Structure):
    _fields_ = [
        ("devices", c_void_p),
        ("tensor_buft_overrides", c_void_p),
        ("n_gpu_layers", c_int32),
        ("split_mode", c_int),
        ("load_mode", c_int),
        ("lazy_mode", c_int),
        ("main_gpu", c_int32),
        ("tensor_split", c_void_p),
        ("progress_callback", c_void_p),
        ("progress_callback_user_data", c_void_p),
        ("kv_overrides", c_void_p),
        ("vocab_only", c_bool),
        ("check_tensors", c_bool),
        ("use_extra_bufts", c_bool),
        ("no_host", c_bool),
        ("no_alloc", c_bool),
        ("load_mtp", c_bool),
    ]


class llama_context_params(Structure):
    _fields_ = [
        ("n_ctx", c_uint32),
        ("n_batch", c_uint32),
        ("n_ubatch", c_uint32),
        ("n_seq_max", c_uint32),
        ("n_rs_seq", c_uint32),
        ("n_outputs_max", c_uint32),
        ("n_outputs_max_per_seq", c_uint32),
        ("n_threads", c_int32),
        ("n_threads_batch", c_int32),
        ("ctx_type", c_int),
        ("rope_scaling_type", c_int),
        ("pooling_type", c_int),
        ("attention_type", c_int),
        ("flash_attn_type", c_int),
        ("rope_freq_base", c_float),
        ("rope_freq_scale", c_float),
        ("yarn_ext_factor", c_float),
        ("yarn_attn_factor", c_float),
        ("yarn_beta_fast", c_float),
        ("yarn_beta_slow", c_float),
        ("yarn_orig_ctx", c_uint32),
        ("defrag_thold", c_float),
        ("cb_eval", c_void_p),
        ("cb_eval_user_data", c_void_p),
        ("type_k", c_int),
        ("type_v", c_int),
        ("abort_callback", c_void_p),
        ("abort_callback_data", c_void_p),
        # 8 bytes that are zero in the defaults and that the engine never sets: a
        # pointer-sized field b11549 added before the booleans (the booleans' defaults
        # read right only with it, see the test).
        ("_reserved", c_void_p),
        ("embeddings", c_bool),
        ("offload_kqv", c_bool),
        ("no_perf", c_bool),
        ("op_offload", c_bool),
        ("swa_full", c_bool),
        ("kv_unified", c_bool),
        ("samplers", c_void_p),
        ("n_samplers", c_size_t),
        ("ctx_other", c_void_p),
    ]


class llama_batch(Structure):
    _fields_ = [
        ("n_tokens", c_int32),
        ("token", POINTER(llama_token)),
        ("embd", POINTER(c_float)),
        ("pos", POINTER(llama_pos)),
        ("n_seq_id", POINTER(c_int32)),
        ("seq_id", POINTER(POINTER(llama_seq_id))),
        ("logits", POINTER(c_int8)),
    ]


class llama_sampler_chain_params(Structure):
    _fields_ = [("no_perf", c_bool)]


#: typedef void (*ggml_log_callback)(enum ggml_log_level level, const char * text, void * user_data)
LOG_CALLBACK = CFUNCTYPE(None, c_int, c_char_p, c_void_p)

_p = c_void_p
#: name -> (result, [arguments]), from include/llama.h of b11549.
SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "llama_backend_init": (None, []),
    "llama_log_set": (None, [LOG_CALLBACK, _p]),
    "llama_print_system_info": (c_char_p, []),
    "llama_model_default_params": (llama_model_params, []),
    "llama_context_default_params": (llama_context_params, []),
    "llama_sampler_chain_default_params": (llama_sampler_chain_params, []),
    "llama_model_load_from_file": (_p, [c_char_p, llama_model_params]),
    "llama_model_free": (None, [_p]),
    "llama_init_from_model": (_p, [_p, llama_context_params]),
    "llama_free": (None, [_p]),
    "llama_model_get_vocab": (_p, [_p]),
    "llama_model_meta_val_str": (c_int32, [_p, c_char_p, c_char_p, c_size_t]),
    "llama_vocab_n_tokens": (c_int32, [_p]),
    "llama_vocab_bos": (llama_token, [_p]),
    "llama_vocab_eos": (llama_token, [_p]),
    "llama_vocab_is_eog": (c_bool, [_p, llama_token]),
    "llama_vocab_get_text": (c_char_p, [_p, llama_token]),
    "llama_tokenize": (c_int32, [_p, c_char_p, c_int32, POINTER(llama_token), c_int32, c_bool, c_bool]),
    "llama_token_to_piece": (c_int32, [_p, llama_token, c_char_p, c_int32, c_int32, c_bool]),
    "llama_get_memory": (_p, [_p]),
    "llama_memory_seq_rm": (c_bool, [_p, llama_seq_id, llama_pos, llama_pos]),
    "llama_memory_seq_cp": (None, [_p, llama_seq_id, llama_seq_id, llama_pos, llama_pos]),
    "llama_batch_init": (llama_batch, [c_int32, c_int32, c_int32]),
    "llama_batch_free": (None, [llama_batch]),
    "llama_decode": (c_int32, [_p, llama_batch]),
    "llama_set_n_threads": (None, [_p, c_int32, c_int32]),
    "llama_get_logits_ith": (POINTER(c_float), [_p, c_int32]),
    "llama_sampler_chain_init": (_p, [llama_sampler_chain_params]),
    "llama_sampler_chain_add": (None, [_p, _p]),
    "llama_sampler_free": (None, [_p]),
    "llama_sampler_sample": (llama_token, [_p, _p, c_int32]),
    "llama_sampler_init_greedy": (_p, []),
    "llama_sampler_init_dist": (_p, [c_uint32]),
    "llama_sampler_init_top_k": (_p, [c_int32]),
    "llama_sampler_init_top_p": (_p, [c_float, c_size_t]),
    "llama_sampler_init_min_p": (_p, [c_float, c_size_t]),
    "llama_sampler_init_temp": (_p, [c_float]),
}
#: llama_sampler * llama_sampler_init_llg(const llama_vocab *, const char * kind, const char * data):
#: part of llama.cpp's common library (C++ linkage), exported under its mangled name.
LLG_SYMBOL = "_Z22llama_sampler_init_llgPK11llama_vocabPKcS3_"
#: Pointer-sized slot of the compiled grammar in the llguidance sampler's state (see json_grammar).
LLG_GRAMMAR_SLOT = 4

_log = logging.getLogger("llama.cpp")
_loaded: SimpleNamespace | None = None


def library_path() -> str:
    """The shared object of the installed, pinned xllamacpp wheel."""
    import xllamacpp  # loads the library into this process
    from xllamacpp import xllamacpp as native

    version = getattr(xllamacpp, "__version__", "?")
    if version != PINNED:
        raise ImportError(f"xllamacpp {version} is installed, but thoughtloom's llama.cpp declarations "
                          f"follow xllamacpp {PINNED}: pip install xllamacpp=={PINNED}")
    return str(native.__file__)


_last_level = [0]


@LOG_CALLBACK
def _log_line(level: int, text: bytes | None, _user: Any) -> None:
    """llama.cpp's log: warnings and errors (and their continuation lines) go
    to ``logging``, so to the worker's output and a crash message; the
    thousand lines of model-loading detail are dropped."""
    if level == GGML_LOG_LEVEL_CONT:
        level = _last_level[0]
    _last_level[0] = level
    if text and level in (GGML_LOG_LEVEL_WARN, GGML_LOG_LEVEL_ERROR):
        _log.log(logging.ERROR if level == GGML_LOG_LEVEL_ERROR else logging.WARNING, "%s",
                 text.decode("utf-8", errors="replace").rstrip())


def load() -> SimpleNamespace:
    """The bound functions, types and constants, under llama.cpp's own names
    (the names the engine also finds in llama-cpp-python's ``llama_cpp``)."""
    global _loaded
    if _loaded is not None:
        return _loaded
    if sys.modules.get("llama_cpp") is not None:
        # llama-cpp-python loads its llama.cpp with global symbols, and this library's
        # relocations (915 against llama_/ggml_/gguf_ names) would bind to that build's.
        raise ImportError("llama-cpp-python is already loaded in this process; "
                          "xllamacpp's llama.cpp must run in a process of its own")
    lib = ctypes.CDLL(library_path())
    ns = SimpleNamespace(llama_token=llama_token, LLAMA_FLASH_ATTN_TYPE_AUTO=LLAMA_FLASH_ATTN_TYPE_AUTO)
    for name, (result, arguments) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = result, arguments
        setattr(ns, name, fn)
    llg = getattr(lib, LLG_SYMBOL)
    llg.restype, llg.argtypes = c_void_p, [c_void_p, c_char_p, c_char_p]
    ns.llama_sampler_init_llg = llg
    check_defaults(ns)
    ns.llama_log_set(_log_line, None)
    _loaded = ns
    return ns


def check_defaults(ns: SimpleNamespace) -> None:
    """Refuse a library whose default params do not read as b11549's: a moved
    field would otherwise pass garbage to llama.cpp without a word."""
    m = ns.llama_model_default_params()
    c = ns.llama_context_default_params()
    found = {"model.n_gpu_layers": m.n_gpu_layers, "model.use_extra_bufts": m.use_extra_bufts,
             "model.vocab_only": m.vocab_only, "ctx.n_ctx": c.n_ctx, "ctx.n_batch": c.n_batch,
             "ctx.n_ubatch": c.n_ubatch, "ctx.n_seq_max": c.n_seq_max,
             "ctx.n_threads": c.n_threads, "ctx.flash_attn_type": c.flash_attn_type,
             "ctx.offload_kqv": c.offload_kqv, "ctx.kv_unified": c.kv_unified,
             "ctx.n_samplers": c.n_samplers}
    want = {"model.n_gpu_layers": -1, "model.use_extra_bufts": True, "model.vocab_only": False,
            "ctx.n_ctx": 512, "ctx.n_batch": 2048, "ctx.n_ubatch": 512, "ctx.n_seq_max": 1,
            "ctx.n_threads": GGML_DEFAULT_N_THREADS, "ctx.flash_attn_type": LLAMA_FLASH_ATTN_TYPE_AUTO,
            "ctx.offload_kqv": True, "ctx.kv_unified": False, "ctx.n_samplers": 0}
    wrong = {k: v for k, v in found.items() if v != want[k]}
    if wrong:
        raise ImportError(f"the llama.cpp library's default params do not match the declarations "
                          f"for xllamacpp {PINNED}: {wrong}")


def json_grammar(ns: SimpleNamespace, vocab: Any, schema: dict[str, Any]) -> Any:
    """A sampler that keeps the output inside the JSON schema, or None if llguidance rejects it.

    llama.cpp's llguidance sampler does not fail on a schema it cannot compile:
    it logs the error and returns a sampler that constrains nothing. So the
    sampler's own state is read: ``struct llama_sampler { iface, ctx }``, and
    in this build ``ctx`` points to 5 pointers (40 bytes), the llguidance
    state, which starts with the vocab and ends with the compiled grammar: NULL
    after an error (tests/lm/test_llamacpp_capi.py). A first pointer that is
    not our vocab means the layout is not what this reads."""
    sampler = ns.llama_sampler_init_llg(vocab, b"json", json.dumps(llg_schema(schema)).encode())
    if not sampler:
        return None
    state = ctypes.cast(ctypes.cast(sampler, POINTER(c_void_p))[1], POINTER(c_void_p))
    if state[0] != vocab:
        ns.llama_sampler_free(sampler)
        raise RuntimeError("llama.cpp's llguidance sampler is not laid out as in llama.cpp b11549")
    if not state[LLG_GRAMMAR_SLOT]:
        ns.llama_sampler_free(sampler)
        return None
    return sampler


def llg_schema(schema: Any) -> Any:
    """The schema as llguidance is given it, written to constrain as the GBNF
    of the other library does: an object with ``properties`` and no word on
    ``additionalProperties`` takes no other keys (llama.cpp's converter reads
    it so; JSON Schema itself would allow them, and a small model then goes on
    writing keys nobody asked for), and whitespace is fixed (``{"a": 1, "b":
    2}``) instead of free, where a small model pads with spaces and newlines."""
    def close(node: Any) -> Any:
        if isinstance(node, list):
            return [close(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: close(v) for k, v in node.items()}
        if isinstance(node.get("properties"), dict) and "additionalProperties" not in node:
            out["additionalProperties"] = False
        return out

    closed = close(schema)
    if isinstance(closed, dict):
        closed["x-guidance"] = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": ",
                                **closed.get("x-guidance", {})}
    return closed

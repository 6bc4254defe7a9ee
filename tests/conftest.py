"""Shared fixtures: data location, an isolated cache, the embedded model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    """Benchmark data: $THOUGHTLOOM_DATA, else ../shared/data beside the repo."""
    return Path(os.environ.get("THOUGHTLOOM_DATA", REPO.parent / "shared" / "data"))


def data_file(*parts: str) -> Path:
    path = data_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(f"benchmark data {path} is absent (set THOUGHTLOOM_DATA to ../shared/data)")
    return path


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """No test touches the user's ~/.cache/thoughtloom."""
    monkeypatch.setenv("THOUGHTLOOM_CACHE", str(tmp_path / "cache.sqlite"))


@pytest.fixture(scope="session")
def embedded_path() -> Path:
    from thoughtloom.core.errors import ConfigError
    from thoughtloom.lm.llamacpp import embedded_model_path

    try:
        return embedded_model_path()
    except ConfigError as exc:  # pragma: no cover - depends on install
        pytest.skip(str(exc))

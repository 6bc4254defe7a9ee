"""Shared fixtures: data location, an isolated cache, the embedded model, a loopback server, a Ray cluster.

Keep this the only conftest.py: test folders are not packages, so a second
conftest module would shadow this one's ``data_file`` import.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
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
    """No test touches the user's ~/.cache/thoughtloom or reads their ~/.config/thoughtloom."""
    monkeypatch.setenv("THOUGHTLOOM_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("THOUGHTLOOM_CONFIG", raising=False)


@pytest.fixture
def no_network(monkeypatch):
    """Any name lookup or connection fails the test: a local model must load without the hub."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args[1:] or args}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


@pytest.fixture(scope="session")
def embedded_path() -> Path:
    from thoughtloom.core.errors import ConfigError
    from thoughtloom.lm.llamacpp import embedded_model_path

    try:
        return embedded_model_path()
    except ConfigError as exc:  # pragma: no cover - depends on install
        pytest.skip(str(exc))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(embedded_path, tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server on loopback, serving the embedded GGUF
    (through thoughtloom.lm.llamacpp_server, which keeps llama.cpp's AMX repack path off)."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server] (the dev extra)")
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "thoughtloom.lm.llamacpp_server", "--model", str(embedded_path),
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
             "--model_alias", "smol"],
            stdout=fh, stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited early:\n{log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start within 120 s")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def ray_cluster():
    """A Ray cluster of this machine on loopback (2 CPUs) for the session; yields its address,
    which a CLI run in a subprocess joins with --ray-address."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip('needs Ray (pip install -e ".[ray]")')
    from thoughtloom.eval.ray_executor import start_local_cluster

    temp = tempfile.mkdtemp(prefix="tlray", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    ray = start_local_cluster(num_cpus=2, temp_dir=temp)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)

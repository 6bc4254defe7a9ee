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
    """Benchmark data: $THOUGHTLOOM_DATA, else ../shared/data beside the repo (this project's CI layout)."""
    return Path(os.environ.get("THOUGHTLOOM_DATA", REPO.parent / "shared" / "data"))


#: The folders of the data folder (docs/data.md), each with the task whose files it holds
#: (None: not a task's data set).
DATA_LAYOUT = {
    "gsm8k": "gsm8k", "multiarith": "multiarith", "decomp_letter_cat": "letter_cat",
    "decomp_list_reversal": "list_reversal", "commaqa_e": "commaqa", "hotpotqa": "hotpotqa",
    "2wikimultihopqa": "2wiki", "musique": "musique", "fever": "fever", "open_squad": "open_squad",
    "game24": "game24", "crosswords_mini5x5": "crosswords", "commongen_hard": "commongen", "hgot_demos": None,
}


def data_source(root: Path) -> str:
    """Where the tests look for benchmark data (``root``), as a user reads it."""
    if "THOUGHTLOOM_DATA" in os.environ:
        return f"THOUGHTLOOM_DATA is {root}"
    return f"THOUGHTLOOM_DATA is unset, so the tests look in {root}"


def missing_data(root: Path, parts: tuple[str, ...]) -> str:
    """Why a benchmark file is absent and how to get it: the ``thoughtloom data`` command that says
    where its set comes from and how to fetch it, then where the tests look for it."""
    rel = "/".join(parts)
    task = DATA_LAYOUT.get(parts[0]) if parts else None
    get = (f"`thoughtloom data list` shows where task {task}'s set comes from and the commands that fetch it"
           if task else
           "it is HGOT's annotated demonstrations (data/seed_augmented.csv of github.com/fangyihao/hgot)"
           if parts and parts[0] == "hgot_demos" else "`thoughtloom data list` says where each set comes from")
    return (f"needs benchmark file {rel}: {get}; save it as DATA/{rel} and set THOUGHTLOOM_DATA=DATA "
            f"({data_source(root)}; docs/data.md lists every file the tests read)")


def missing_data_folder() -> str:
    """The skip reason of a test that reads every data set it finds and finds none."""
    return ("needs the benchmark data sets: `thoughtloom data list` shows where each comes from and the "
            "commands that fetch it; save them as docs/data.md lays out (one subfolder per set) and set "
            f"THOUGHTLOOM_DATA to that folder ({data_source(data_dir())})")


def data_file(*parts: str) -> Path:
    path = data_dir().joinpath(*parts)
    if not path.exists():
        pytest.skip(missing_data(data_dir(), parts))
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

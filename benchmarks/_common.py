"""Helpers shared by the benchmark scripts (not part of the library)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("THOUGHTLOOM_DATA", REPO.parent / "shared" / "data"))


def thoughtloom(*args: str) -> tuple[dict, float]:
    """Run the CLI; return (summary.json of --out, wall seconds)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "thoughtloom", *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    out = Path(args[args.index("--out") + 1])
    return json.loads((out / "summary.json").read_text()), wall


@contextmanager
def llama_server(model_path: str, n_ctx: int = 4096):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "thoughtloom.lm.llamacpp_server", "--model", model_path, "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", "bench"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(20)

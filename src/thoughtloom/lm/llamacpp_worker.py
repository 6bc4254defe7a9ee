"""The model worker: the embedded engine in a child process of its own.

A native crash in llama.cpp (a segfault, an abort on a failed assertion)
kills the process it runs in. Run in-process, it would take the user's eval
and everything not yet written with it; run here, it costs the batch that was
in flight: the parent sees the worker's end of the socket close, raises
:class:`~thoughtloom.core.errors.ModelCrashed` for those requests, and the
next call starts a fresh worker.

The child is started as ``python -m thoughtloom.lm.llamacpp_worker FD``, not
with ``multiprocessing``, so a user's script is never re-imported (no
``if __name__ == "__main__"`` guard needed). Messages are pickled dicts over a
socket pair (``multiprocessing.connection.Connection``). The child's stdout
and stderr (llama.cpp's own log lines, an assertion message) go to a pipe the
parent reads; the last lines go into the crash message and every line to
``logging`` at DEBUG level.

The worker inherits the caller's environment as it is, ``OMP_WAIT_POLICY``
included. We measured PASSIVE (threads sleep between parallel regions) as a
default and dropped it: 24 tokens/s against 86 unset on a quiet 2-core
machine; the load problem it was meant for is solved by sizing the thread
pool to the free cores instead (see :mod:`.cpu`).
"""

from __future__ import annotations

import collections
import importlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any

from ..core.errors import ConfigError, LMError, ModelCrashed

log = logging.getLogger(__name__)

ENGINE = "thoughtloom.lm.llamacpp_engine:Engine"
#: Consecutive crashes after which a crash is a fatal LMError, not a per-example one.
MAX_CRASHES_IN_A_ROW = 3


def load_engine(spec: str, options: dict[str, Any]) -> Any:
    """Import ``module:Class`` and build it with ``options``."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)(**options)


def _signal_name(returncode: int | None) -> str:
    if returncode is None:
        return "an unknown cause"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


class ModelWorker:
    """Parent-side handle of one worker process (blocking; one call at a time)."""

    def __init__(self, label: str, options: dict[str, Any], *, engine: str = ENGINE) -> None:
        self.label = label
        self.options = options
        self.engine = engine
        self.proc: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self.info: dict[str, Any] = {}
        self.crashes_in_a_row = 0
        self.tail: collections.deque[str] = collections.deque(maxlen=20)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        out_r, out_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", __name__, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w,
                close_fds=True)
        finally:
            theirs.close()
            os.close(out_w)
        self.tail.clear()
        threading.Thread(target=self._read_output, args=(out_r,), daemon=True,
                         name=f"llamacpp-worker-{self.proc.pid}-output").start()
        self.conn = Connection(ours.detach())
        reply = self._exchange({"engine": self.engine, "options": self.options})
        if "error" in reply:
            self.stop()
            raise ConfigError(f"cannot load model {self.label}: {reply['error']}",
                              hint="is it a valid GGUF file?")
        self.info = reply["ok"]
        log.info("model worker %s started for %s: %s", self.proc.pid, self.label,
                 {k: v for k, v in self.info.items() if k != "system_info"})

    def _read_output(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as stream:
            for raw in stream:
                line = raw.decode("utf-8", errors="replace").rstrip()
                if line:
                    self.tail.append(line)
                    log.debug("worker: %s", line)

    def _exchange(self, message: Any) -> Any:
        assert self.conn is not None
        try:
            self.conn.send(message)
            return self.conn.recv()
        except (EOFError, OSError) as exc:
            raise self._crashed() from exc

    def _crashed(self) -> LMError:
        rc = None
        if self.proc is not None:
            try:
                rc = self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
        self._forget()
        self.crashes_in_a_row += 1
        cause = _signal_name(rc)
        last = " | ".join(list(self.tail)[-3:])
        message = f"the model worker for {self.label} died ({cause}) during a call"
        if last:
            message += f"; its last output: {last}"
        hint = ("a native crash in llama.cpp or the worker was killed (out of memory?); "
                "a fresh worker serves the next call")
        if cause == "SIGSEGV" and self.info.get("repack"):
            hint += "; on CPUs where llama.cpp's weight repacking crashes, try repack=False"
        if self.crashes_in_a_row >= MAX_CRASHES_IN_A_ROW:
            return LMError(f"{message} ({self.crashes_in_a_row} crashes in a row; giving up)", hint=hint)
        return ModelCrashed(message, hint=hint)

    def call(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Results for ``requests`` (see ``Engine.generate``); raises ModelCrashed."""
        return self._run("generate", requests)

    def count(self, requests: list[dict[str, Any]]) -> list[int | None]:
        """Prompt tokens of ``requests`` (see ``Engine.count_tokens``); raises ModelCrashed."""
        return self._run("count", requests)

    def _run(self, op: str, requests: list[dict[str, Any]]) -> Any:
        if self.proc is None or self.proc.poll() is not None:
            self._forget()
            self._start()
        out = self._exchange((op, requests))
        self.crashes_in_a_row = 0
        return out

    def _forget(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = None
        self.proc = None

    def stop(self) -> None:
        if self.conn is not None and self.proc is not None and self.proc.poll() is None:
            try:
                self.conn.send(("close", None))
            except OSError:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._forget()


class InProcessWorker:
    """The same interface with the engine in this process (no crash isolation)."""

    def __init__(self, label: str, options: dict[str, Any], *, engine: str = ENGINE) -> None:
        self.label, self.options, self.engine_spec = label, options, engine
        self.engine: Any = None
        self.info: dict[str, Any] = {}
        self.pid = os.getpid()

    def call(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self._loaded().generate(requests)

    def count(self, requests: list[dict[str, Any]]) -> list[int | None]:
        return self._loaded().count_tokens(requests)

    def _loaded(self) -> Any:
        if self.engine is None:
            try:
                self.engine = load_engine(self.engine_spec, self.options)
            except Exception as exc:  # llama.cpp reports a bad file as a plain exception
                raise ConfigError(f"cannot load model {self.label}: {exc}",
                                  hint="is it a valid GGUF file?") from exc
            self.info = self.engine.describe()
        return self.engine

    def stop(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker when its parent dies, so a killed
    eval leaves no orphan decoding on. (Strictly, when the parent *thread*
    that started it ends: LlamaCppLM starts workers from its one executor
    thread, which lives until ``aclose``.)"""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def main(argv: list[str]) -> int:
    _die_with_parent()
    conn = Connection(int(argv[1]))
    init = conn.recv()
    try:
        engine = load_engine(init["engine"], init["options"])
    except Exception as exc:  # reported to the parent, which raises ConfigError
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    conn.send({"ok": engine.describe()})
    while True:
        try:
            op, payload = conn.recv()
        except EOFError:  # the parent went away
            break
        if op == "close":
            break
        try:
            out: Any = engine.count_tokens(payload) if op == "count" else engine.generate(payload)
        except Exception as exc:  # the batch fails (a count is unknown), the worker stays up
            failed = None if op == "count" else {"error": "error", "message": f"{type(exc).__name__}: {exc}"}
            out = [failed] * len(payload)
        try:
            conn.send(out)
        except OSError:  # the parent went away mid-batch
            break
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

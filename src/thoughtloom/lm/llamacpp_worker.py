"""The model worker: the embedded engine in a child process of its own.

A native crash in llama.cpp (a segfault, an abort on a failed assertion)
kills the process it runs in. Run in-process, it would take the user's eval
and everything not yet written with it; run here, it costs the requests in
flight: the parent sees the worker's end of the socket close, raises
:class:`~thoughtloom.core.errors.ModelCrashed` for those requests, and the
next call starts a fresh worker.

The child is started as ``python -m thoughtloom.lm.llamacpp_worker FD``, not
with ``multiprocessing``, so a user's script is never re-imported (no
``if __name__ == "__main__"`` guard needed). Messages are pickled tuples over
a socket pair (``multiprocessing.connection.Connection``): the parent sends
``("submit", [(key, request), ...])`` whenever requests arrive (and
``cancel``, ``count``, ``stats``, ``close``); the worker reads whatever has
arrived between two engine steps, so a request joins the running batch at the
next step (continuous batching, :mod:`.llamacpp_engine`), and sends
``("done", [(key, result), ...])`` as requests end. The parent waits on the
socket and on a wake-up pipe at once (:meth:`ModelWorker.wake`), so newly
queued requests are handed over while others decode. The child's stdout
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
from multiprocessing.connection import Connection, wait
from typing import Any

from ..core.errors import ConfigError, LMError, ModelCrashed
from .llamacpp_serve import serve, step_safely, stepping

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
    """Parent-side handle of one worker process. Its methods run on one thread
    (the backend's executor), but :meth:`wake`, which any thread may call."""

    def __init__(self, label: str, options: dict[str, Any], *, engine: str = ENGINE) -> None:
        self.label = label
        self.options = options
        self.engine = engine
        self.proc: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self.info: dict[str, Any] = {}
        self.crashes_in_a_row = 0
        self.tail: collections.deque[str] = collections.deque(maxlen=20)
        self.outstanding: set[int] = set()  # keys handed over, no result yet
        self.stash: list[tuple[int, dict[str, Any]]] = []  # results read while answering a question
        self.lost: LMError | None = None  # a crash the requests in flight have not heard of
        self._wake: tuple[int, int] | None = None  # a pipe: a byte in it ends exchange's wait
        self._wake_fds()  # made here, before two threads can reach it

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
        self.outstanding.clear()
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

    # -- requests in flight -------------------------------------------------
    def exchange(self, submit: list[tuple[int, dict[str, Any]]],
                 cancel: list[int] | tuple[int, ...] = ()) -> list[tuple[int, dict[str, Any]]]:
        """Hand ``(key, request)`` pairs and cancellations to the engine, which admits
        them into its running batch, then wait until results come back or
        :meth:`wake` is called. Returns the ``(key, result)`` pairs that came back
        (maybe none; see ``Engine.generate`` for a result). Raises ModelCrashed,
        meaning every request in flight is lost."""
        self._ensure_running()
        assert self.conn is not None
        try:
            if cancel:
                self.conn.send(("cancel", list(cancel)))
                self.outstanding.difference_update(cancel)
            if submit:
                self.conn.send(("submit", submit))
                self.outstanding.update(key for key, _ in submit)
            if not self.stash and self.outstanding:
                ready = wait([self.conn, self._wake_fds()[0]])
                self._drain_wake()
                if self.conn in ready:
                    self._receive()
        except (EOFError, OSError) as exc:
            raise self._crashed() from exc
        out, self.stash = self.stash, []
        return out

    def wake(self) -> None:
        """Make a waiting :meth:`exchange` return now (from any thread): new
        requests are queued to be handed over."""
        try:
            os.write(self._wake_fds()[1], b"\0")
        except OSError:  # the pipe is full: a wake-up is pending anyway
            pass

    def count(self, requests: list[dict[str, Any]]) -> list[int | None]:
        """Prompt tokens of ``requests`` (see ``Engine.count_tokens``); raises ModelCrashed."""
        return self._ask("count", requests)

    def stats(self) -> dict[str, int]:
        """The engine's counters (see ``Engine.stats``); raises ModelCrashed."""
        return self._ask("stats", None)

    def _ask(self, op: str, payload: Any) -> Any:
        """A question answered between two engine steps; results that arrive first
        are kept for the next :meth:`exchange`."""
        self._ensure_running()
        assert self.conn is not None
        in_flight = bool(self.outstanding)
        try:
            self.conn.send((op, payload))
            while True:
                got, value = self._receive()
                if got == op:
                    return value
        except (EOFError, OSError) as exc:
            error = self._crashed()
            if in_flight:  # the requests in flight hear it at their next exchange
                self.lost = error
            raise error from exc

    def _receive(self) -> tuple[str, Any]:
        assert self.conn is not None
        op, payload = self.conn.recv()
        self.crashes_in_a_row = 0
        if op == "done":
            self.stash.extend(payload)
            self.outstanding.difference_update(key for key, _ in payload)
        return op, payload

    def _ensure_running(self) -> None:
        if self.lost is not None:
            error, self.lost = self.lost, None
            raise error
        # a worker that died with nothing in flight (killed while idle) is replaced quietly
        if self.proc is None or (self.proc.poll() is not None and not self.outstanding):
            self._forget()
            self._start()

    def _wake_fds(self) -> tuple[int, int]:
        if self._wake is None:
            r, w = os.pipe()
            os.set_blocking(r, False)
            os.set_blocking(w, False)
            self._wake = (r, w)
        return self._wake

    def _drain_wake(self) -> None:
        try:
            while os.read(self._wake_fds()[0], 4096):
                pass
        except BlockingIOError:
            pass

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
        self.outstanding.clear()
        if self._wake is not None:
            for fd in self._wake:
                os.close(fd)
            self._wake = None


class InProcessWorker:
    """The same interface with the engine in this process (no crash isolation)."""

    def __init__(self, label: str, options: dict[str, Any], *, engine: str = ENGINE) -> None:
        self.label, self.options, self.engine_spec = label, options, engine
        self.engine: Any = None
        self.info: dict[str, Any] = {}
        self.pid = os.getpid()
        self._woken = threading.Event()

    def exchange(self, submit: list[tuple[int, dict[str, Any]]],
                 cancel: list[int] | tuple[int, ...] = ()) -> list[tuple[int, dict[str, Any]]]:
        engine = self._loaded()
        engine.cancel(list(cancel))
        engine.submit(submit)
        while engine.busy:
            done = step_safely(engine)
            if done:
                return done
            if self._woken.is_set():
                self._woken.clear()
                return []
        return []

    def wake(self) -> None:
        self._woken.set()

    def count(self, requests: list[dict[str, Any]]) -> list[int | None]:
        return self._loaded().count_tokens(requests)

    def stats(self) -> dict[str, int]:
        return self._loaded().stats()

    def _loaded(self) -> Any:
        if self.engine is None:
            try:
                self.engine = stepping(load_engine(self.engine_spec, self.options))
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
        engine = stepping(load_engine(init["engine"], init["options"]))
    except Exception as exc:  # reported to the parent, which raises ConfigError
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    conn.send({"ok": engine.describe()})
    serve(conn, engine)
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""The model worker's side of the socket: the engine stepped between messages.

:func:`serve` runs in the worker process (:mod:`.llamacpp_worker`): between two
engine steps it reads every message that has arrived, so a request submitted
while others decode joins the running batch at the next step. An engine that
only decodes whole lists (``generate``, the test stand-in
``thoughtloom.testing.engine.EchoEngine``) runs behind :class:`OneShot`.
"""

from __future__ import annotations

from multiprocessing.connection import Connection
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class SteppingEngine(Protocol):
    """What the worker drives: requests in at any time, one step at a time."""

    busy: bool

    def submit(self, items: list[tuple[Any, dict[str, Any]]]) -> None: ...
    def cancel(self, keys: list[Any]) -> None: ...
    def step(self) -> list[tuple[Any, dict[str, Any]]]: ...
    def fail_all(self, message: str) -> list[tuple[Any, dict[str, Any]]]: ...
    def stats(self) -> dict[str, int]: ...
    def count_tokens(self, requests: list[dict[str, Any]]) -> list[int | None]: ...
    def describe(self) -> dict[str, Any]: ...
    def close(self) -> None: ...


class OneShot:
    """An engine that only decodes whole lists (``generate``; the test stand-in)
    behind the stepping interface: each step decodes everything waiting as one batch."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.waiting: list[tuple[Any, dict[str, Any]]] = []
        self.running: list[tuple[Any, dict[str, Any]]] = []

    @property
    def busy(self) -> bool:
        return bool(self.waiting)

    def submit(self, items: list[tuple[Any, dict[str, Any]]]) -> None:
        self.waiting.extend(items)

    def cancel(self, keys: list[Any]) -> None:
        self.waiting = [(k, r) for k, r in self.waiting if k not in set(keys)]

    def step(self) -> list[tuple[Any, dict[str, Any]]]:
        self.running, self.waiting = self.waiting, []
        outs = self.engine.generate([r for _, r in self.running])
        done, self.running = [(k, out) for (k, _), out in zip(self.running, outs)], []
        return done

    def fail_all(self, message: str) -> list[tuple[Any, dict[str, Any]]]:
        failed = [(k, {"error": "error", "message": message}) for k, _ in self.running + self.waiting]
        self.running, self.waiting = [], []
        return failed

    def stats(self) -> dict[str, int]:
        return {}

    def count_tokens(self, requests: list[dict[str, Any]]) -> list[int | None]:
        return self.engine.count_tokens(requests)

    def describe(self) -> dict[str, Any]:
        return self.engine.describe()

    def close(self) -> None:
        self.engine.close()


def stepping(engine: Any) -> SteppingEngine:
    return engine if isinstance(engine, SteppingEngine) else OneShot(engine)


def step_safely(engine: SteppingEngine) -> list[tuple[Any, dict[str, Any]]]:
    """One engine step; an exception fails what the engine holds (the worker stays up)."""
    try:
        return engine.step()
    except Exception as exc:  # not a crash: the requests in the engine fail, later ones run
        return engine.fail_all(f"{type(exc).__name__}: {exc}")


def serve(conn: Connection, engine: SteppingEngine) -> None:
    """Answer the parent until it closes: between two engine steps, read every
    message that has arrived (new requests join the running batch at the next
    step); block only while the engine has nothing to do."""
    while True:
        messages = []
        try:
            if engine.busy:
                while conn.poll():
                    messages.append(conn.recv())
            else:
                messages.append(conn.recv())
        except EOFError:  # the parent went away
            return
        try:
            for op, payload in messages:
                if op == "close":
                    return
                if op == "submit":
                    engine.submit(payload)
                elif op == "cancel":
                    engine.cancel(payload)
                elif op == "count":
                    try:
                        counts = engine.count_tokens(payload)
                    except Exception:  # a count is unknown; the worker stays up
                        counts = [None] * len(payload)
                    conn.send(("count", counts))
                elif op == "stats":
                    conn.send(("stats", engine.stats()))
            if engine.busy:
                done = step_safely(engine)
                if done:
                    conn.send(("done", done))
        except OSError:  # the parent went away mid-step
            return

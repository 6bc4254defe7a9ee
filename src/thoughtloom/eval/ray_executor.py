"""``--executor ray``: an eval's examples on the actors of a Ray cluster.

Each actor (:class:`ExampleWorker`) is sent the run's
:class:`~.assembly.RunSpec` and opens its own services once from it, as a
local run does (:meth:`~.assembly.RunSpec.open`): its LM stack (the
embedded model loads once per actor; an OpenAI-compatible client), its
retriever and its judge; the spec carries the API key the driver was
given. Examples are sent to the actors as Ray tasks, ``--concurrency`` in
flight per actor, to the least busy one; an actor runs them on one event
loop, so their model calls share its LM stack as they do in a local run. Each record (an
:class:`~.record.EvalRecord`, pickled with its trace events) comes back to the
driver, which alone appends it (:func:`.runner.evaluate`): a driver stopped
at any point is resumed by rerunning the command, with no lost and no
duplicated record.

An actor that dies (its process killed, its node lost) is replaced by a
fresh one; the examples it had in flight are sent again once, and an
example whose second worker dies too is recorded as an error. A fatal error
on an actor (the service unreachable, a replay cache miss) stops the run as
it does locally.

Cluster: ``address=None`` joins the cluster this process is connected to,
or else starts a cluster of this one machine here (:func:`start_local_cluster`,
bound to loopback); ``"auto"`` joins the one ``ray start`` made on this
machine; ``"HOST:PORT"`` a cluster's head, ``"ray://HOST:PORT"`` through
Ray Client. Every node needs thoughtloom installed.

Completion cache: each actor opens the ``--cache`` path on its own node. On
one machine that is one SQLite file, shared safely (WAL); across nodes each
node writes its own, and ``thoughtloom cache merge`` joins them into one
file to replay the run from later.

Ray is an optional extra, imported only here and only when a run asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..core.errors import ConfigError, LMError
from ..core.progress import ProgressHook
from ..core.protocols import LM
from ..tasks.base import CorpusFile, Example
from .assembly import RunSpec
from .breaker import CircuitBreaker, ServerFailed
from .executors import TICK_S, Job, OnRecord, with_pooled
from .results import RecordAndTrace

from .settings import EvalResources

log = logging.getLogger(__name__)

#: Times an example is sent to a worker before a dead worker is its error.
ATTEMPTS = 2
#: Object store of a cluster started here: records and examples are small.
LOCAL_OBJECT_STORE_BYTES = 200 * 1024 * 1024
#: Seconds an actor is given to close its model before it is killed.
CLOSE_TIMEOUT_S = 30.0


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs Ray, which is not installed",
                          hint='pip install "thoughtloom[ray]"') from None
    return ray


def start_local_cluster(num_cpus: int | None = None, temp_dir: str | None = None) -> Any:
    """Start a Ray cluster of this machine in this process, reachable on loopback only; returns ``ray``.

    Ray binds a cluster it starts to the machine's network address unless
    told otherwise, and reads that switch when it is first imported.
    """
    if "ray" not in sys.modules:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = import_ray()
    ray.init(num_cpus=num_cpus, include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES,
             _temp_dir=temp_dir, log_to_driver=False, logging_level=logging.WARNING)
    return ray


class ExampleWorker:
    """One Ray actor: opens its services once from the run's spec, then runs the examples it is sent.

    ``lm``: makes the model on the worker in place of ``spec.model`` (a
    scripted model in tests, a stack of the caller's own); the worker closes it.
    """

    def __init__(self, spec: RunSpec, job: Job, pooled: CorpusFile | None,
                 lm: Callable[[], LM] | None = None) -> None:
        self.spec = spec
        self._lm = lm
        self._pooled = pooled
        self.job = job
        self.res: EvalResources | None = None
        self._open = contextlib.AsyncExitStack()

    async def open(self) -> dict[str, Any]:
        if self.res is None:
            lm = self._lm() if self._lm is not None else None
            if lm is not None:
                self._open.push_async_callback(lm.aclose)
            res = await self._open.enter_async_context(self.spec.open(lm))
            self.res, self.facts = with_pooled(res, self._pooled)
        return {"model": self.res.lm.model_id, **self.facts}

    async def describe(self, describe: Callable[[EvalResources], dict[str, Any]]) -> dict[str, Any]:
        await self.open()
        assert self.res is not None
        return describe(self.res)

    async def run(self, example: Example) -> RecordAndTrace:
        if self.res is None:  # a replacement actor: its open() was sent first, but be sure
            await self.open()
        assert self.res is not None
        return await self.job.run(example, self.res)

    async def close(self) -> None:
        self.res = None
        await self._open.aclose()


@dataclass
class _Slot:
    """One place for an actor; a dead actor's slot gets a new one."""

    actor: Any
    busy: int = 0


@dataclass
class _Sent:
    slot: _Slot
    actor: Any  # the actor it went to (the slot may have a newer one by the time it fails)
    example: Example
    attempt: int
    ref: Any


@dataclass
class RayExecutor:
    """Examples on ``workers`` Ray actors, each opening its services from ``spec``
    (:meth:`.assembly.RunSpec.open`); ``lm`` as :class:`ExampleWorker` takes it (picklable).

    ``env``: environment variables for the actors (e.g. a LiteLLM provider's
    key the nodes do not have), set through Ray's runtime environment.
    """

    spec: RunSpec
    workers: int = 2
    address: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    lm: Callable[[], LM] | None = None
    _ray: Any = field(default=None, init=False, repr=False)
    _connected_here: bool = field(default=False, init=False, repr=False)
    _spawn: Callable[[], Any] | None = field(default=None, init=False, repr=False)
    _slots: list[_Slot] = field(default_factory=list, init=False, repr=False)
    _per_actor: int = field(default=1, init=False, repr=False)
    _job: Job | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {self.workers}")

    def _connect(self) -> Any:
        ray, connected = connect(self.address)
        self._connected_here = self._connected_here or connected
        return ray

    async def start(self, job: Job, pooled: CorpusFile | None) -> dict[str, Any]:
        ray = self._ray = self._connect()
        options: dict[str, Any] = {"scheduling_strategy": "SPREAD", "max_restarts": 0}
        if self.env:
            options["runtime_env"] = {"env_vars": dict(self.env)}
        actor_class = ray.remote(ExampleWorker).options(**options)
        self._spawn = lambda: actor_class.remote(self.spec, job, pooled, self.lm)
        self._job, self._per_actor = job, max(1, job.settings.concurrency)
        self._slots = [_Slot(self._spawn()) for _ in range(self.workers)]
        try:
            facts = await asyncio.gather(*(self._await(slot.actor.open.remote()) for slot in self._slots))
        except ray.exceptions.RayActorError as exc:  # say, thoughtloom missing on a node
            raise ConfigError(f"a Ray worker could not start: {_last_line(exc)}",
                              hint="install thoughtloom, same version, on every node of the cluster") from None
        return {"executor": "ray", "workers": self.workers, **facts[0]}

    async def describe(self, describe: Callable[[EvalResources], dict[str, Any]]) -> dict[str, Any]:
        """``describe`` on the first worker's services (every worker opens the same ones)."""
        return await self._await(self._slots[0].actor.describe.remote(describe))

    async def _await(self, ref: Any) -> Any:
        """A task's result; an error the task raised comes out as itself."""
        try:
            return await asyncio.wrap_future(ref.future())
        except self._ray.exceptions.RayTaskError as exc:
            cause = exc.cause
            raise cause if isinstance(cause, Exception) else LMError(f"a Ray worker failed: {exc}") from None

    def _send(self, example: Example, attempt: int) -> _Sent:
        slot = min(self._slots, key=lambda s: s.busy)
        slot.busy += 1
        return _Sent(slot, slot.actor, example, attempt, slot.actor.run.remote(example))

    def _replace(self, sent: _Sent) -> None:
        """A fresh actor in the slot of the dead one (once, however many of its tasks report it)."""
        if sent.slot.actor is not sent.actor:
            return
        log.warning("a Ray worker died; starting another in its place")
        self._ray.kill(sent.actor, no_restart=True)
        assert self._spawn is not None
        sent.slot.actor = self._spawn()
        sent.slot.actor.open.remote()  # runs before the examples sent to it next

    async def run(self, examples: Sequence[Example], on_record: OnRecord, progress: ProgressHook | None = None,
                  breaker: CircuitBreaker | None = None) -> None:
        """As :meth:`.executors.Executor.run`; ``progress`` is not called (workers send records only)."""
        assert self._job is not None, "start() first"
        breaker = breaker or CircuitBreaker()
        waiting: deque[tuple[Example, int]] = deque((example, 1) for example in examples)
        running: dict[asyncio.Future, _Sent] = {}

        def record(outcome: RecordAndTrace) -> None:
            on_record(*outcome)

        try:
            while waiting or running or breaker.held:
                room = breaker.room(self._per_actor * len(self._slots), len(running))
                while waiting and room > 0 and min(s.busy for s in self._slots) < self._per_actor:
                    sent = self._send(*waiting.popleft())
                    running[asyncio.ensure_future(self._await(sent.ref))] = sent
                    room -= 1
                if not running:
                    if waiting:  # paused until the breaker's next probe
                        await asyncio.sleep(min(TICK_S, breaker.wait_s()) or 0.01)
                    else:
                        breaker.settle(record)
                    continue
                done, _ = await asyncio.wait(running, timeout=TICK_S, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    sent = running.pop(future)
                    sent.slot.busy -= 1
                    try:
                        outcome = self._outcome(future, sent, waiting)
                    except ServerFailed as failure:
                        back: deque[Example] = deque()
                        breaker.failed(sent.example, failure, back)
                        waiting.extendleft((example, sent.attempt) for example in reversed(back))
                        continue
                    if outcome is not None:
                        breaker.ok(record)
                        record(outcome)
                breaker.tick()
        finally:
            for future, sent in running.items():
                future.cancel()
                self._ray.cancel(sent.ref)

    def _outcome(self, future: asyncio.Future, sent: _Sent,
                 waiting: deque[tuple[Example, int]]) -> RecordAndTrace | None:
        """The example's record, or None when it was sent again because its worker died."""
        try:
            return future.result()
        except self._ray.exceptions.RayActorError as exc:
            self._replace(sent)
            if sent.attempt < ATTEMPTS:
                waiting.appendleft((sent.example, sent.attempt + 1))
                return None
            assert self._job is not None
            return self._job.failed(sent.example, f"WorkerDied: its Ray worker died {ATTEMPTS} times "
                                                  f"while running it ({_last_line(exc)})")

    async def aclose(self) -> None:
        if self._ray is None:
            return
        ray, slots, self._slots = self._ray, self._slots, []
        closing = [asyncio.ensure_future(self._await(slot.actor.close.remote())) for slot in slots]
        if closing:
            await asyncio.wait(closing, timeout=CLOSE_TIMEOUT_S)
        for future in closing:
            if not future.done():
                future.cancel()
            elif not future.cancelled() and future.exception() is not None:
                log.debug("a Ray worker did not close cleanly: %s", future.exception())
        for slot in slots:
            ray.kill(slot.actor, no_restart=True)
        if self._connected_here:
            ray.shutdown()
            self._connected_here = False


def connect(address: str | None) -> tuple[Any, bool]:
    """``ray``, connected to the cluster at ``address`` (see the module's docstring) unless it
    already is; and whether this call connected it (its caller then shuts it down).

    A caller that runs several executors one after another (a suite's cells)
    connects first, so that each executor finds Ray connected and leaves it so.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    if address is None:
        start_local_cluster()
    else:
        try:
            _check_reachable(address)  # Ray itself would retry an address nothing answers for minutes
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except Exception as exc:  # Ray's errors for a wrong or unreachable address vary by version
            raise ConfigError(f"cannot join the Ray cluster at {address}: {_last_line(exc)}",
                              hint="check --ray-address (auto, HOST:PORT, or ray://HOST:PORT, which "
                                   'needs pip install "ray[client]")') from None
    return ray, True


def _last_line(exc: BaseException) -> str:
    """The gist of a Ray error, whose text is a report of many lines ending in the cause."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _check_reachable(address: str, timeout_s: float = 10.0) -> None:
    """Raise ``OSError`` when nothing accepts a connection at a ``HOST:PORT`` address."""
    host, sep, port = address.rpartition(":")
    if address == "auto" or "://" in address or not sep or not port.isdigit():
        return  # Ray resolves these itself, and fails fast
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
        pass

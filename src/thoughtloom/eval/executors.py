"""Where an eval's examples run: in this process, or on the actors of a Ray cluster.

The runner (:func:`.runner.evaluate`) owns the output folder: it picks the
examples not yet in ``results.jsonl``, hands them to an executor, and
appends each record the executor gives back. It is the only writer, so
resume keeps its guarantee (no lost, no duplicated record) whatever runs
the examples. An executor only decides where each example's
:meth:`Job.run` is awaited and on which services:

- :class:`LocalExecutor`: here, ``concurrency`` examples at a time, their
  model calls sharing one LM stack (``--executor local``, the default);
- :class:`~.ray_executor.RayExecutor`: on N Ray actors, each with its own
  LM stack, retriever and judge (``--executor ray``).

Both apply the same fallback retriever: without one, a task with a pooled
corpus is searched with BM25 over it (:func:`with_pooled`), and both hand
an example that failed on the server to the run's circuit breaker
(:mod:`.breaker`), starting no new example while it is open.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import deque
from typing import Any, Callable, Protocol, Sequence

from ..core.errors import ConfigError
from ..core.progress import ProgressHook
from ..core.protocols import Probed
from ..lm.retry import retry_stats
from ..retrieval import spell_settings
from ..tasks.base import CorpusFile, Example
from .breaker import CircuitBreaker, ServerFailed
from .record import EvalRecord
from .results import RecordAndTrace
from .services import pooled_retriever

from .settings import EvalResources

log = logging.getLogger(__name__)

#: Seconds between looks at a paused run (its progress line, its next probe).
TICK_S = 1.0

#: Called in the runner's process with each finished example's record and trace events.
OnRecord = Callable[[EvalRecord, list[dict[str, Any]]], None]


class Job(Protocol):
    """What every example of one eval runs through (:class:`.runner.ExampleJob`); picklable."""

    settings: Any  # EvalSettings: ``concurrency`` examples at a time per process

    async def run(self, example: Example, res: EvalResources,
                  progress: ProgressHook | None = None) -> RecordAndTrace: ...

    def failed(self, example: Example, error: str) -> RecordAndTrace: ...


class Executor(Protocol):
    async def start(self, job: Job, pooled: CorpusFile | None) -> dict[str, Any]:
        """Open the services and get ready to run ``job`` (no model call); returns facts for
        the summary (e.g. which model)."""

    async def describe(self, describe: Callable[[EvalResources], dict[str, Any]]) -> dict[str, Any]:
        """``describe`` (picklable) applied to the services the examples run on: the run's identity."""

    async def run(self, examples: Sequence[Example], on_record: OnRecord,
                  progress: ProgressHook | None = None, breaker: CircuitBreaker | None = None) -> None:
        """Run every example, calling ``on_record`` in this process as each finishes.

        ``progress`` hears of the running examples' model calls where the
        executor can tell it (the local one can; Ray's workers send records
        only). ``breaker`` judges the examples that fail on the server
        (:mod:`.breaker`; the local executor also pauses new examples while
        it is open). Raises a fatal (service or set-up) error; any other
        failure is an example's error record.
        """

    async def aclose(self) -> None: ...


def with_pooled(res: EvalResources, pooled: CorpusFile | None) -> tuple[EvalResources, dict[str, Any]]:
    """``res`` with BM25 over ``pooled`` as its retriever when it has none (one index per corpus on ``res``:
    :attr:`EvalResources.pooled_indexes`), and the fact to record."""
    if res.retriever is not None or pooled is None:
        return res, {}
    settings = pooled.index_settings  # the task's default (title links) or a suite dataset's, every method alike
    log.info("no retriever given: retrieving from the paragraphs of %s (BM25%s)", pooled.describe(),
             f", {spell_settings(settings)}" if settings else "")
    retriever = res.pooled_indexes.get(pooled)
    if retriever is None:  # built once per corpus (and settings) on these services, then shared by every eval on them
        retriever = res.pooled_indexes[pooled] = pooled_retriever(pooled, settings or None)
    return dataclasses.replace(res, retriever=retriever), {"pooled_corpus": pooled.describe(),
                                                           **({"index_settings": settings} if settings else {})}


def server_probe(lm: Any) -> Probed | None:
    """The backend at the bottom of ``lm``'s wrapper stack, when it can probe its server."""
    for _ in range(32):
        if isinstance(lm, Probed):
            return lm
        lm = getattr(lm, "inner", None)
        if lm is None:
            return None
    return None


def first_error(group: BaseExceptionGroup) -> BaseException:
    """The first real error inside (nested) exception groups."""
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


class LocalExecutor:
    """Examples as asyncio tasks in this process, ``--concurrency`` at a time, on ``res``.

    ``res`` stays the caller's: :meth:`aclose` does not close its model.
    """

    def __init__(self, res: EvalResources | None) -> None:
        if res is None:
            raise ConfigError("a local run needs its services (EvalResources)", hint="pass res to evaluate")
        self.res = res
        self.job: Job | None = None

    async def start(self, job: Job, pooled: CorpusFile | None) -> dict[str, Any]:
        self.job = job
        self.res, facts = with_pooled(self.res, pooled)
        return facts

    async def describe(self, describe: Callable[[EvalResources], dict[str, Any]]) -> dict[str, Any]:
        return describe(self.res)

    async def run(self, examples: Sequence[Example], on_record: OnRecord, progress: ProgressHook | None = None,
                  breaker: CircuitBreaker | None = None) -> None:
        job = self.job
        assert job is not None, "start() first"
        breaker = breaker or CircuitBreaker()
        if breaker.retries is None:
            breaker.retries = retry_stats(self.res.lm)
        if breaker.probe is None:
            breaker.probe = server_probe(self.res.lm)
        concurrency = max(1, job.settings.concurrency)
        todo: deque[Example] = deque(examples)
        flying: dict[asyncio.Task[RecordAndTrace | ServerFailed], Example] = {}

        def record(outcome: RecordAndTrace) -> None:
            on_record(*outcome)

        async def attempt(example: Example) -> RecordAndTrace | ServerFailed:
            try:
                return await job.run(example, self.res, progress)
            except ServerFailed as failure:  # for the breaker to judge; any other error ends the group
                return failure

        try:
            async with asyncio.TaskGroup() as group:
                while todo or flying or breaker.held:
                    for _ in range(min(len(todo), breaker.room(concurrency, len(flying))) if todo else 0):
                        example = todo.popleft()
                        flying[group.create_task(attempt(example))] = example
                    if not flying:
                        if todo:  # paused: nothing running until the next probe
                            await asyncio.sleep(min(TICK_S, breaker.wait_s()) or 0.01)
                            await breaker.watch(0)
                            breaker.tick()
                        else:  # the last examples failed with nothing after them to judge by
                            breaker.settle(record)
                        continue
                    done, _ = await asyncio.wait(flying, timeout=TICK_S, return_when=asyncio.FIRST_COMPLETED)
                    for task in done:
                        example, outcome = flying.pop(task), task.result()
                        if isinstance(outcome, ServerFailed):
                            breaker.failed(example, outcome, todo)
                            continue
                        breaker.ok(record)
                        record(outcome)
                    await breaker.watch(len(flying))
                    breaker.tick()
        except BaseExceptionGroup as eg:  # surface the first real error, not the group wrapper
            raise first_error(eg) from None
        finally:
            breaker.stop_watching()

    async def aclose(self) -> None:
        return None

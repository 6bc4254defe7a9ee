"""The eval runner: many questions, concurrently, resumably.

For each example not yet in ``OUT/results.jsonl`` the runner builds a fresh
per-question context (``Metered`` LM with the budget, a trace), runs the
strategy, scores the answer and appends one record. ``C`` examples run at a
time; their model calls share the one LM stack, so the backend sees them
together.

Errors: everything that touches one example's model text -- the strategy,
the task's scoring, building and serializing the record -- runs inside the
per-example boundary. A failure there (a strategy or parser bug, a hostile
reply, a malformed server reply or a timed-out call after retries, the
example's deadline) is recorded in that example's ``error`` field and the
run goes on. A call whose retries were spent on the server itself
(unreachable, cut off, 429 or 5xx) raises :class:`~.breaker.ServerFailed`
with the example's error record made, and the circuit breaker judges it
(:mod:`.breaker`): fatal before the server has answered once in this run,
else that example's error while other examples succeed, and a pause with
probes while none do, up to a bounded wait. Any other failure of the model
service (bad credentials, a replay cache miss, a configuration error) stops
the run: everything finished so far is already on disk, and rerunning the
same command resumes.

Bounds: each example gets at most ``DEFAULT_MAX_CALLS`` model calls unless
the budget says otherwise, and optionally a total deadline
(``EvalSettings.example_timeout_s``; it interrupts the strategy at its next
``await``, so it bounds waiting on the model, not a CPU-bound loop). A
spent budget is not an error: the strategy answers with its best so far
and the record says ``stopped: "budget"`` (counted as ``n_budget_stopped``
in the summary). What went wrong inside an example (replies cut off,
unparsed or salvaged; refused calls) is counted from its trace into the
record's ``step_problems`` (:func:`~thoughtloom.core.events.count_step_problems`).
Each record is an :class:`~.record.EvalRecord`, made here and nowhere else
(:func:`run_example`; :meth:`ExampleJob.failed` for an example whose
worker died).

The output folder is locked for the whole run (:mod:`.lock`), its
``run.json`` says what its results were made with and refuses a resume
with another config (:mod:`.identity`), and ``summary.json`` is written at
start and kept current (:mod:`.summary`).

Progress: a ``progress`` object (:mod:`.progress`) hears of every model
call and phase change of the questions in flight, and of each record as
it is written. The examples run here or on a Ray cluster (:mod:`.executors`);
their records always come back here, the only writer.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..core.errors import (CacheMiss, CallTimeout, ConfigError, ExampleTimeout, LMError, MalformedReply,
                           ModelCrashed)
from ..core.events import count_step_problems
from ..core.options import Options, check_options
from ..core.progress import ProgressHook, ProgressUpdate, QuestionProgress
from ..core.protocols import LM, Bindable, Entailment, Retriever
from ..core.trace import Trace
from ..core.types import Problem, to_json
from ..lm.meter import Metered, UsageTotals
from ..strategies.anytime import EXACT, Anytime, Point
from ..strategies.context import Context
from ..strategies.interface import DEFAULT_MAX_CALLS, Strategy
from ..strategies.result import Result
from ..tasks.base import Example, Task
from ..tasks.datasets import Dataset
from .annotate import with_demos
from .breaker import CircuitBreaker, ServerFailed, is_server_failure
from .data_change import example_sha256
from .executors import Executor, LocalExecutor
from .identity import DataSource, open_identity, run_identity, write_identity
from .judge import judge_answer
from .lock import OutputLock
from .progress import LiveProgress, Progress, RunStats, ServerProgress
from .record import EvalRecord, finite_number
from .results import RecordAndTrace, ResultsFile, describe_error, disk_errors, writable
from .settings import EvalResources, EvalSettings
from .summary import SummaryWriter, summarize, task_summary

log = logging.getLogger(__name__)

#: Errors that say the model service or set-up is broken, not the example.
FATAL_ERRORS = (LMError, CacheMiss, ConfigError)
#: ... except a crashed model worker (the backend restarts it), a malformed
#: reply and a timed-out call (after retries): they cost the example whose
#: call it was, not the eval.
PER_EXAMPLE_LM_ERRORS = (ModelCrashed, MalformedReply, CallTimeout)

def run_notes(dataset: Dataset, settings: EvalSettings, *, offset: int = 0, limit: int | None = None,
              cache_mode: str, index: str | Path | None = None, entail: str | None = None,
              timeout_s: float | None = None) -> dict[str, Any]:
    """What an eval's summary.json says about how it was asked for (the CLI's ``eval`` and
    :func:`thoughtloom.evaluate` alike); never compared on resume (the identity is)."""
    return {"data": str(dataset.path), "data_sample": dataset.sample, "limit": limit, "offset": offset,
            "cache_mode": cache_mode, "seed": settings.seed, "max_calls": settings.budget.max_calls,
            "max_tokens": settings.budget.max_tokens, "timeout_s": timeout_s,
            "example_timeout_s": settings.example_timeout_s, "index": str(index) if index else None,
            "entail": entail}


def question_services(retriever: Retriever | None, entail: Entailment | None, lm: LM,
                      trace: Trace) -> tuple[Retriever | None, Entailment | None]:
    """Per-question views of the shared services: a judge that can (``bind``)
    asks through the question's metered LM and trace. The retriever is shared
    as it is: ``Context.search`` traces every search."""
    if isinstance(entail, Bindable):  # a judge that asks a model: on this question's budget and trace
        entail = entail.bind(lm, trace)
    return retriever, entail


def is_fatal(exc: BaseException) -> bool:
    return isinstance(exc, FATAL_ERRORS) and not isinstance(exc, PER_EXAMPLE_LM_ERRORS)


def checked_metrics(metrics: Any, task: Task) -> dict[str, float]:
    """A task's scores: finite numbers, by exactly the names the task declares (``Task.metrics``)."""
    if not isinstance(metrics, dict):
        raise TypeError(f"task score is a {type(metrics).__name__}, not a dict of metrics")
    if set(metrics) != set(task.metrics) - set(task.judged_metrics):
        raise ValueError(f"task {task.name!r} scored metrics {sorted(map(str, metrics))}, "
                         f"but declares {[m for m in task.metrics if m not in task.judged_metrics]} (Task.metrics)")
    out = {}
    for name, value in metrics.items():
        if not finite_number(value):
            raise ValueError(f"task score {name!r} is {value!r}, not a finite number")
        out[str(name)] = float(value)
    return out


def answer_metrics(task: Task, answer: str | None, truncated: bool, gold: Any) -> dict[str, float]:
    """How an answer scores: a reply cut off at max_tokens is not an answer (scored as none)
    unless the task allows it (``Task.score_truncated``)."""
    if answer is None or (truncated and not task.score_truncated):
        return fallback_metrics(task, gold)
    return checked_metrics(task.score(answer, gold), task)


def trajectory(run: "ProblemRun", strategy: Strategy, task: Task, example: Example) -> dict[str, Any]:
    """The record's ``anytime`` entry: the run's answer at every call budget up to its own
    (:mod:`thoughtloom.strategies.anytime`), each point scored as the record is."""
    def score(p: Point) -> dict[str, float]:
        try:
            return answer_metrics(task, p.answer, p.truncated, example.gold)
        except Exception as exc:  # an answer on the way that the scorer cannot read: none there
            log.warning("example %s: the answer at %d calls could not be scored: %s",
                        example.problem.id, p.calls, exc)
            return fallback_metrics(task, example.gold)

    # the weaker of what the strategy declares and what the recorder saw it do (Anytime.exact)
    exact = run.anytime.exact if strategy.anytime_exact == EXACT[0] else strategy.anytime_exact
    return {"points": run.anytime.trajectory(score), "exact": exact}


def fallback_metrics(task: Task, gold: Any) -> dict[str, float]:
    """The scores of no answer, for an example that errored."""
    try:  # no answer is judged 0 too
        return {**checked_metrics(task.score(None, gold), task), **{m: 0.0 for m in task.judged_metrics}}
    except Exception:  # a task that cannot score "no answer": the record has no metrics
        return {}


async def _solve(strategy: Strategy, problem: Any, ctx: Context, deadline_s: float | None) -> Any:
    """The strategy's result, or :class:`ExampleTimeout` once ``deadline_s`` has passed."""
    try:
        async with asyncio.timeout(deadline_s) as scope:
            return await strategy.run(problem, ctx)
    except TimeoutError:
        if scope.expired():
            raise ExampleTimeout(f"example took longer than {deadline_s:g} s",
                                 hint="raise --example-timeout") from None
        raise


@dataclass
class ProblemRun:
    """One problem through a strategy, inside the per-example boundary."""

    result: Result | None  # None when the run failed; ``error`` says why
    error: str | None
    usage: UsageTotals
    seconds: float
    trace: Trace
    server_failure: Exception | None = None  # with ``server_errors``: the server failure that was ``error``
    anytime: Anytime | None = None  # the answers on the way, with their spend (ends with the result's)
    by_role: dict[str, Any] = field(default_factory=dict)  # Metered.usage_by_role (empty: no role models)


async def run_problem(strategy: Strategy, task: Task, problem: Problem, res: EvalResources,
                      settings: EvalSettings, *, progress: ProgressHook | None = None,
                      server_errors: bool = False) -> ProblemRun:
    """Run one problem on a fresh per-question context (metered LM, trace, traced services).

    Raises only a fatal (service or set-up) error; any other failure of the
    strategy becomes the run's ``error``. The eval (:func:`run_example`) and
    ``thoughtloom run`` both answer through here. ``progress`` is called at
    the start, at every model call and at every phase change
    (:mod:`thoughtloom.core.progress`). ``server_errors``: a server failure
    (:func:`~.breaker.is_server_failure`) is the run's error too, and its
    ``server_failure`` (the eval's breaker judges it), instead of raised.
    """
    watcher = QuestionProgress(progress, problem.id) if progress is not None else None
    trace = Trace(sink=watcher, example=problem.id)
    if watcher is not None:
        watcher.start()
    anytime = Anytime(trace)
    lm = Metered(res.lm, budget=settings.budget, trace=trace, trace_text=settings.trace_text,
                 in_flight=watcher.flight if watcher is not None else None, before_batch=anytime.before_batch)
    role_lms = {role: lm.for_role(role, model) for role, model in res.role_lms.items()}
    retriever, entail = question_services(res.retriever, res.entail, role_lms.get("judge", lm), trace)
    ctx = Context(lm=lm, task=task, trace=trace, retriever=retriever, entail=entail,
                  prompt_dir=res.prompt_dir, seed=settings.seed, anytime=anytime, role_lms=role_lms)
    t0 = time.perf_counter()
    server = None
    try:
        result, error = await _solve(strategy, problem, ctx, settings.example_timeout_s), None
    except Exception as exc:  # one problem's failure is its error, not fatal
        server = exc if server_errors and is_server_failure(exc) else None
        result, error = None, _failed(trace, exc, keep=server is not None)
    if result is not None:
        anytime.finish(lm.totals.calls, lm.totals.total_tokens, result)
    return ProblemRun(result, error, lm.totals, time.perf_counter() - t0, trace, server,
                      anytime if result is not None else None, lm.usage_by_role())


def _failed(trace: Trace, exc: Exception, keep: bool = False) -> str:
    """``exc`` as an error text, traced; a fatal error is raised instead (unless ``keep``)."""
    if is_fatal(exc) and not keep:
        raise exc
    error = describe_error(exc)
    trace.emit("error", error=error)
    return error


async def run_example(
    strategy: Strategy, task: Task, example: Example, res: EvalResources, settings: EvalSettings, *,
    progress: ProgressHook | None = None,
) -> RecordAndTrace:
    """Run and score one example; returns its record and its trace events.

    Raises a fatal (service or set-up) error, and :class:`~.breaker.ServerFailed`
    (with the error record) for a server failure; anything else that goes
    wrong, scoring and serializing included, becomes the record's ``error``.
    ``progress``: as :func:`run_problem`'s.
    """
    t0 = time.perf_counter()
    run = await run_problem(strategy, task, example.problem, res, settings, progress=progress, server_errors=True)
    prediction, truncated, stopped, metrics, confidence, anytime = None, False, None, {}, None, None
    error, details = run.error, {}
    if run.result is not None:
        result = run.result
        try:  # field by field: what was read before a failure stays in the error record
            prediction = result.answer
            truncated = bool(result.truncated)
            stopped = result.stopped  # "budget": the strategy's best answer when its budget ran out
            metrics = answer_metrics(task, result.answer, result.truncated, example.gold)
            confidence = result.confidence
            if run.anytime is not None and not task.judged_metrics:  # a judged metric has no budget curve
                anytime = trajectory(run, strategy, task, example)
            details = to_json(result.details)
            if task.judged_metrics:  # the model judge, after the method and outside its budget
                answer = None if truncated and not task.score_truncated else prediction
                judged, details["judge"] = await judge_answer(task, res.lm, example.gold, answer, details)
                metrics = {**metrics, **judged}
        except Exception as exc:  # the task's scoring reads model text: recorded, not fatal
            error = _failed(run.trace, exc)
    if error is not None:
        if run.server_failure is None:  # the breaker decides what a server failure is
            log.warning("example %s failed: %s", example.problem.id, error)
        metrics = fallback_metrics(task, example.gold)  # scored as no answer, like every error
        anytime, details = None, {}
    record = EvalRecord(
        id=example.problem.id, input=example.problem.question, prediction=prediction, gold=example.gold,
        metrics=metrics, confidence=confidence, truncated=truncated, stopped=stopped, anytime=anytime,
        usage=run.usage.as_dict() | ({"by_role": run.by_role} if run.by_role else {}),  # by_role: --role-model
        latency_s=round(time.perf_counter() - t0, 6), error=error,
        step_problems=count_step_problems(run.trace.events),  # what went wrong inside, summed in the summary
        meta=to_json(dict(example.problem.meta)), details=details,
        example_sha256=example_sha256(example.problem, example.gold))  # a resume over changed data checks it
    outcome = writable(record, run.trace.events)
    if run.server_failure is not None:
        raise ServerFailed(outcome, run.server_failure)
    return outcome


@dataclass(frozen=True)
class ExampleJob:
    """What every example of one eval runs through; picklable, so a Ray actor runs it too."""

    strategy: Strategy
    task: Task
    settings: EvalSettings

    async def run(self, example: Example, res: EvalResources, progress: ProgressHook | None = None) -> RecordAndTrace:
        return await run_example(self.strategy, self.task, example, res, self.settings, progress=progress)

    def failed(self, example: Example, error: str) -> RecordAndTrace:
        """The error record of an example that never finished running (say its worker died)."""
        record = EvalRecord(id=example.problem.id, input=example.problem.question, gold=example.gold,
                            metrics=fallback_metrics(self.task, example.gold), usage=UsageTotals().as_dict(),
                            latency_s=0.0, error=error, meta=to_json(dict(example.problem.meta)),
                            example_sha256=example_sha256(example.problem, example.gold))
        return writable(record, [{"type": "error", "t": 0.0, "example": example.problem.id, "error": error}])


async def evaluate(
    strategy: Strategy,
    task: Task,
    examples: Sequence[Example],
    res: EvalResources | None,
    out_dir: str | Path,
    *,
    settings: EvalSettings = EvalSettings(),
    progress: Progress | None = None,
    meta: dict[str, Any] | None = None,
    lock: bool = True,
    source: DataSource | None = None,
    command: Sequence[str] | str | None = None,
    force: bool = False,
    executor: Executor | None = None,
) -> dict[str, Any]:
    """Run every example not already in ``out_dir``; return the summary.

    ``executor``: where the examples run (:mod:`.executors`); by default here, on ``res``
    (None for Ray: its workers open their own). Either way, without a retriever a task with a
    pooled corpus (:meth:`Task.pooled_corpus`) is searched with BM25 over it, by every strategy.

    Raises :class:`~thoughtloom.eval.lock.OutputLocked` when another run
    holds ``out_dir``, and :class:`~.results.DiskFull` (naming it) when its disk is full. ``lock=False``: the caller already holds the
    :class:`OutputLock` (the CLI takes it before loading the model).

    ``source`` (the data file and slice) and ``command`` go into the run's
    identity (``run.json``); a folder whose results were made with another
    config raises :class:`~thoughtloom.eval.identity.ConfigMismatch` before
    anything is read or run, unless ``force`` -- or unless the data file alone
    changed and every finished example is the same in ``examples``
    (:mod:`.data_change`).
    """
    if not isinstance(strategy.config, Options):  # an Options config was checked when it was made
        check_options(strategy.config, owner=strategy.name)  # before any model call
    ids = [e.problem.id for e in examples]
    if len(set(ids)) != len(ids):
        raise ConfigError("example ids are not unique; resume would be ambiguous")
    with disk_errors(out_dir), OutputLock(out_dir) if lock else contextlib.nullcontext():
        # HGOT+KNN / +Sampling without a demo file: annotate the demos first (eval.annotate)
        strategy = await with_demos(strategy, task, examples, res, out_dir, settings, evaluate)
        executor = executor or LocalExecutor(res)
        try:  # the identity names the services the examples run on: known once the executor opened them
            meta = {**(meta or {}), **await executor.start(ExampleJob(strategy, task, settings), task.pooled_corpus())}
            identify = functools.partial(run_identity, strategy, task, settings=settings, source=source,
                                         command=command, notes=meta)
            # the examples: a changed data file resumes when the finished ones are unchanged (eval.data_change)
            identity = open_identity(out_dir, await executor.describe(identify), force=force, examples=examples)
            store = ResultsFile(out_dir, retry_errors=settings.retry_errors)
            try:
                return await _run(strategy, task, examples, executor, store, settings, progress,
                                  {**meta, "identity": identity})
            finally:
                store.close()
        finally:
            await executor.aclose()


async def _run(strategy: Strategy, task: Task, examples: Sequence[Example], executor: Executor,
               store: ResultsFile, settings: EvalSettings, progress: Progress | None,
               meta: dict[str, Any] | None) -> dict[str, Any]:
    done = store.done()  # once: a set of every id, not one per example (20,000 records: 160 s)
    todo = [e for e in examples if e.problem.id not in done]
    breaker = CircuitBreaker(settings.breaker)
    stats = RunStats(total=len(examples), done=len(examples) - len(todo), server=breaker)
    t0 = time.perf_counter()
    run_meta = {"strategy": strategy.name, "strategy_config": to_json(strategy.config),
                "task": task.name, "primary_metric": task.primary_metric, **(meta or {})}

    def build(finished: bool, final: bool) -> dict[str, Any]:
        summary = summarize(store.tally, total=len(examples), stats=stats,
                            wall_s=time.perf_counter() - t0, meta=run_meta, finished=finished)
        if final:  # the task's report may be slow: once, at the end
            summary.update(task_summary(task, store.each()))  # read only by a task with a report
        return summary

    summaries = SummaryWriter(build, store.write_summary)
    summaries.write()
    if progress is not None:
        progress.start(stats)
    primary = task.primary_metric

    shown = progress.live if isinstance(progress, LiveProgress) else None  # without it: records alone
    refresh = progress.refresh if isinstance(progress, ServerProgress) else None  # the server's state as it fails
    breaker.on_tick = (lambda: refresh(stats)) if refresh is not None else None

    def live(update: ProgressUpdate) -> None:  # a running question's model call or phase change
        stats.running[update.question] = update
        if shown is not None:
            shown(update, stats)

    def one(record: EvalRecord, events: list[dict[str, Any]]) -> None:
        stats.running.pop(record.id, None)
        store.append(record, events)
        stats.done += 1
        stats.new += 1
        stats.errors += record.failed
        stats.truncated += record.truncated is True
        stats.budget_stopped += record.budget_stopped
        if primary in record.metrics:
            stats.metric_sum += record.metrics[primary]
            stats.metric_n += 1
        stats.usage.merge(UsageTotals.from_dict(record.usage))
        if progress is not None:
            progress.update(record.to_dict(), stats)  # a display hears of the record as its JSON object
        summaries.tick()

    finished = False
    try:
        await executor.run(todo, one, live if shown is not None else None, breaker)
        finished = True
    finally:
        write_identity(store.dir, run_meta["identity"], touch=True)
        summary = summaries.write(finished, final=True)
    return summary


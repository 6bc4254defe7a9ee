"""The eval runner: many questions, concurrently, resumably.

For each example not yet in ``OUT/results.jsonl`` the runner builds a fresh
per-question context (``Metered`` LM with the budget, a trace), runs the
strategy, scores the answer and appends one record. ``C`` examples run at a
time; their model calls share the one LM stack, so the backend sees them
together.

Errors: a strategy or data failure on one example is recorded in that
example's ``error`` field and the run goes on. A failure of the model
service itself (unreachable after retries, bad credentials, a replay cache
miss, a configuration error) stops the run: everything finished so far is
already on disk, and rerunning the same command resumes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from ..core.errors import CacheMiss, ConfigError, LMError, ModelCrashed
from ..core.protocols import LM, Entailment, Retriever
from ..core.trace import Trace
from ..core.types import to_json
from ..lm.meter import Budget, Metered, UsageTotals
from ..strategies.base import Context, Strategy
from ..tasks.base import Example, Task
from .results import ResultsFile

log = logging.getLogger(__name__)

#: Errors that say the model service or set-up is broken, not the example.
FATAL_ERRORS = (LMError, CacheMiss, ConfigError)
#: ... except a crashed model worker: the backend restarts it, so only the
#: example whose call was in flight is lost.
PER_EXAMPLE_LM_ERRORS = (ModelCrashed,)


@dataclass(frozen=True)
class EvalSettings:
    concurrency: int = 1
    budget: Budget = field(default_factory=Budget)
    retry_errors: bool = False
    seed: int = 0
    trace_text: bool = True


@dataclass
class RunStats:
    """Running figures of this invocation, for progress displays."""

    total: int = 0
    done: int = 0
    new: int = 0
    errors: int = 0
    metric_sum: float = 0.0
    metric_n: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)

    @property
    def running_metric(self) -> float | None:
        return self.metric_sum / self.metric_n if self.metric_n else None


class Progress(Protocol):
    def start(self, stats: RunStats) -> None: ...

    def update(self, record: dict[str, Any], stats: RunStats) -> None: ...


@dataclass
class EvalResources:
    """Shared services handed to every question's context."""

    lm: LM
    retriever: Retriever | None = None
    entail: Entailment | None = None
    prompt_dir: str | Path | None = None


def question_services(retriever: Retriever | None, entail: Entailment | None, lm: LM,
                      trace: Trace) -> tuple[Retriever | None, Entailment | None]:
    """Per-question views of the shared services: retrievals traced, and a judge
    that can (``bind``) asks through the question's metered LM and trace."""
    if retriever is not None:
        from ..retrieval.cache import TracedRetriever

        retriever = TracedRetriever(retriever, trace)
    bind = getattr(entail, "bind", None)
    if callable(bind):
        entail = bind(lm, trace)
    return retriever, entail


async def run_example(
    strategy: Strategy, task: Task, example: Example, res: EvalResources, settings: EvalSettings
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run and score one example; returns its record and its trace events."""
    trace = Trace(example=example.problem.id)
    lm = Metered(res.lm, budget=settings.budget, trace=trace, trace_text=settings.trace_text)
    retriever, entail = question_services(res.retriever, res.entail, lm, trace)
    ctx = Context(lm=lm, task=task, trace=trace, retriever=retriever, entail=entail,
                  prompt_dir=res.prompt_dir, seed=settings.seed)
    t0 = time.perf_counter()
    error = None
    prediction: str | None = None
    result = None
    try:
        result = await strategy.run(example.problem, ctx)
        prediction = result.answer
    except Exception as exc:  # one example's failure is recorded, not fatal
        if isinstance(exc, FATAL_ERRORS) and not isinstance(exc, PER_EXAMPLE_LM_ERRORS):
            raise
        error = f"{type(exc).__name__}: {exc}"
        trace.emit("error", error=error)
        log.warning("example %s failed: %s", example.problem.id, error)
    metrics = task.score(prediction, example.gold)
    record = {
        "id": example.problem.id,
        "input": example.problem.question,
        "prediction": prediction,
        "gold": example.gold,
        "metrics": metrics,
        "confidence": result.confidence if result else None,
        "usage": lm.totals.as_dict(),
        "latency_s": round(time.perf_counter() - t0, 6),
        "error": error,
        "meta": to_json(dict(example.problem.meta)),
        "details": to_json(result.details) if result else {},
    }
    return record, trace.events


async def evaluate(
    strategy: Strategy,
    task: Task,
    examples: Sequence[Example],
    res: EvalResources,
    out_dir: str | Path,
    *,
    settings: EvalSettings = EvalSettings(),
    progress: Progress | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run every example not already in ``out_dir``; return the summary."""
    ids = [e.problem.id for e in examples]
    if len(set(ids)) != len(ids):
        raise ConfigError("example ids are not unique; resume would be ambiguous")
    store = ResultsFile(out_dir, retry_errors=settings.retry_errors)
    todo = [e for e in examples if e.problem.id not in store.done()]
    stats = RunStats(total=len(examples), done=len(examples) - len(todo))
    if progress is not None:
        progress.start(stats)
    t0 = time.perf_counter()
    sem = asyncio.Semaphore(max(1, settings.concurrency))
    primary = task.primary_metric

    async def one(example: Example) -> None:
        async with sem:
            record, events = await run_example(strategy, task, example, res, settings)
        store.append(record, events)
        stats.done += 1
        stats.new += 1
        stats.errors += bool(record["error"])
        if primary in record["metrics"]:
            stats.metric_sum += record["metrics"][primary]
            stats.metric_n += 1
        stats.usage.merge(UsageTotals.from_dict(record["usage"]))
        if progress is not None:
            progress.update(record, stats)

    finished = False
    try:
        try:
            async with asyncio.TaskGroup() as group:
                for example in todo:
                    group.create_task(one(example))
        except BaseExceptionGroup as eg:
            # Surface the first real error rather than the group wrapper.
            first = eg.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
        finished = True
    finally:
        summary = summarize(
            store.records.values(),
            total=len(examples),
            stats=stats,
            wall_s=time.perf_counter() - t0,
            meta={"strategy": strategy.name, "strategy_config": to_json(strategy.config),
                  "task": task.name, **(meta or {})},
            finished=finished,
        )
        task_report = task.report(list(store.records.values()))
        if task_report:
            summary["task_report"] = task_report
        store.write_summary(summary)
        store.close()
    return summary


def summarize(
    records: Any, *, total: int, stats: RunStats, wall_s: float, meta: dict[str, Any], finished: bool
) -> dict[str, Any]:
    records = list(records)
    n = len(records)
    metric_names = sorted({k for r in records for k in r["metrics"]})
    metrics = {
        name: round(sum(r["metrics"].get(name, 0.0) for r in records) / n, 6) if n else 0.0
        for name in metric_names
    }
    usage_keys = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "total_tokens")
    usage = {k: sum(r["usage"].get(k, 0) for r in records) for k in usage_keys}
    usage["per_example"] = {k: round(usage[k] / n, 3) if n else 0.0 for k in usage_keys}
    return {
        **meta,
        "n": n,
        "total": total,
        "complete": finished and n >= total,
        "n_errors": sum(1 for r in records if r.get("error")),
        "metrics": metrics,
        "usage": usage,
        "mean_latency_s": round(sum(r["latency_s"] for r in records) / n, 4) if n else 0.0,
        "this_run": {
            "examples": stats.new,
            "calls": stats.usage.calls,
            "cached_calls": stats.usage.cached_calls,
            "new_calls": stats.usage.calls - stats.usage.cached_calls,
            "prompt_tokens": stats.usage.prompt_tokens,
            "completion_tokens": stats.usage.completion_tokens,
            "wall_s": round(wall_s, 3),
        },
    }

"""One call to answer a question, one to evaluate: ``thoughtloom.solve`` and ``thoughtloom.evaluate``.

::

    import thoughtloom

    solution = thoughtloom.solve("cot-sc", "What is 17 * 23?", task="gsm8k", n=5)
    print(solution.answer, solution.calls, solution.tokens, solution.seconds)

    evaluation = thoughtloom.evaluate("cot", "gsm8k", limit=5)  # the task's packaged sample, in memory
    print(evaluation["metrics"], [r.prediction for r in evaluation.records])

Both go through the eval runner's own path (:func:`~thoughtloom.eval.runner.run_problem`,
:func:`~thoughtloom.eval.runner.evaluate`): the per-question context, budget,
trace, error boundary and results files are those of ``thoughtloom run`` and
``thoughtloom eval``.

- Strategy options are keyword arguments, checked as ``--set`` is (an
  unknown name, a wrong type or an out-of-range value is a
  :class:`~thoughtloom.core.errors.ConfigError` before any model call).
  ``max_calls`` bounds the calls per question: the runner's budget and, for a
  strategy with that option, its own cap. ``token_budget`` bounds tokens per
  question (``max_tokens`` is the strategy option: tokens per reply).
- ``model`` is a spec (``"embedded"``, a ``.gguf`` path, ``openai:MODEL@URL``),
  opened for the call and closed after it, or an LM you opened
  (:func:`thoughtloom.lm.open_lm`, ``ScriptedLM``), which stays open.
  ``cache`` is a completion cache file; none by default.
- The keywords make a :class:`~thoughtloom.eval.assembly.RunSpec` (:func:`keyword_spec`), the spec
  ``thoughtloom run``/``eval``, ``reproduce`` and the Ray workers open a run from too.
- ``solve`` and ``evaluate`` run an event loop of their own; inside a running
  loop (a notebook, an async app) ``await asolve(...)`` / ``aevaluate(...)``.

The explicit path (:class:`~thoughtloom.strategies.Context`, a strategy's
``run``) stays for everything these calls do not cover.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Mapping, TypeVar

from . import tasks
from .core.errors import ConfigError, ThoughtloomError
from .core.progress import ProgressHook
from .core.protocols import LM
from .core.trace import Trace
from .core.types import Problem, to_json
from .eval.assembly import EvalRequest, RunSpec, assemble
from .eval.identity import DataSource
from .eval.record import EvalRecord
from .eval.results import read_records
from .eval.runner import Progress, run_problem
from .lm import CacheMode, UsageTotals
from .strategies.result import Result
from .tasks import QA, Example, Task
from .tasks.datasets import Dataset

T = TypeVar("T")
log = logging.getLogger(__name__)


class SolveFailed(ThoughtloomError):
    """The strategy failed on the question (a parse bug, a malformed reply, a
    timed-out call): the error the eval runner would record for it.
    ``trace`` and ``usage`` say what happened up to then."""

    def __init__(self, message: str, *, trace: Trace, usage: UsageTotals) -> None:
        super().__init__(message)
        self.trace, self.usage = trace, usage


@dataclass(frozen=True)
class Solution:
    """A strategy's answer to one question, with what it cost and how it got there."""

    answer: str
    result: Result  # the strategy's full result: text, confidence, details
    usage: UsageTotals
    trace: Trace  # every LLM call and strategy event (``trace.events``)
    seconds: float

    @property
    def calls(self) -> int:
        return self.usage.calls

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def confidence(self) -> float | None:
        return self.result.confidence

    @property
    def truncated(self) -> bool:
        """The answer came from a reply cut off at max_tokens: not a finished answer."""
        return self.result.truncated

    @property
    def stopped(self) -> str | None:
        """``"budget"`` when the budget ran out first: the answer is the best so far."""
        return self.result.stopped

    def __str__(self) -> str:
        return self.answer


async def asolve(strategy: str, question: str, *, task: str | Task = "freeform", model: str | LM = "embedded",
                 context: str = "", max_calls: int | None = None, token_budget: int | None = None,
                 cache: str | Path | None = None, cache_mode: CacheMode = "use", api_key: str | None = None,
                 index: str | Path | None = None, entail: str = "llm", prompts: str | Path | None = None,
                 seed: int = 0, timeout_s: float | None = None, progress: ProgressHook | None = None,
                 role_models: Mapping[str, str | LM] | None = None, **options: Any) -> Solution:
    """Answer ``question`` with ``strategy`` (see :func:`solve`)."""
    task_obj = tasks.resolve(task)
    spec = keyword_spec(model, max_calls=max_calls, token_budget=token_budget, cache=cache, cache_mode=cache_mode,
                        api_key=api_key, index=index, entail=entail, prompts=prompts, seed=seed,
                        role_models=role_models)
    strat = spec.strategy(strategy, options, task_obj)
    for line in spec.setup_notes(strat, task_obj):
        log.warning("%s", line)
    async with spec.open(_given(model), _given_roles(role_models)) as resources:
        run = await run_problem(strat, task_obj, Problem("api", question, context), resources,
                                spec.settings(example_timeout_s=timeout_s), progress=progress)
    if run.result is None:
        raise SolveFailed(run.error or "the strategy failed", trace=run.trace, usage=run.usage)
    return Solution(run.result.answer, run.result, run.usage, run.trace, run.seconds)


def solve(strategy: str, question: str, **kwargs: Any) -> Solution:
    """Answer one question with a strategy; returns a :class:`Solution`.

    ``task`` names the prompts and answer format (``"gsm8k"``, ``"game24"``,
    ...; ``"freeform"`` by default) or is a :class:`~thoughtloom.tasks.Task` of your own, ``context`` is the problem's context
    (facts, a premise). Other keywords: ``model``, ``max_calls``,
    ``token_budget``, ``cache``, ``cache_mode``, ``api_key``, ``index``,
    ``entail``, ``prompts``, ``seed``, ``role_models`` (role -> model spec or LM, e.g.
    ``{"evaluator": "small.gguf"}``: that role asks its own model, on the same budget and trace; roles:
    :data:`thoughtloom.strategies.ROLES`), ``timeout_s``, ``progress`` (a hook
    called at every model call and phase change, e.g.
    :class:`thoughtloom.eval.rich_progress.RichStatus`; see
    :mod:`thoughtloom.core.progress`), and the strategy's options (``n=5``,
    ``temperature=0.8``, ...). Raises :class:`SolveFailed` when the strategy
    fails on the question.
    """
    return _sync(asolve, "solve", strategy, question, **kwargs)


async def aevaluate(strategy: str, task: str | Task | None = None, data: str | Path | None = None, *,
                    examples: Iterable[Any] | None = None, metric: str | Callable[..., Any] | None = None,
                    input_field: str = "question", gold_field: str = "answer", model: str | LM = "embedded",
                    limit: int | None = None, offset: int = 0, out: str | Path | None = None,
                    concurrency: int = 1, max_calls: int | None = None, token_budget: int | None = None,
                    cache: str | Path | None = None, cache_mode: CacheMode = "use", api_key: str | None = None,
                    index: str | Path | None = None, entail: str = "llm", prompts: str | Path | None = None,
                    seed: int = 0, example_timeout_s: float | None = None, retry_errors: bool = False,
                    progress: Progress | None = None, force: bool = False, command: str | None = None,
                    role_models: Mapping[str, str | LM] | None = None, **options: Any) -> "Evaluation":
    """Evaluate ``strategy`` on ``task`` (see :func:`evaluate`)."""
    task_obj = tasks.resolve("qa" if task is None else task, input_field=input_field, gold_field=gold_field,
                             metric=metric)
    spec = keyword_spec(model, max_calls=max_calls, token_budget=token_budget, cache=cache, cache_mode=cache_mode,
                        api_key=api_key, index=index, entail=entail, prompts=prompts, seed=seed,
                        concurrency=concurrency, role_models=role_models)
    if examples is not None and data is not None:
        raise ConfigError("pass data (a file) or examples (a list), not both")
    with contextlib.ExitStack() as scratch:
        # no out: the run's files go to a folder of its own, read back and removed (results in memory)
        out_dir = Path(out) if out is not None else Path(scratch.enter_context(
            tempfile.TemporaryDirectory(prefix="thoughtloom-eval-")))
        request = EvalRequest(strategy, task_obj, options, data=data, offset=offset, limit=limit, out=out_dir,
                              retry_errors=retry_errors, example_timeout_s=example_timeout_s, force=force,
                              command=command)
        if examples is not None:
            dataset, source = _in_memory(task_obj, list(examples), offset, limit)
            request = dataclasses.replace(request, data=dataset, source=source)
        run = assemble(spec, request)
        for line in run.notes:
            log.warning("%s", line)
        summary = await run.run(lm=_given(model), role_lms=_given_roles(role_models), progress=progress)
        records = read_records(out_dir)
    order = {e.problem.id: i for i, e in enumerate(run.dataset.examples)}
    return Evaluation(summary, records=sorted(records.values(), key=lambda r: order.get(r.id, len(order))),
                      out=None if out is None else out_dir)


class Evaluation(dict):
    """What :func:`evaluate` returns: the summary (this dict: ``metrics``, ``n``, ``usage``, ... as in
    ``summary.json``), with ``records`` (one :class:`~thoughtloom.eval.record.EvalRecord` per example, in
    the examples' order: ``prediction``, ``metrics``, ``gold``, ``usage``, ``error``) and ``out`` (the
    results folder, or None for a run kept in memory)."""

    def __init__(self, summary: dict[str, Any], *, records: list[EvalRecord], out: Path | None) -> None:
        super().__init__(summary)
        self.records, self.out = records, out

    @property
    def summary(self) -> dict[str, Any]:
        return dict(self)

    @property
    def metrics(self) -> dict[str, float]:
        return dict(self.get("metrics") or {})


def evaluate(strategy: str, task: str | Task | None = None, data: str | Path | None = None,
             **kwargs: Any) -> Evaluation:
    """Evaluate a strategy on a task; returns an :class:`Evaluation`: the summary (a dict) with ``records``.

    ``task`` is a task name, a :class:`~thoughtloom.tasks.Task` of your own,
    or None for ``"qa"``: your own questions, given as ``data`` (a JSONL,
    JSON or CSV file) or as ``examples`` (a list of dicts with the
    ``input_field`` and ``gold_field`` keys, default ``question`` and
    ``answer``; ``(question, gold)`` pairs; or
    :class:`~thoughtloom.tasks.Example` objects), scored by ``metric``: a
    built-in name (``em``, ``f1``, ``contains``, ``numeric``, ``choice``) or
    a function ``fn(prediction, gold) -> float``::

        thoughtloom.evaluate("cot", examples=[{"question": "2 + 2?", "answer": "4"}], metric="numeric")

    For a benchmark task, ``data`` is its data file or folder (``thoughtloom
    data list`` says what each task reads); None runs the task's packaged
    sample, and the summary says so (``data_sample: true``). The results stay
    in memory (each call a fresh run, so a notebook cell can be run again
    with other examples) unless ``out`` names a folder: then they are
    written there as ``thoughtloom eval --out`` writes them, and an existing
    folder is resumed, unless its ``run.json`` says its results were made
    with another config: :class:`~thoughtloom.eval.identity.ConfigMismatch`,
    or resume anyway with ``force=True``; ``command`` describes the call in
    ``run.json``. Other keywords: ``model``, ``limit``, ``offset``,
    ``concurrency``, ``max_calls``, ``token_budget``, ``cache``,
    ``cache_mode``, ``api_key``, ``index``, ``entail``, ``prompts``,
    ``seed``, ``role_models`` (as :func:`solve`'s), ``example_timeout_s``, ``retry_errors``, ``progress`` (an
    object with ``start(stats)``, ``update(record, stats)`` and optionally
    ``live(update, stats)`` at every model call, e.g.
    :class:`thoughtloom.eval.rich_progress.RichProgress`; see
    :mod:`thoughtloom.eval.progress`), and the strategy's options.
    """
    return _sync(aevaluate, "evaluate", strategy, task, data, **kwargs)


def _in_memory(task: Task, items: list[Any], offset: int, limit: int | None) -> tuple[Dataset, DataSource]:
    """Examples passed in memory, sliced like a file's, with a hash of their content for the run's identity."""
    if all(isinstance(x, Example) for x in items):
        examples = items
    elif isinstance(task, QA):
        records = [dict(zip((task.input_field, task.gold_field), x)) if isinstance(x, (tuple, list)) else x
                   for x in items]
        examples = task.examples(list(enumerate(records, 1)), where="examples")
    else:
        raise ConfigError(f"examples for the task {task.name} must be thoughtloom.tasks.Example objects",
                          hint="dicts and (question, gold) pairs are read by the qa task (task=None)")
    if not examples:
        raise ConfigError("examples is empty: nothing to evaluate")
    if offset >= len(examples):
        raise ConfigError(f"offset {offset}: only {len(examples)} examples were given")
    sliced = examples[offset:] if limit is None else examples[offset:offset + limit]
    digest = hashlib.sha256(json.dumps([[e.problem.id, e.problem.question, e.problem.context, to_json(e.gold)]
                                        for e in examples], sort_keys=True, default=str).encode()).hexdigest()
    return Dataset(sliced, Path("<examples>"), False), DataSource(None, offset, limit, sha256=digest)


def _sync(run: Callable[..., Awaitable[T]], name: str, *args: Any, **kwargs: Any) -> T:
    """``run(...)`` on an event loop of its own; refused inside a running loop, where it cannot block."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop running: ours is the only one
        return asyncio.run(run(*args, **kwargs))
    raise RuntimeError(f"thoughtloom.{name}() cannot run inside a running event loop (a notebook, an "
                       f"async app): use `await thoughtloom.a{name}(...)` there")


def keyword_spec(model: str | LM = "embedded", *, max_calls: int | None = None, token_budget: int | None = None,
             cache: str | Path | None = None, cache_mode: CacheMode = "use", api_key: str | None = None,
             index: str | Path | None = None, entail: str = "llm", prompts: str | Path | None = None,
             seed: int = 0, concurrency: int = 1, role_models: Mapping[str, str | LM] | None = None) -> RunSpec:
    """The :class:`~thoughtloom.eval.assembly.RunSpec` these keywords ask for, as :func:`solve` and
    :func:`evaluate` open it (``token_budget`` is its ``max_tokens``; an LM object for ``model`` leaves
    its ``model`` None: the LM is handed to :meth:`RunSpec.open`, as are the LM objects of ``role_models``;
    its model specs are the spec's ``role_models``)."""
    return RunSpec(model=model if isinstance(model, str) else None, api_key=api_key, cache=cache,
                   cache_mode=cache_mode, max_calls=max_calls, max_tokens=token_budget, index=index,
                   entail=entail, prompts=prompts, seed=seed, concurrency=concurrency,
                   role_models={r: m for r, m in (role_models or {}).items() if isinstance(m, str)})


def _given(model: str | LM) -> LM | None:
    """An LM the caller opened (it stays the caller's), or None for a model spec the run opens and closes."""
    return None if isinstance(model, str) else model


def _given_roles(role_models: Mapping[str, str | LM] | None) -> dict[str, LM]:
    """The role LMs the caller opened (they stay the caller's); the model specs are the run's to open."""
    return {r: m for r, m in (role_models or {}).items() if not isinstance(m, str)}


__all__ = ["Evaluation", "Solution", "SolveFailed", "aevaluate", "asolve", "evaluate", "solve"]

"""Demonstrations a strategy annotates itself, run before its eval (HGOT appendix D).

A strategy that needs them declares the step
(:meth:`~thoughtloom.strategies.Strategy.demo_annotation`: HGOT+KNN and
HGOT+Sampling with no ``demo_file``), so the variants run from the package
alone; the eval runner asks every strategy, and never looks inside a config
to guess. The step, run here (:func:`with_demos`):

- the questions: the comparison's training pool (the step's ``train_file``:
  the same 7 training examples every baseline is shown,
  :mod:`thoughtloom.strategies.demo_pool`), else the task's own demos, minus
  every question the eval asks (by text), the first ``n`` of them -- never
  the test files the eval draws from;
- the run: the step's ``plain`` strategy (HGOT with ``demos=none``) on the
  same model, retriever and judge, as an eval of its own in
  ``OUT/annotate/runs`` (resumable, its calls cached);
- the result: the rows the step keeps (:meth:`DemoAnnotation.qualified`, with
  the task's scorer as the judge of an answer) in ``OUT/annotate/demos.csv``
  and ``OUT/annotate/summary.json`` (questions run, kept), reused when the
  eval resumes; the eval runs the step's ``annotated`` strategy.

Gold answers are read here, in the eval layer, never by the strategy.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from ..core.errors import ConfigError
from ..strategies.interface import AnnotationRun, DemoAnnotation, Strategy
from ..tasks.base import Example, Task
from ..core.types import Problem
from ..strategies.demo_pool import read_pool
from .record import EvalRecord
from .results import atomic_write, read_records

log = logging.getLogger(__name__)

FOLDER = "annotate"


def wants_demos(strategy: Strategy) -> bool:
    """The strategy declares demonstrations to annotate before its eval."""
    return strategy.demo_annotation() is not None


def annotation_questions(task: Task, asked: Sequence[Example], n: int,
                         train_file: str | None = None) -> list[Example]:
    """The first ``n`` training demos (``train_file``'s pool, else the task's demos) that the
    eval does not ask, as examples with their gold answers."""
    seen = {e.problem.question.strip() for e in asked}
    demos = read_pool(train_file) if train_file else task.demos()
    out = []
    for i, d in enumerate(demos):
        if d.question.strip() in seen:
            continue
        gold = task.parse_gold(d.answer, f"{train_file or task.name + ' demos'}: demo {i + 1}")
        out.append(Example(Problem(f"{task.name}-train-{i}", d.question), gold))
    return out[:n]


def qualified_rows(step: DemoAnnotation, task: Task,
                   records: Sequence[EvalRecord | dict[str, Any]]) -> list[dict[str, str]]:
    """The demonstration rows ``step`` keeps of the eval records of its ``plain`` runs, the task's scorer
    judging each answer (right: the primary metric at 1)."""
    runs = [AnnotationRun(r.input, r.details, r.gold) for r in map(EvalRecord.of, records)]
    return step.qualified(runs, lambda pred, gold: task.score(pred, gold)[task.primary_metric] == 1.0)


async def with_demos(strategy: Strategy, task: Task, examples: Sequence[Example], res: Any,
                     out_dir: str | Path, settings: Any, evaluate: Callable[..., Awaitable[Any]]) -> Strategy:
    """The strategy to evaluate: ``strategy`` itself, or, where it declares demonstrations to annotate
    (:meth:`~thoughtloom.strategies.Strategy.demo_annotation`), the one that shows those annotated for
    this eval (see the module docstring). ``evaluate`` is the eval runner's (the annotation is an eval of
    its own)."""
    step = strategy.demo_annotation()
    if step is None:
        return strategy
    if res is None:
        raise ConfigError(f"{strategy.name}: {step.label} without demo_file is annotated "
                          "on the fly, which runs here, not on Ray workers",
                          hint="annotate once with a local eval (its OUT/annotate/demos.csv) and set demo_file=")
    folder = Path(out_dir) / FOLDER
    csv_path, summary_path = folder / "demos.csv", folder / "summary.json"
    if not csv_path.is_file():
        questions = annotation_questions(task, examples, step.n, step.train_file)
        await evaluate(step.plain, task, questions, res, folder / "runs", settings=settings)
        records = list(read_records(folder / "runs").values())
        rows = qualified_rows(step, task, records)
        folder.mkdir(parents=True, exist_ok=True)
        step.write(rows, str(csv_path))
        atomic_write(summary_path, json.dumps({"questions": len(questions), "kept": len(rows),
                                               "source": step.train_file or f"{task.name} task demos"},
                                              indent=2) + "\n")
        if not rows:
            log.warning("%s: none of %d annotation runs qualified; %s runs without demonstrations",
                        strategy.name, len(records), step.label)
    return step.annotated(str(csv_path))


def annotation_summary(out_dir: str | Path) -> dict[str, Any] | None:
    """What the on-the-fly annotation of an eval found (questions, kept), if it ran."""
    path = Path(out_dir) / FOLDER / "summary.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

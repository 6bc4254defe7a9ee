"""Annotated demonstrations built on the fly, for a strategy that asks for them (HGOT appendix D).

HGOT+KNN and HGOT+Sampling show demonstrations annotated by the method itself,
after DSP: run it without demos on training questions, keep the runs whose
prediction is correct, whose plan steps are all questions and whose mean step
length passes the IQR rule (:func:`thoughtloom.strategies.hgot.demos.qualify`),
and write them in the authors' CSV columns. An eval of a strategy whose
config has ``demos`` other than ``none`` and no ``demo_file`` does this first
(:func:`with_demos`), so the variants run from the package alone:

- the questions: the comparison's training pool (``train_file``: the same 7
  training examples every baseline is shown, :mod:`thoughtloom.strategies.demo_pool`),
  else the task's own demos, minus every question the eval asks (by text), the
  first ``annotate_n`` of them -- never the test files the eval draws from;
- the run: the same strategy, model, retriever and judge, ``demos=none``, as
  an eval of its own in ``OUT/annotate/runs`` (resumable, its calls cached);
- the result: ``OUT/annotate/demos.csv`` and ``OUT/annotate/summary.json``
  (questions run, kept), reused when the eval resumes.

Gold answers are read here, in the eval layer, never by the strategy.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from ..core.errors import ConfigError
from ..strategies.interface import Strategy
from ..strategies.hgot import demos as demolib
from ..tasks.base import Example, Task
from ..core.types import Problem
from ..strategies.demo_pool import read_pool
from .record import EvalRecord
from .results import atomic_write, read_records

log = logging.getLogger(__name__)

FOLDER = "annotate"


def wants_demos(strategy: Strategy) -> bool:
    """The strategy asks for annotated demos and was given no file of them."""
    cfg = strategy.config
    return getattr(cfg, "demos", "none") != "none" and not getattr(cfg, "demo_file", None)


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
        gold = task.parse_gold(d.answer, f"{train_file or task.name + ' demos'}: demo {i + 1}") \
            if hasattr(task, "parse_gold") else d.answer
        out.append(Example(Problem(f"{task.name}-train-{i}", d.question), gold))
    return out[:n]


def qualified_rows(task: Task, records: Sequence[EvalRecord | dict[str, Any]]) -> list[dict[str, str]]:
    """The annotation CSV rows of the runs that pass the DSP-style filter (correct, question-shaped
    steps, IQR on step length), from eval records of the strategy without demos."""
    done = [r for r in map(EvalRecord.of, records) if r.details.get("tree")]
    rows = [demolib.annotation_row(r.input, r.details["tree"], r.details.get("context") or ()) for r in done]
    golds = [r.gold for r in done]
    annotated = [demolib.Annotated(x["Question"], x["Plan"], x["Dependencies"], x["Rewrite Context"],
                                   x["Rewrite"], x["Rationale Context"], x["Rationale"], x["Answer"]) for x in rows]
    kept = demolib.qualify(annotated, golds,
                           lambda pred, gold: task.score(pred, gold)[task.primary_metric] == 1.0)
    keep = {a.question for a in kept}
    return [x for x in rows if x["Question"] in keep]


async def with_demos(strategy: Strategy, task: Task, examples: Sequence[Example], res: Any,
                     out_dir: str | Path, settings: Any, evaluate: Callable[..., Awaitable[Any]]) -> Strategy:
    """``strategy`` with ``demo_file`` set to demos annotated for this eval (see the module
    docstring), or ``strategy`` itself when it needs none. ``evaluate`` is the eval runner's
    (the annotation is an eval of its own)."""
    if not wants_demos(strategy):
        return strategy
    if res is None:
        raise ConfigError(f"{strategy.name}: demos={strategy.config.demos} without demo_file is annotated "
                          "on the fly, which runs here, not on Ray workers",
                          hint="annotate once with a local eval (its OUT/annotate/demos.csv) and set demo_file=")
    folder = Path(out_dir) / FOLDER
    csv_path, summary_path = folder / "demos.csv", folder / "summary.json"
    if not csv_path.is_file():
        train_file = getattr(strategy.config, "train_file", None)
        questions = annotation_questions(task, examples, strategy.config.annotate_n, train_file)
        plain = type(strategy)(dataclasses.replace(strategy.config, demos="none"))
        await evaluate(plain, task, questions, res, folder / "runs", settings=settings)
        records = list(read_records(folder / "runs").values())
        rows = qualified_rows(task, records)
        folder.mkdir(parents=True, exist_ok=True)
        demolib.write_annotated(rows, csv_path)
        atomic_write(summary_path, json.dumps({"questions": len(questions), "kept": len(rows),
                                               "source": train_file or f"{task.name} task demos"},
                                              indent=2) + "\n")
        if not rows:
            log.warning("%s: none of %d annotation runs qualified; demos=%s runs without demonstrations",
                        strategy.name, len(records), strategy.config.demos)
    return type(strategy)(dataclasses.replace(strategy.config, demo_file=str(csv_path)))


def annotation_summary(out_dir: str | Path) -> dict[str, Any] | None:
    """What the on-the-fly annotation of an eval found (questions, kept), if it ran."""
    path = Path(out_dir) / FOLDER / "summary.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

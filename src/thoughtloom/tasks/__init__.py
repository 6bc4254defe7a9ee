"""Benchmarks: loading, prompting hints and scoring. Never imports strategies."""

from __future__ import annotations

from typing import Any, Callable

from ..core.errors import ConfigError
from ..core.names import unknown
from .base import Example, Task
from .commaqa import CommaQA
from .commongen import CommonGenHard
from .crosswords import MiniCrosswords
from .decomp_synthetic import LetterCat, ListReversal
from .factqa import FEVER, HotpotQA, OpenSQuAD
from .game24 import Game24
from .mathqa import GSM8K, MultiArith
from .odqa import MuSiQue, TwoWiki
from .outline import OutlineImprovement
from .qa import QA

_TASKS: dict[str, type[Task]] = {
    t.name: t
    for t in (
        Task, QA, GSM8K, MultiArith,  # single questions, the user's own data, math word problems
        LetterCat, ListReversal, CommaQA, TwoWiki, MuSiQue,  # Decomposed Prompting
        HotpotQA, FEVER, OpenSQuAD,  # HGOT (HotpotQA is also DecomP's open-domain QA)
        Game24, MiniCrosswords, CommonGenHard, OutlineImprovement,  # ThoughtSculpt
    )
}


def get(name: str) -> Task:
    try:
        return _TASKS[name]()
    except KeyError:
        raise unknown("task", name, available()) from None


def available() -> list[str]:
    return sorted(_TASKS)


def resolve(task: str | Task, *, input_field: str = "question", gold_field: str = "answer",
            metric: str | Callable[..., Any] | None = None) -> Task:
    """The task to run: a :class:`Task` as it is, ``"qa"`` with its fields and metric, or a named one.

    The fields and metric belong to ``qa`` (the user's own data); given with
    another task they are an error, since a benchmark reads its own fields
    and scores with its own metric.
    """
    if task == QA.name:
        return QA(input_field, gold_field, metric)
    asked = [what for what, given in (("an input field", input_field != "question"),
                                      ("a gold field", gold_field != "answer"), ("a metric", metric is not None))
             if given]
    if asked:
        label = task if isinstance(task, str) else type(task).__name__
        raise ConfigError(f"{' and '.join(asked)} {'applies' if len(asked) == 1 else 'apply'} to the task qa "
                          f"(your own data), not to {label}",
                          hint="a benchmark task reads its own fields and scores with its own metric")
    return task if isinstance(task, Task) else get(task)


__all__ = ["QA", "Example", "Task", "available", "get", "resolve"]

"""Benchmarks: loading, prompting hints and scoring. Never imports strategies."""

from __future__ import annotations

from ..core.errors import ConfigError
from .base import Example, Task
from .factqa import FEVER, HotpotQA, OpenSQuAD
from .mathqa import GSM8K, MultiArith

_TASKS: dict[str, type[Task]] = {t.name: t for t in (Task, GSM8K, MultiArith)}
_TASKS.update({t.name: t for t in (HotpotQA, FEVER, OpenSQuAD)})


def get(name: str) -> Task:
    try:
        return _TASKS[name]()
    except KeyError:
        raise ConfigError(f"unknown task {name!r}", hint=f"choose one of: {', '.join(available())}") from None


def available() -> list[str]:
    return sorted(_TASKS)


__all__ = ["Example", "Task", "available", "get"]

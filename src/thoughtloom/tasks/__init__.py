"""Benchmarks: loading, prompting hints and scoring. Never imports strategies."""

from __future__ import annotations

from ..core.errors import ConfigError
from .base import Example, Task
from .mathqa import GSM8K, MultiArith
from .commongen import CommonGenHard
from .crosswords import MiniCrosswords
from .game24 import Game24
from .outline import OutlineImprovement
from .decomp_synthetic import LetterCat, ListReversal
from .commaqa import CommaQA
from .odqa import HotpotQA, MuSiQue, TwoWiki

_TASKS: dict[str, type[Task]] = {t.name: t for t in (Task, GSM8K, MultiArith)}
_TASKS.update({t.name: t for t in (Game24, MiniCrosswords, CommonGenHard, OutlineImprovement)})
_TASKS.update({t.name: t for t in (LetterCat, ListReversal, CommaQA, HotpotQA, TwoWiki, MuSiQue)})


def get(name: str) -> Task:
    try:
        return _TASKS[name]()
    except KeyError:
        raise ConfigError(f"unknown task {name!r}", hint=f"choose one of: {', '.join(available())}") from None


def available() -> list[str]:
    return sorted(_TASKS)


__all__ = ["Example", "Task", "available", "get"]

"""Benchmarks: loading, prompting hints and scoring. Never imports strategies."""

from __future__ import annotations

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

_TASKS: dict[str, type[Task]] = {
    t.name: t
    for t in (
        Task, GSM8K, MultiArith,  # math word problems
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


__all__ = ["Example", "Task", "available", "get"]

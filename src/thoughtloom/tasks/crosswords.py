"""5x5 mini crosswords (the Tree-of-Thoughts set-up).

Data: ``mini0505.json``, a list of ``[clues, letters]`` with ten clues
(h1..h5 across, then v1..v5 down) and the 25 solution letters row by row.
A problem's question lists the clues one per line ("h1. <clue>"), so the CLI
can take a puzzle typed in the same form.

A search candidate is a board: 25 characters row by row, ``_`` for a blank.
One generation reply lists candidate answers with confidences (Appendix
A.2's NEW_CANDIDATE; ``candidate_list``), the surest first; each child fills one word or overwrites one (overwriting letters already
there is a *revision*; ToT children may only fill consistently). The
evaluator judges clue by clue against the letters already in place
("h1. <clue>: A____"); a clue with blanks scores at most 5/10, as the guide
says, and the search holds the model to that (``score_limits``). Metrics: share of letters, of words and of whole
games right.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from ..core.bounded import clip
from ..core.errors import DataError
from ..core.options import TaskSetting
from ..core.types import Problem
from .base import Example, Task, read_json

BLANK = "_"
#: The most a clue with blanks may score (0-1), as the evaluation guide says ("scores at most 5").
BLANK_LIMIT = 0.5
SLOTS = tuple(f"h{i}" for i in range(1, 6)) + tuple(f"v{i}" for i in range(1, 6))
_CLUE_LINE = re.compile(r"^\s*([hv][1-5])\s*[.:)]\s*(.+)$", re.IGNORECASE)  # group stripped
#: A word line ("h2. [clue]: WORD") is short; longer lines are read up to here, because the
#: pattern's lazy \W*? before [^:\n]*: backtracks quadratically on a long line.
MAX_WORD_LINE = 300
_WORD_LINE = re.compile(r"^\W*([hv][1-5])\b\W*?(?:\[[^\]]*\]|[^:\n]*:)?\s*[\"'*]*([A-Za-z]{5})\b[\"'*]*", re.IGNORECASE)


def empty_board() -> str:
    return BLANK * 25


def cells(slot: str) -> list[int]:
    """Board indices of a slot: h1 = row 0, v1 = column 0."""
    i = int(slot[1]) - 1
    return [i * 5 + j for j in range(5)] if slot[0] == "h" else [j * 5 + i for j in range(5)]


def word_at(board: str, slot: str) -> str:
    return "".join(board[c] for c in cells(slot))


def place(board: str, slot: str, word: str) -> str:
    """The board with ``word`` written into ``slot`` (overwriting what was there)."""
    if len(word) != 5 or not word.isalpha():
        raise ValueError(f"a crossword answer must be 5 letters, got {word!r}")
    chars = list(board)
    for c, ch in zip(cells(slot), word.upper()):
        chars[c] = ch
    return "".join(chars)


def overwrites(board: str, new: str) -> bool:
    """True if ``new`` changes a letter already filled in ``board``."""
    return any(a != BLANK and a != b for a, b in zip(board, new))


def grid(board: str) -> str:
    return "\n".join(" ".join(board[r * 5:(r + 1) * 5]) for r in range(5))


def parse_clues(question: str) -> dict[str, str]:
    clues = {}
    for line in question.splitlines():
        m = _CLUE_LINE.match(line)
        if m:
            clues[m.group(1).lower()] = m.group(2).strip()
    missing = [s for s in SLOTS if s not in clues]
    if missing:
        raise DataError(f"crossword needs clues h1..h5 and v1..v5, one per line as 'h1. <clue>'; missing {missing}")
    return clues


def board_metrics(prediction: str | None, gold: str) -> dict[str, float]:
    pred = (prediction or "").upper()
    pred = (pred + BLANK * 25)[:25]
    letters = sum(a == b for a, b in zip(pred, gold)) / 25
    words = sum(word_at(pred, s) == word_at(gold, s) for s in SLOTS) / 10
    return {"letters": letters, "words": words, "game": float(pred == gold)}


class MiniCrosswords(Task):
    name = "crosswords"
    instruction = ("Solve a 5x5 mini crossword: five across words (h1-h5, the rows) and five down words "
                   "(v1-v5, the columns), each exactly 5 letters, that fit the clues and share letters where they cross.")
    primary_metric = "letters"
    metrics = ("letters", "words", "game")
    search_settings = {
        "k": TaskSetting(3, "ThoughtSculpt §4.2: 'For each node, ThoughtSculpt and ToT generate a maximum "
                            "of 3 candidates'"),
        "rollouts": TaskSetting(20, "ThoughtSculpt §4.2: 'utilize only 20 search steps'; Fig. 5: 'One step "
                                    "is equal to one d_rollout'"),
        "max_steps": TaskSetting(20, "ThoughtSculpt §4.2: 20 search steps (one expansion each)"),
        "iterations": TaskSetting(20, "ThoughtSculpt §4.2: 20 search steps (one rewrite each)"),
        "max_depth": TaskSetting(20, "the paper gives no depth; a step fills or edits one word (§4.2), so 20 "
                                     "lets a path fill all 10 slots and revise each once ('two word attempts' "
                                     "per slot in 20 steps)"),
        "c": TaskSetting(0.2, "the paper gives no UCB1 constant; a board needs 5 to 10 fills along one path "
                              "in 20 rollouts, and a filled word moves v(x) by about 0.1, so c = 1 spreads "
                              "the rollouts breadth-first (an always-correct one-word-per-reply generator "
                              "solved 0 of 30 boards at c = 1, 30 of 30 at 0.2; with App. A.2's candidate "
                              "list, 30 of 30 at every c from 0.1 to 1, benchmarks/crossword_oracle.py)"),
    }
    cot_answer_format = "end with the filled board: five lines of five letters, one row per line."
    # ThoughtSculpt App. A.2's NEW_CANDIDATE: one reply lists every candidate answer with a confidence
    candidate_list = True

    def extract_answer(self, text: str) -> str | None:
        """25 letters: a board written as five rows of five letters, or word lines applied to a blank board."""
        rows = [re.sub(r"[^A-Za-z_]", "", ln) for ln in clip(text).splitlines()]
        rows = [r.upper() for r in rows if len(r) == 5]
        if len(rows) >= 5:
            return "".join(rows[-5:])
        board = empty_board()
        for line in clip(text).splitlines():
            m = _WORD_LINE.match(line[:MAX_WORD_LINE])
            if m:
                board = place(board, m.group(1).lower(), m.group(2))
        return board if board != empty_board() else None

    def normalize(self, answer: str) -> str:
        return answer.upper()

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        return board_metrics(prediction, gold)

    def load(self, path: str | Path) -> list[Example]:
        data = read_json(path)
        if not isinstance(data, list):
            raise DataError(f"{path}: expected a JSON list of [clues, letters] puzzles")
        examples = []
        for i, rec in enumerate(data):
            where = f"{path}: puzzle {i}"
            if not (isinstance(rec, list) and len(rec) == 2 and isinstance(rec[0], list) and len(rec[0]) == 10
                    and isinstance(rec[1], list) and len(rec[1]) == 25):
                raise DataError(f"{where}: expected [10 clues, 25 letters]")
            question = "\n".join(f"{slot}. {clue}" for slot, clue in zip(SLOTS, rec[0]))
            examples.append(Example(Problem(id=f"mini-{i}", question=question), "".join(rec[1]).upper()))
        return examples

    # -- SearchTask ----------------------------------------------------------

    def describe(self, problem: Problem) -> str:
        return f"{self.instruction}\nClues:\n{problem.question}"

    def root_candidate(self, problem: Problem) -> str | None:
        return empty_board()

    def _patterns(self, problem: Problem, board: str) -> list[str]:
        clues = parse_clues(problem.question)
        return [f"{s}. {clues[s]}: {word_at(board, s)}" for s in SLOTS]

    def render(self, problem: Problem, candidate: str) -> str:
        return grid(candidate) + "\nClues with the letters in place:\n" + "\n".join(self._patterns(problem, candidate))

    def output_format(self, problem: Problem) -> str:
        return ("List the answers you can give for clues that are blank or look wrong, each a 5-letter word "
                "that fits the letters already in place, one per line, with how sure you are of it (certain, "
                "high, medium or low; say certain only when you have no doubt). Each line one answer, in the "
                "form:\nh2. WORD (high)\nv3. WORD (medium)")

    def parse_candidate(self, problem: Problem, text: str, parent: str | None) -> str | None:
        board = parent if parent is not None else empty_board()
        for line in clip(text).splitlines():
            m = _WORD_LINE.match(line[:MAX_WORD_LINE])
            if m:
                new = place(board, m.group(1).lower(), m.group(2))
                return new if new != board else None
        return None

    def evaluation_items(self, problem: Problem, candidate: str) -> Sequence[str]:
        return self._patterns(problem, candidate)

    def evaluation_guide(self, problem: Problem) -> str:
        return ("For each clue, judge the letters in place ('_' is blank): a filled word that fits the clue "
                "scores high; letters that make every answer impossible score 0; a clue with blanks is not "
                f"solved yet and scores at most {BLANK_LIMIT * 10:g}; for a partly filled clue, name a 5-letter "
                "answer that fits its letters if you can.")

    def score_limits(self, problem: Problem, candidate: str) -> list[float]:
        """The guide's "a clue with blanks is not solved yet and scores at most 5",
        for each clue in :meth:`evaluation_items`' order: small models score an
        empty board 10/10 clue by clue, and a search would then stop at, or
        answer with, a board it never filled."""
        return [BLANK_LIMIT if BLANK in word_at(candidate, s) else 1.0 for s in SLOTS]

    def judged_items(self, problem: Problem, candidate: str) -> list[bool]:
        """Which clues may judge a board impossible (a tree search's pruning, in
        :meth:`evaluation_items`' order): those with at least two letters in place,
        as Yao et al.'s crosswords DFS values only a clue with fewer than 4 blanks."""
        return [word_at(candidate, s).count(BLANK) < 4 for s in SLOTS]

    def complete(self, problem: Problem, candidate: str) -> bool:
        """A full board: a child that only fills blanks (a ToT thought) cannot extend it."""
        return BLANK not in candidate

    def change_kind(self, parent: str, child: str) -> str:
        return "revised" if overwrites(parent, child) else "extended"

    def symbolic_score(self, problem: Problem, candidate: str) -> float | None:
        return None  # checking needs the gold letters, which a strategy never sees

    def candidate_answer(self, problem: Problem, candidate: str) -> str:
        return candidate

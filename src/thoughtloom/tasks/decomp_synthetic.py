"""DecomP's synthetic tasks: k-th letter concatenation and list reversal.

Both read DecomP's DROP-style JSON (``{"<key>": {"qa_pairs": [...]}}``, gold
in ``answer.spans[0]``): the files of DecomP's ``datasets/letter_cat/`` and
``datasets/reverse/`` (``thoughtloom data list``). k-th letter is scored by exact match, as the
paper scores it: the prediction as written (only surrounding space, quotes and
a final period dropped) must be the gold string, case and separator spacing
included ("G ; J ; L ; N" is not "g;j;l;n"). List reversal keeps a light
normalization (case, spacing around the commas).
``report`` breaks exact match down by word count / separator / list length.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..core.errors import DataError
from ..core.types import Demo, Problem
from .base import Example, Task, read_json, require

_POSITION = re.compile(r"position (\d+)")


def _qa_pairs(path: str | Path) -> list[tuple[str, dict]]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a DROP-style JSON object")
    out = []
    for key, block in data.items():
        pairs = block.get("qa_pairs") if isinstance(block, dict) else None
        if not isinstance(pairs, list):
            raise DataError(f"{path}: entry {key!r} has no qa_pairs list")
        out.extend((f"{path}: {key}/{i}", qa) for i, qa in enumerate(pairs))
    return out


def _gold(qa: dict, where: str) -> str:
    spans = require(qa, "answer", where, dict).get("spans")
    if not spans:
        raise DataError(f"{where}: answer has no spans")
    return str(spans[0])


def _strip_answer(text: str) -> str:
    return text.strip().strip(".").strip().strip('"').strip("'").strip()


class _Synthetic(Task):
    primary_metric = "em"

    def extract_answer(self, text: str) -> str | None:
        found = super().extract_answer(text)
        return _strip_answer(found) if found is not None else None

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        p = self.normalize(prediction or "")
        return {"em": float(bool(p) and p == self.normalize(str(gold)))}

    def report(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        groups: dict[str, list[float]] = defaultdict(list)
        for r in records:
            groups[self.stratum(r.get("meta", {}))].append(r["metrics"].get("em", 0.0))
        return {"em_by_stratum": {k: {"n": len(v), "em": round(sum(v) / len(v), 4)}
                                  for k, v in sorted(groups.items())}}

    def stratum(self, meta: Mapping[str, Any]) -> str:
        return "all"


class LetterCat(_Synthetic):
    name = "letter_cat"
    instruction = ("Take the letter at the given position of each word and concatenate the letters "
                   "with the given separator.")

    def demos(self) -> Sequence[Demo]:
        return (Demo('Take the letters at position 2 of the words in "Rosa Lind" and concatenate '
                     'them using a space.',
                     answer="o i",
                     rationale='The words are "Rosa" and "Lind". The letter at position 2 of "Rosa" '
                               'is "o". The letter at position 2 of "Lind" is "i". Joined with a '
                               'space: "o i".'),)

    def normalize(self, answer: str) -> str:
        """Exact match: the answer as written, less surrounding space, quotes and a final period."""
        return _strip_answer(answer)

    def load(self, path: str | Path) -> list[Example]:
        stem = Path(path).stem
        examples = []
        for where, qa in _qa_pairs(path):
            question = require(qa, "question", where)
            words = qa.get("words") or []
            pos = _POSITION.search(question)
            meta = {"n": len(words), "sep": "semicolon" if "semi-colon" in question else "space",
                    "position": int(pos.group(1)) if pos else None}
            examples.append(Example(Problem(f"letter_cat-{stem}-{qa.get('query_id', len(examples))}",
                                            question, meta=meta), _gold(qa, where)))
        return examples

    def stratum(self, meta: Mapping[str, Any]) -> str:
        return f"n{meta.get('n')}_{meta.get('sep')}"


class ListReversal(_Synthetic):
    name = "list_reversal"
    instruction = "Reverse the sequence of items."

    def demos(self) -> Sequence[Demo]:
        return (Demo('Reverse the sequence "cup, pen, lamp".', answer="lamp, pen, cup",
                     rationale="The items are: 1 cup, 2 pen, 3 lamp. From last to first: "
                               "3 lamp, 2 pen, 1 cup."),)

    def normalize(self, answer: str) -> str:
        items = [" ".join(s.split()).lower() for s in _strip_answer(answer).split(",")]
        return ", ".join(s for s in items if s)

    def load(self, path: str | Path) -> list[Example]:
        stem = Path(path).stem
        examples = []
        for where, qa in _qa_pairs(path):
            question = require(qa, "question", where)
            gold = _gold(qa, where)
            meta = {"length": len([s for s in gold.split(",") if s.strip()])}
            examples.append(Example(Problem(f"list_reversal-{stem}-{qa.get('query_id', len(examples))}",
                                            question, meta=meta), gold))
        return examples

    def stratum(self, meta: Mapping[str, Any]) -> str:
        return f"len{meta.get('length')}"

"""CommaQA-E (DecomP's iid and compositional-generalization test subsets).

Each record's ``passage`` (the synthetic knowledge base) becomes the
problem's context; answers are lists of entities, scored as sets: ``em`` is
set equality, ``f1`` the F1 of the predicted against the gold set (after
SQuAD normalization of each item).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..core.bounded import loads_json
from ..core.errors import DataError, ParseError
from ..core.types import Demo, Problem
from .base import Example, Task, read_json, require
from .metrics import normalize_text


def answer_items(text: str | list | None) -> list[str]:
    """A JSON array or a comma-separated string as normalized items."""
    if text is None:
        return []
    if isinstance(text, list):
        raw = [str(x) for x in text]
    else:
        t = text.strip()
        raw = None
        if t.startswith("[") and t.endswith("]"):
            try:
                value = loads_json(t)
                raw = [str(x) for x in value] if isinstance(value, list) else None
            except ParseError:
                t = t[1:-1]
        if raw is None:
            raw = t.replace(" and ", ",").split(",")
    return [n for n in (normalize_text(x.strip().strip('"\'')) for x in raw) if n]


class CommaQA(Task):
    name = "commaqa"
    instruction = "Answer the question from the facts. The answer is a list of names."
    primary_metric = "em"
    metrics = ("em", "f1")

    def demos(self) -> Sequence[Demo]:
        return ()

    def extract_answer(self, text: str) -> str | None:
        found = super().extract_answer(text)
        return found

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        p, g = set(answer_items(prediction)), set(answer_items(list(gold)))
        em = float(bool(p) and p == g)
        same = len(p & g)
        f1 = 0.0 if not same else 2 * same / (len(p) + len(g))
        return {"em": em, "f1": round(f1, 6)}

    def load(self, path: str | Path) -> list[Example]:
        data = read_json(path)
        if not isinstance(data, dict):
            raise DataError(f"{path}: expected a DROP-style JSON object")
        split = "compgen" if "compgen" in Path(path).name else "iid"
        examples = []
        for key, block in data.items():
            where = f"{path}: {key}"
            facts = require(block, "passage", where)
            for i, qa in enumerate(require(block, "qa_pairs", where, list)):
                w = f"{where}/{i}"
                spans = require(qa, "answer", w, dict).get("spans")
                if not spans:
                    raise DataError(f"{w}: answer has no spans")
                qid = qa.get("query_id", f"{key}-{i}")
                examples.append(Example(Problem(f"commaqa-{split}-{key}-{qid}", require(qa, "question", w),
                                                context=facts, meta={"split": split, "group": f"{split}/{key}"}),
                                        list(spans)))
        return examples

"""Story outline improvement: make a plain outline more interesting.

The paper's outline data (WhatsThatBook + DOC outlines) and its fine-tuned
Flan-T5 interestingness classifier are not available here. Instead:

- **Input**: user outlines, one item per line (``.txt``: outlines separated
  by blank lines, an optional ``premise: ...`` line, ``#`` comments; or
  ``.jsonl`` with ``outline`` as a list or newline-joined string and an
  optional ``premise``). ``--data seed`` loads five seed outlines we wrote
  ourselves (``tasks/data/outline_seeds.txt``).
- **Metric**: ``Task.score`` can only check form (``well_formed``: at least
  three items; ``changed``: share of items rewritten). Interestingness is
  judged afterwards by a **model judge** (a 1-10 score from an LM, see
  :func:`judge_prompt` / :func:`read_judgement` and
  ``benchmarks/outline_judge.py``). It is a model's opinion, not the paper's
  evaluator, and a small judge model is noisy.

A search candidate is the outline itself, one item per line; the root is the
given outline, evaluated item by item (itemized evaluation).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from ..core.bounded import clip, to_float
from ..core.errors import DataError, ParseError
from ..core.options import TaskSetting
from ..core.types import Problem
from ..core.files import read_utf8
from .base import Example, Task, _must_exist, read_jsonl

# greedy (.+), stripped by the caller: a lazy group before \s*$ backtracks quadratically on blanks
_ITEM = re.compile(r"^\s*(?:\[?\d+[\].):]?|[-*•])\s*(.+)$")


def outline_items(text: str) -> list[str]:
    """Items of an outline: one per non-empty line, list markers removed."""
    items = []
    for line in clip(text).splitlines():
        if not line.strip() or line.strip().endswith(":"):
            continue
        m = _ITEM.match(line)
        items.append((m.group(1) if m else line).strip())
    return [i for i in items if any(ch.isalpha() for ch in i)]  # drop stray brackets, rules


def numbered(items: Sequence[str]) -> str:
    return "\n".join(f"[{i}] {item}" for i, item in enumerate(items, 1))


def parse_outline_blocks(text: str, where: str) -> list[tuple[str, list[str]]]:
    """(premise, items) per blank-line-separated block."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            continue
        premise = ""
        if lines[0].lower().startswith("premise:"):
            premise = lines[0].split(":", 1)[1].strip()
            lines = lines[1:]
        items = outline_items("\n".join(lines))
        if len(items) < 2:
            raise DataError(f"{where}: an outline needs at least two items, one per line")
        out.append((premise, items))
    return out


def judge_prompt(premise: str, outline: str) -> str:
    """The model judge's prompt (our wording): one interestingness score 1-10."""
    head = f"Premise: {premise}\n" if premise else ""
    return (f"You are judging story outlines for how interesting they are to a reader: surprising turns, "
            f"conflict, stakes, vivid characters. Coherence matters too.\n{head}Outline:\n{outline}\n\n"
            'Reply with only a JSON object, score first: {"interestingness": <1-10>, "reason": "<one short sentence>"}')


_JUDGED = re.compile(r'"?(?:interestingness|score|rating)"?\s*:\s*"?(\d+(?:\.\d+)?)', re.IGNORECASE)


def read_judgement(value: Any) -> float | None:
    """The 1-10 score from a parsed reply, or from raw text cut off after it.

    None when there is no finite score (``Infinity``, ``NaN``, 5,000 digits).
    """
    try:
        if isinstance(value, str):
            m = _JUDGED.search(clip(value))
            return _scale(to_float(m.group(1))) if m else None
        if isinstance(value, dict):
            for key in ("interestingness", "score", "rating"):
                v = value.get(key)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    return _scale(to_float(v))
                found = re.search(r"\d+", clip(v)) if isinstance(v, str) else None
                if found:
                    return _scale(to_float(found.group()))
    except ParseError:
        return None
    return None


def _scale(x: float) -> float:
    return float(min(10, max(1, x)))


class OutlineImprovement(Task):
    name = "outline"
    instruction = ("You are a novelist improving a story outline. Make it more interesting to read "
                   "(surprising twists, real conflict, memorable characters) while keeping it coherent, "
                   "about the same number of items, one plot point per item.")
    primary_metric = "well_formed"
    metrics = ("well_formed", "changed")
    search_settings = {
        "k": TaskSetting(3, "ThoughtSculpt §4.1: 'each node will generate a maximum of 3 candidate child "
                            "outlines'"),
        "max_depth": TaskSetting(3, "ThoughtSculpt §4.1: 'Each method is allowed to search or iterate "
                                    "through a maximum depth of 3'"),
        "rollouts": TaskSetting(3, "ThoughtSculpt §4.1: a maximum depth of 3; Fig. 5: 'One step is equal to one "
                                   "d_rollout', so 3 rollouts"),
        "max_steps": TaskSetting(3, "ThoughtSculpt §4.1: a maximum depth of 3 (ToT-DFS: 3 expansions; Table 4: "
                                    "ToT costs about what DFS does)"),
        "iterations": TaskSetting(3, "ThoughtSculpt §4.1: 'search or iterate through a maximum depth of 3'"),
    }
    whole_thoughts = True  # a ToT thought is a whole new outline (ThoughtSculpt Table 1's ToT rewrites outlines)
    child_per_feedback_item = True  # §4.1: "Based on each itemized feedback, a child node will be proposed"
    cot_answer_format = ('write "Outline:" on a line of its own, then the improved outline, one item per line, '
                         "numbered [1], [2], ...")

    def extract_answer(self, text: str) -> str | None:
        """The items after the last "Outline:" line (a chain of thought's end), else every item."""
        # [ \t]*, not \s*: with MULTILINE, \s* runs across newlines from every line start (quadratic)
        parts = re.split(r"^[ \t]*\**outline\**[ \t]*:[ \t]*$", clip(text), flags=re.IGNORECASE | re.MULTILINE)
        items = outline_items(parts[-1])
        return "\n".join(items) if items else None

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        items = outline_items(prediction or "")
        original = gold.get("items", []) if isinstance(gold, dict) else []
        changed = sum(1 for i in items if i not in original) / len(items) if items else 0.0
        return {"well_formed": float(len(items) >= 3), "changed": round(changed, 6)}

    def load(self, path: str | Path) -> list[Example]:
        if str(path) in ("seed", "seeds"):
            text = resources.files("thoughtloom.tasks").joinpath("data/outline_seeds.txt").read_text("utf-8")
            blocks = parse_outline_blocks(text, "outline_seeds.txt")
        elif str(path).endswith(".jsonl"):
            blocks = []
            for lineno, rec in read_jsonl(path):
                raw = rec.get("outline")
                if isinstance(raw, list):
                    raw = "\n".join(str(x) for x in raw)
                if not isinstance(raw, str) or len(outline_items(raw)) < 2:
                    raise DataError(f"{path}:{lineno}: field 'outline' needs at least two items")
                blocks.append((str(rec.get("premise", "")), outline_items(raw)))
        else:
            p = Path(path)
            _must_exist(p)
            blocks = parse_outline_blocks(read_utf8(p), str(p))
        examples = []
        for i, (premise, items) in enumerate(blocks):
            problem = Problem(id=f"outline-{i}", question="\n".join(items), context=premise)
            examples.append(Example(problem, {"premise": premise, "items": items}))
        return examples

    # -- SearchTask ----------------------------------------------------------

    def describe(self, problem: Problem) -> str:
        premise = f"\nPremise: {problem.context}" if problem.context else ""
        return f"{self.instruction}{premise}"

    def root_candidate(self, problem: Problem) -> str | None:
        return "\n".join(outline_items(problem.question))

    def render(self, problem: Problem, candidate: str) -> str:
        return numbered(outline_items(candidate))

    def output_format(self, problem: Problem) -> str:
        return "Write the whole outline, one item per line, numbered [1], [2], ... and nothing else."

    def parse_candidate(self, problem: Problem, text: str, parent: str | None) -> str | None:
        items = outline_items(text)
        return "\n".join(items) if len(items) >= 3 else None

    def evaluation_items(self, problem: Problem, candidate: str) -> Sequence[str]:
        return [f"[{i}] {item}" for i, item in enumerate(outline_items(candidate), 1)]

    def evaluation_guide(self, problem: Problem) -> str:
        return ("Judge how interesting each item is (1-10 scale read as 0-10 here): does it add surprise, "
                "conflict or character, or is it predictable, repetitive or flat? Say how to improve weak items.")

    def change_kind(self, parent: str, child: str) -> str:
        p, c = outline_items(parent), outline_items(child)
        return "extended" if c[: len(p)] == p and len(c) > len(p) else "revised"

    def symbolic_score(self, problem: Problem, candidate: str) -> float | None:
        return None

    def candidate_answer(self, problem: Problem, candidate: str) -> str:
        return candidate

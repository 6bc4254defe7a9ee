"""Story outline improvement: make a plain outline more interesting.

The paper's outline data (WhatsThatBook + DOC outlines) and its fine-tuned
Flan-T5 interestingness classifier are not available here. Instead:

- **Input**: user outlines, one item per line (``.txt``: outlines separated
  by blank lines, an optional ``premise: ...`` line, ``#`` comments; or
  ``.jsonl`` with ``outline`` as a list or newline-joined string and an
  optional ``premise``). ``--data seed`` loads eight seed outlines we wrote
  ourselves (``tasks/data/samples/outline/outlines.txt``, the packaged set).
- **Metric**: ``interesting``, from a **model judge** (:mod:`thoughtloom.eval.judge`):
  App. A.1's content-evaluator prompt, "Given the story outlines above, do you
  think that the new story point below is interesting?", asked of an LM for
  each story point, yes or no; an outline scores the share judged interesting
  (the paper's fine-tuned Flan-T5 rates interesting 1, boring 0). It is a
  model's opinion, not the paper's classifier, and a small judge is noisy.
  ``Task.score`` adds the symbolic checks ``well_formed``, ``changed`` and
  ``kept_length``.

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


JUDGE_QUESTION = "Given the story outlines above, do you think that the new story point below is interesting?"


def judge_prompts(premise: str, items: Sequence[str]) -> list[str]:
    """The model judge's prompts for one outline, one per story point: ThoughtSculpt App. A.1's
    content-evaluator PROMPT (quoted) with the outline's earlier items above it and the point
    below, answered yes or no (the paper's Flan-T5 rates interesting 1, boring 0)."""
    head = f"Premise: {premise}\n" if premise else ""
    out = []
    for i, item in enumerate(items):
        above = numbered(items[:i]) if i else "(the story starts here)"
        out.append(f"{head}{above}\n\n{JUDGE_QUESTION}\n[{i + 1}] {item}\n\n"
                   'Reply with only a JSON object: {"interesting": "<yes or no>"}')
    return out


JUDGE_SCHEMA = {"type": "object", "required": ["interesting"], "additionalProperties": False,
                "properties": {"interesting": {"enum": ["yes", "no"]}}}

_VERDICT = re.compile(r'"?interesting"?\s*:\s*"?\s*(yes|no|true|false|1|0)\b', re.IGNORECASE)


def read_judge_reply(text: Any) -> bool | None:
    """One story point's verdict from a judge reply: True (interesting), False, or None when it
    says neither (a reply is model text: anything may come back)."""
    if not isinstance(text, str):
        return None
    m = _VERDICT.search(clip(text, 2000))
    if m:
        return m.group(1).lower() in ("yes", "true", "1")
    words = re.findall(r"[a-z]+", clip(text, 200).lower())
    if words[:1] in (["yes"], ["no"]):
        return words[0] == "yes"
    return None


class OutlineImprovement(Task):
    name = "outline"
    # ThoughtSculpt App. A.1's TASK_DESCRIPTION, quoted (the paper's prompt is the mechanism)
    instruction = ("You are a popular novel writer. You are now making an interesting outline for the story. "
                   "You know how to engage with the readers by not limited to introducing interesting "
                   "characters and unexpected twist. You also know how to make the story outline coherent "
                   "and consistent.")
    evaluation_style = "spans"  # App. A.1's EVALUATE_CURRENT_ITEMIZED: least interesting spans, levels 1-10
    primary_metric = "interesting"
    metrics = ("interesting", "well_formed", "changed", "kept_length")
    judged_metrics = ("interesting",)  # the model judge's (eval.judge), per step in details["judge"]
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
        """The symbolic checks of an outline (``interesting`` is the model judge's, eval.judge):
        ``well_formed`` (at least three items), ``changed`` (share of items rewritten) and
        ``kept_length`` (min/max of the item counts: App. A.1 asks for the outline "just like the
        original outline from [1] to [num]", so a rewrite that drops or pads items scores lower)."""
        items = outline_items(prediction or "")
        original = gold.get("items", []) if isinstance(gold, dict) else []
        changed = sum(1 for i in items if i not in original) / len(items) if items else 0.0
        kept = min(len(items), len(original)) / max(len(items), len(original)) if items and original else 0.0
        return {"well_formed": float(len(items) >= 3), "changed": round(changed, 6), "kept_length": round(kept, 6)}

    def judge_prompts(self, gold: Any, outline: str) -> list[str]:
        premise = gold.get("premise", "") if isinstance(gold, dict) else ""
        return judge_prompts(str(premise), outline_items(outline))

    judge_schema = JUDGE_SCHEMA

    def read_judge(self, replies: Sequence[str]) -> float | None:
        """An outline's interestingness: the share of its story points judged interesting (the
        replies it could read); None if it could read none."""
        verdicts = [v for v in map(read_judge_reply, replies) if v is not None]
        return sum(verdicts) / len(verdicts) if verdicts else None

    def load(self, path: str | Path) -> list[Example]:
        if str(path) in ("seed", "seeds"):
            text = resources.files("thoughtloom.tasks").joinpath("data/samples/outline/outlines.txt").read_text("utf-8")
            blocks = parse_outline_blocks(text, "outlines.txt")
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
        """App. A.1's NEW_CANDIDATE request (wrapped: "and nothing else", so a chat model writes no preface)."""
        n = len(outline_items(problem.question))
        return ("Based on the feedback and the task description, can you make a better story outline by "
                "replacing the items suggested by the feedback? Write the outline in this format just like "
                f"the original outline from [1] to [{n}]: [1] ... [2] ... one item per line, and nothing else.")

    def parse_candidate(self, problem: Problem, text: str, parent: str | None) -> str | None:
        items = outline_items(text)
        return "\n".join(items) if len(items) >= 3 else None

    def evaluation_items(self, problem: Problem, candidate: str) -> Sequence[str]:
        return [f"[{i}] {item}" for i, item in enumerate(outline_items(candidate), 1)]

    def evaluation_guide(self, problem: Problem) -> str:
        return ("Judge how interesting the items are: does each add surprise, conflict or character, or is it "
                "predictable, repetitive or flat? Say how to improve weak items.")

    def change_kind(self, parent: str, child: str) -> str:
        p, c = outline_items(parent), outline_items(child)
        return "extended" if c[: len(p)] == p and len(c) > len(p) else "revised"

    def symbolic_score(self, problem: Problem, candidate: str) -> float | None:
        return None

    def candidate_answer(self, problem: Problem, candidate: str) -> str:
        return candidate

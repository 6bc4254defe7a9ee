"""CommonGen-Hard: one sentence (or a few) that uses all 20-30 given concepts.

Data: ``commongen_hard.jsonl`` (``{"concepts": [...]}`` per line). A
problem's question is the comma-separated concepts.

Metric ``coverage``: the share of concepts present in the output in any
inflection. Matching lemmatizes both the concept and every word of the
output with ``simplemma`` (a pure-Python lemmatizer whose English data ships
inside its PyPI package, so it works offline) and also accepts the exact
surface form, so "dunked" covers "dunk" and "children" covers "child".
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from ..core.options import TaskSetting
from ..core.types import Demo, Problem
from .base import Example, Task, read_jsonl, require
from .metrics import normalize_text

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")

_DEMOS = (
    Demo(question="dog, frisbee, catch, throw",
         answer="The boy throws a frisbee and his dog leaps to catch it."),
    Demo(question="kitchen, cut, onion, cry, knife",
         answer="In the kitchen she cuts an onion with a sharp knife and starts to cry."),
)


@lru_cache(maxsize=50_000)
def lemma(word: str) -> str:
    import simplemma  # imported here so `import thoughtloom` stays light

    w = word.lower()
    return simplemma.lemmatize(w, lang="en").lower()


def _forms(word: str) -> set[str]:
    w = word.lower()
    return {w, lemma(w)}


def covered_concepts(text: str | None, concepts: Sequence[str]) -> list[str]:
    words = set()
    for w in _WORD.findall(text or ""):
        words |= _forms(w)
    out = []
    for concept in concepts:
        parts = concept.lower().split()
        if all(_forms(p) & words for p in parts):
            out.append(concept)
    return out


def coverage(text: str | None, concepts: Sequence[str]) -> float:
    return len(covered_concepts(text, concepts)) / len(concepts) if concepts else 0.0


def concepts_of(question: str) -> list[str]:
    return [c.strip() for c in question.split(",") if c.strip()]


class CommonGenHard(Task):
    name = "commongen"
    instruction = ("Write one short, natural sentence (or two at most) describing an everyday scene that uses "
                   "ALL of the given concepts (any inflection, e.g. 'dogs' for 'dog', 'threw' for 'throw').")
    primary_metric = "coverage"
    evaluation_style = "verdict"  # App. A.3: "[No need to improve/still need to improve] [reason]"
    search_settings = {
        "k": TaskSetting(3, "ThoughtSculpt §4.3: 'both ThoughtSculpt and ToT will generate a maximum of 3 "
                            "child candidates'"),
        "max_depth": TaskSetting(3, "ThoughtSculpt §4.3: 'We set a maximum depth of 3 for this task'"),
        "rollouts": TaskSetting(3, "ThoughtSculpt §4.3: a maximum depth of 3; Fig. 5: 'One step is equal to one "
                                   "d_rollout', so 3 rollouts"),
        "max_steps": TaskSetting(3, "ThoughtSculpt §4.3: a maximum depth of 3 (ToT-DFS: 3 expansions; Table 6: "
                                    "ToT costs about what DFS does)"),
        "iterations": TaskSetting(3, "ThoughtSculpt §4.3: a maximum depth of 3 (Self-Refine: 3 rewrites)"),
    }

    def demos(self) -> Sequence[Demo]:
        return _DEMOS

    def extract_answer(self, text: str) -> str | None:
        found = re.findall(r"(?:answer is|sentence)\s*:\s*(.+)", text, re.IGNORECASE)
        if found:
            return found[-1].strip().strip('"') or None
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        return lines[-1].strip('"') if lines else None

    def normalize(self, answer: str) -> str:
        return normalize_text(answer)

    def score(self, prediction: str | None, gold: Any) -> dict[str, float]:
        return {"coverage": coverage(prediction, gold)}

    def load(self, path: str | Path) -> list[Example]:
        examples = []
        for lineno, rec in read_jsonl(path):
            concepts = require(rec, "concepts", f"{path}:{lineno}", list)
            question = ", ".join(str(c) for c in concepts)
            examples.append(Example(Problem(id=f"commongen-{len(examples)}", question=question),
                                    [str(c) for c in concepts]))
        return examples

    # -- SearchTask ----------------------------------------------------------

    def describe(self, problem: Problem) -> str:
        return f"{self.instruction}\nConcepts: {problem.question}"

    def root_candidate(self, problem: Problem) -> str | None:
        return None

    def render(self, problem: Problem, candidate: str) -> str:
        return candidate

    def output_format(self, problem: Problem) -> str:
        return 'Write only the text on one line, starting with "Sentence:".'

    def parse_candidate(self, problem: Problem, text: str, parent: str | None) -> str | None:
        found = re.findall(r"sentence\s*:\s*(.+)", text, re.IGNORECASE)
        if found:
            out = found[-1]
        else:
            lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().endswith(":")]
            out = max(lines, key=len) if lines else ""
        out = out.strip().strip('"*').strip()
        return out or None

    def evaluation_items(self, problem: Problem, candidate: str) -> Sequence[str]:
        return ()

    def evaluation_guide(self, problem: Problem) -> str:
        return ("Go through the concepts one by one: the sentence must 1) use every concept listed and 2) "
                "describe a common scene in daily life. Name every concept that is missing or used in an "
                "unnatural way, and say how to fit them in.")

    def change_kind(self, parent: str, child: str) -> str:
        p, c = " ".join(parent.split()), " ".join(child.split())
        return "extended" if c.startswith(p.rstrip(".")) else "revised"

    def symbolic_score(self, problem: Problem, candidate: str) -> float | None:
        return coverage(candidate, concepts_of(problem.question))

    def candidate_answer(self, problem: Problem, candidate: str) -> str:
        return candidate

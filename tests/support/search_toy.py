"""A toy search task and a scripted "model" for the tree-search tests
(treesearch, sculpt, and the ToT / Self-Refine baselines); a helper module,
not a conftest: the repo keeps a single conftest.py.

Candidates are strings of letters. The toy model's first answer is "a"; a
generation request for candidate X returns "CAND: X<letter>" with the letter
chosen by the request's sample index ("a", "b", "c" in turn), unless the
test supplies its own generator; evaluations return the score in the test's
table (0-10) with feedback naming the candidate.
"""

from __future__ import annotations

import json
import re
from typing import Callable

from thoughtloom.core.trace import Trace
from thoughtloom.core.types import Problem
from thoughtloom.lm.meter import Budget, Metered
from thoughtloom.strategies.context import Context
from thoughtloom.strategies.treesearch.world import prefix_change_kind
from thoughtloom.tasks import Task
from thoughtloom.testing import ScriptedLM


class ToyTask(Task):
    """A search task of letters; a Task, as every task is, for the members a search reads (its
    tree-search attributes, all at their defaults)."""

    name = "toy"
    instruction = "Build the best string."

    def __init__(self, root: str | None = None, symbolic: dict[str, float] | None = None) -> None:
        self.root = root
        self.symbolic = symbolic or {}

    def demos(self):
        return ()

    def extract_answer(self, text):
        return text

    def normalize(self, answer):
        return answer

    def describe(self, problem):
        return f"TOY TASK {problem.question}"

    def root_candidate(self, problem):
        return self.root

    def render(self, problem, candidate):
        return candidate

    def output_format(self, problem):
        return "Write CAND: <string>."

    def parse_candidate(self, problem, text, parent):
        m = re.search(r"CAND:\s*(\S+)", text)
        return m.group(1) if m else None

    def evaluation_items(self, problem, candidate):
        return ()

    def evaluation_guide(self, problem):
        return "GUIDE"

    def change_kind(self, parent, child):
        return prefix_change_kind(parent, child)

    def symbolic_score(self, problem, candidate):
        return self.symbolic.get(candidate)

    def candidate_answer(self, problem, candidate):
        return candidate


def current(prompt: str) -> str:
    return prompt.split("Current solution:\n", 1)[1].split("\n", 1)[0].strip()


def make_lm(scores: dict[str, float], default: float = 5.0,
            child: Callable[[str, int], str] | None = None,
            propose: Callable[[str, int], str] | None = None) -> ScriptedLM:
    """Evaluations score from ``scores``; a revision (ThoughtSculpt) or a ToT
    sample of X is ``child(X, sample_index)``, else X plus a letter; a ToT
    proposal request for n thoughts from X is ``propose(X, n)``, else n lines
    "CAND: X<letter>" (letters a, b, c, ...)."""
    def brain(req):
        text = req.messages[0].content
        if "JSON object" in text:
            cand = current(text)
            return json.dumps({"feedback": f"feedback on {cand}", "score": scores.get(cand, default)})
        if "different possible next steps" in text:  # ToT's propose prompt
            cand = current(text).replace("(empty)", "")
            n = int(re.search(r"Propose (\d+)", text).group(1))
            if propose is not None:
                return propose(cand, n)
            return "\n".join(f"CAND: {cand}{letter}" for letter in "abcdefghij"[:n])
        if "Current solution:" in text:  # a revision, or a ToT sample
            cand = current(text).replace("(empty)", "")
            if child is not None:
                return child(cand, req.sample_index)
            return f"CAND: {cand}{'abc'[req.sample_index % 3]}"
        return "CAND: a"

    return ScriptedLM(brain)


def make_ctx(lm, task=None, max_calls=None, seed=0):
    trace = Trace()
    metered = Metered(lm, budget=Budget(max_calls=max_calls), trace=trace)
    return Context(lm=metered, task=task or ToyTask(), trace=trace, seed=seed)


PROBLEM = Problem(id="toy-1", question="q")



"""A question of the hierarchy: its answer so far, its pool of scored passages, its plan and steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.types import ScoredPassage
from . import plan as planmod
from ..vote import Vote


@dataclass
class QuestionNode:
    question: str
    depth: int
    answer: str = ""
    confidence: float = 0.0
    pool: list[ScoredPassage] = field(default_factory=list)
    plan: planmod.Plan | None = None
    children: list["QuestionNode"] = field(default_factory=list)
    stop: str = ""
    original: str | None = None  # the step text before it was rewritten
    rationale: str = ""  # a rationale behind the selected answer
    unweighted: bool = False  # the answer is a plain vote of thoughts not yet weighed (see hold)
    id: str = "1"  # its place in the hierarchy: "1" the root, "1.2" step 2 of the root's plan
    shown: tuple[str, ...] = ()  # the passages the Infer behind its answer showed, [1] first

    def step(self, number: int) -> str:
        """The id of the question that step ``number`` of this node's plan becomes."""
        return f"{self.id}.{number}"

    def hold(self, vote: Vote, rationale: str) -> None:
        """Until the node has an answer: its thoughts' plain vote, before the judge weighs them
        by citation quality, so a budget stop during the judging still answers with them."""
        if not self.answer and vote.winner:
            self.answer, self.confidence, self.rationale = vote.winner, vote.confidence, rationale
            self.unweighted = True

    def settle(self, answer: str, confidence: float, rationale: str) -> None:
        """The node's answer after an Infer finished (weighed, voted)."""
        self.answer, self.confidence, self.rationale, self.unweighted = answer, confidence, rationale, False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "question": self.question, "original": self.original, "depth": self.depth,
            "answer": self.answer, "rationale": self.rationale, "confidence": round(self.confidence, 4), "stop": self.stop,
            "plan": None if self.plan is None else {"steps": list(self.plan.steps),
                                                    "edges": [list(e) for e in self.plan.edges]},
            "passages": [{"id": s.passage.id, "title": s.passage.title, "score": round(s.score, 4)}
                         for s in self.pool],
            "children": [c.to_dict() for c in self.children],
        }

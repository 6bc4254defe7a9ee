"""Plan: the LLM lists standalone search questions and their dependencies.

The model answers in this shape (prompt ``hgot_plan``)::

    Step 1: Who directed Jaws?
    Step 2: When was the director in Step 1 born?
    Dependencies: Step 1 -> Step 2

``Dependencies: None`` means the steps are independent. "Step 2 depends on
Step 1" is read as ``Step 1 -> Step 2`` too. A plan becomes a networkx
``DiGraph`` whose edge u -> v means step v needs step u's answer. A step may
depend only on lower-numbered steps; a forward reference, a cycle, an edge
to an unknown step or a reply with no steps raises :class:`PlanError`,
which the caller turns into a traced ``malformed`` event (``what:
hgot_plan``), a bounded re-ask, and finally a single-step fallback plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import networkx as nx

from ...core.bounded import clip
from ...core.errors import ParseError
from ...core.types import Request
from ...tasks.metrics import token_f1
from ..base import Context
from ..passages import numbered

# [\s*]* and a greedy (.+) (stripped after): adjacent optional runs and a lazy group before
# \s*$ backtrack quadratically on a long line of blanks (issue 11).
_STEP = re.compile(r"^[\s*]*step\s*(\d{1,6})[\s*]*[:.)\-]\s*(.+)$", re.IGNORECASE)
_ARROW = re.compile(r"step\s*(\d{1,6})\s*(?:->|→|=>)\s*step\s*(\d{1,6})", re.IGNORECASE)
_DEPENDS = re.compile(r"step\s*(\d{1,6})\s+depends\s+on\s+(?:the\s+answer\s+(?:from|to|of)\s+)?step\s*(\d{1,6})",
                      re.IGNORECASE)
_DEP_LINE = re.compile(r"^\s*dependenc(?:y|ies)\s*:", re.IGNORECASE)


class PlanError(ParseError, ValueError):
    """The plan text cannot be used; the message says why (for the re-ask)."""


@dataclass(frozen=True)
class Plan:
    steps: tuple[str, ...]  # step i+1's question
    edges: tuple[tuple[int, int], ...]  # (u, v): step v depends on step u, 1-based

    def graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_nodes_from(range(1, len(self.steps) + 1))
        g.add_edges_from(self.edges)
        return g

    def levels(self) -> list[list[int]]:
        """Topological generations: the steps of one level are independent."""
        return [sorted(gen) for gen in nx.topological_generations(self.graph())]

    def parents(self, step: int) -> list[int]:
        return sorted(u for u, v in self.edges if v == step)


def parse_plan(text: str, *, max_steps: int = 5) -> Plan:
    """Read steps and dependencies; raise PlanError on anything unusable.

    Steps must be numbered 1..n in order (duplicates or gaps are errors, so a
    dependency always names the step the model meant). More than
    ``max_steps`` steps is an error too: a long list is rarely a plan. Step
    numbers have at most 6 digits and a reply is read up to ``MAX_PARSE_CHARS``.
    """
    steps: dict[int, str] = {}
    order: list[int] = []
    edges: list[tuple[int, int]] = []
    for line in clip(text).splitlines():
        if _DEP_LINE.match(line) or "->" in line or "depends on" in line.lower():
            for a, b in _ARROW.findall(line):
                edges.append((int(a), int(b)))
            for v, u in _DEPENDS.findall(line):
                edges.append((int(u), int(v)))
            continue
        m = _STEP.match(line)
        if m:
            num, question = int(m.group(1)), m.group(2).strip()
            if num in steps:
                raise PlanError(f"step {num} is listed twice")
            steps[num] = question
            order.append(num)
    if not steps:
        raise PlanError("no 'Step N: question' lines found")
    if order != list(range(1, len(order) + 1)):
        raise PlanError(f"steps must be numbered 1..{len(order)} in order, got {order}")
    if len(steps) > max_steps:
        raise PlanError(f"{len(steps)} steps; use at most {max_steps}")
    unique: list[tuple[int, int]] = []
    for u, v in edges:
        if u not in steps or v not in steps:
            raise PlanError(f"dependency Step {u} -> Step {v} names a step that does not exist")
        if u == v:
            raise PlanError(f"Step {u} cannot depend on itself")
        if (u, v) not in unique:
            unique.append((u, v))
    plan = Plan(tuple(steps[i] for i in range(1, len(steps) + 1)), tuple(unique))
    g = plan.graph()
    if not nx.is_directed_acyclic_graph(g):
        cycle = nx.find_cycle(g)
        raise PlanError("dependencies form a cycle: " + " -> ".join(f"Step {u}" for u, _ in cycle))
    forward = [(u, v) for u, v in unique if u > v]
    if forward:
        u, v = forward[0]
        raise PlanError(f"Step {v} depends on a later step (Step {u}); a step may depend only on earlier steps")
    return plan


def single_step(question: str) -> Plan:
    """The fallback plan: the question itself, one step."""
    return Plan((question,), ())


def resemblance(question: str, step: str) -> float:
    """How closely a step restates its question: SQuAD token F1 of the two.

    Both are lower-cased, stripped of punctuation and articles, and compared
    as bags of words (order-free), so "Who wrote Dune?" and "Who is the
    author that wrote Dune?" score 0.8 while a real sub-question that shares
    a few entity words scores far lower. The authors compared BERT sentence
    embeddings instead; a lexical score needs no model and is reproducible.
    """
    return token_f1(step, question)


def closely_resembles(question: str, plan: Plan, threshold: float) -> bool:
    """The recursion stop rule: a single-step plan whose step's resemblance
    to the question it was planned for is at least ``threshold`` (0.7 by
    default) means planning found nothing to divide."""
    return len(plan.steps) == 1 and resemblance(question, plan.steps[0]) >= threshold


def plan_request(ctx: Context, question: str, passages: Sequence[str], demos: str, *,
                 max_tokens: int, max_steps: int, feedback: str = "") -> Request:
    context = numbered(passages, empty="(none)")
    prompt = ctx.prompt("hgot_plan", demos=demos, context=context, question=question,
                        max_steps=max_steps, feedback=feedback)
    return Request.of(prompt, max_tokens=max_tokens, seed=ctx.seed, stop=("\nQuestion:",))


_REWRITE_LINE = re.compile(r"^\s*(?:rewrite|rewritten question|question)\s*:\s*(.+)$", re.IGNORECASE)


def rewrite_request(ctx: Context, step: str, known: Sequence[tuple[str, str]], demos: str, *,
                    max_tokens: int) -> Request:
    """Ask to turn a dependent step into a standalone question using ONLY the
    answers of the steps it depends on (``known``: (question, answer))."""
    facts = "\n".join(f"- {q} ANSWER: {a}" for q, a in known)
    prompt = ctx.prompt("hgot_rewrite", demos=demos, facts=facts, step=step)
    return Request.of(prompt, max_tokens=max_tokens, seed=ctx.seed, stop=("\n\n",))


def parse_rewrite(text: str) -> str | None:
    """The rewritten question, or None if the reply has none."""
    for line in text.splitlines():
        m = _REWRITE_LINE.match(line)
        candidate = (m.group(1) if m else line).strip().strip('"')
        candidate = re.sub(r"^step\s*\d+\s*[:.]\s*", "", candidate, flags=re.IGNORECASE)
        if len(candidate.split()) >= 2:
            return candidate
    return None


def fallback_rewrite(step: str, known: Sequence[tuple[str, str]]) -> str:
    """Used when the model's rewrite is unusable: the step plus the facts."""
    facts = "; ".join(f"{q.rstrip('?')}: {a}" for q, a in known)
    return f"{step} (given: {facts})" if facts else step

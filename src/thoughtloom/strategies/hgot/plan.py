"""Plan: the LLM lists standalone search questions and their dependencies.

The model answers in this shape (prompt ``hgot_plan``)::

    Step 1: Who directed Jaws?
    Step 2: When was the director in Step 1 born?
    Dependencies: Step 1 -> Step 2

Dependencies are read by :mod:`.deps` in any notation the model writes
(chains, groups, "Steps 1 and 2", "depends on (the answers from) ..."),
from the Dependencies line, any other line, and a remark on a step line
(``Step 2: When was he born? (depends on Step 1)``, which stays a step). A
step that names another ("the director in Step 1") depends on it. A plan
becomes a networkx ``DiGraph`` whose edge u -> v means step v needs step
u's answer; it is searched in topological order, so an edge to a
lower-numbered step is kept when it makes no cycle (as the authors' code
does). A cycle is broken by dropping the fewest edges
(:func:`.deps.break_cycles`); an edge naming a step that does not exist is
dropped too (both kept in :attr:`Plan.dropped` / :attr:`Plan.unknown` and
traced on the ``plan`` event). A reply with no steps, steps not numbered
1..n or more than ``max_steps`` steps (0: no cap but the safety bound
:data:`MAX_PLAN_STEPS`) raises :class:`PlanError`, which the
caller turns into a traced ``malformed`` event (``what: hgot_plan``), a
bounded re-ask, and finally a single-step fallback plan.

With ``plan_stages=3`` planning takes the paper's three calls (appendix
C.1-C.3, :func:`.stages.ask_plan`): the plan, a self-reflection that describes the
steps' dependencies, and a formalization that writes the descriptions in
the arrow notation; the steps come from the first, the edges from the last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import networkx as nx

from ...core.bounded import clip
from ...core.errors import ParseError
from ...core.types import Request
from ..context import Context
from ..passages import numbered
from . import deps

# [\s*]* and a greedy (.+) (stripped after): adjacent optional runs and a lazy group before
# \s*$ backtrack quadratically on a long line of blanks (issue 11). The separator is not the
# "-" of an arrow, so "Step 1 -> Step 2" is not a step.
_STEP = re.compile(r"^[\s*]*step\s*(\d{1,6})[\s*]*(?:[:.)]|-(?!-*>))\s*(.+)$", re.IGNORECASE)
_DEP_LINE = re.compile(r"^[\s*]*dependenc(?:y|ies)[\s*]*:", re.IGNORECASE)
# a step written mid-line ("Plan: Step 1: ... Step 2: ...") starts a line of its own
_INLINE_STEP = re.compile(r"(?<=\S)[ \t]+(?=step\s*\d{1,6}\s*:)", re.IGNORECASE)
# a dependency remark on a step line: "(depends on Step 1)", "[Dependency: Step 1]", "- uses Step 1"
_VERB = r"(?:this\s+step\s+)?(?:depend|dependenc|dependent|rel(?:y|ies)|requir|need|us(?:es|ing)\b|based\s+on|builds?\s+on)"
_REMARK = re.compile(r"(?:[(\[]\s*(" + _VERB + r"[^)\]]*)[)\]]|\s[-\u2013\u2014;,]\s*(" + _VERB + r".*))\s*$",
                     re.IGNORECASE)


_REMARK_CHARS = 300  # a remark ends its line: look for one only in the last characters


class PlanError(ParseError, ValueError):
    """The plan text cannot be used; the message says why (for the re-ask)."""


@dataclass(frozen=True)
class Plan:
    steps: tuple[str, ...]  # step i+1's question
    edges: tuple[tuple[int, int], ...]  # (u, v): step v depends on step u, 1-based
    dropped: tuple[tuple[int, int], ...] = ()  # edges dropped to break a cycle
    unknown: tuple[tuple[int, int], ...] = ()  # edges naming a step the plan does not have

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


@dataclass
class _Lines:
    """What the lines of a reply hold, as they are read."""

    steps: dict[int, str] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)


def _read_lines(text: str) -> _Lines:
    out = _Lines()
    in_deps = False
    for line in _INLINE_STEP.sub("\n", clip(text)).splitlines():
        m = _STEP.match(line)
        if m is None or _DEP_LINE.match(line):
            in_deps = in_deps or bool(_DEP_LINE.match(line))
            out.edges.extend(deps.read_edges(line))
            continue
        num, question = int(m.group(1)), m.group(2).strip()
        if in_deps and "?" not in question and (deps.mentions(question) or question.lower().startswith("none")):
            # "Step 3: Step 1, Step 2" under a Dependencies line: what step 3 depends on
            out.edges.extend(deps.read_edges(f"Step {num} depends on {question}"))
            continue
        remark = _REMARK.search(question, max(0, len(question) - _REMARK_CHARS))
        said = remark and (remark.group(1) or remark.group(2))
        if said and deps.mentions(said):  # ", based on the novel?" names no step: part of the question
            question = question[: remark.start()].strip()
            out.edges.extend(deps.read_edges(f"Step {num} {said}"))
        if not question:
            continue
        if num in out.steps:
            raise PlanError(f"step {num} is listed twice")
        out.steps[num] = question
        out.order.append(num)
        out.edges.extend((u, num) for u in deps.mentions(question))
    return out


#: The safety bound on a plan's steps when ``max_steps`` is 0 (no cap, as the paper's C.1 sets
#: none): a longer list is no plan but a runaway reply; each step is a sub-search, so a
#: plan of this many steps already costs far more than the run's call budget allows.
MAX_PLAN_STEPS = 16


def step_cap(max_steps: int) -> int:
    """The most steps a plan may hold: ``max_steps``, or the safety bound when it is 0 (no cap)."""
    return max_steps if max_steps > 0 else MAX_PLAN_STEPS


def parse_plan(text: str, *, max_steps: int = 5, dependencies: str | None = None) -> Plan:
    """Read steps and dependencies; raise PlanError when there is no usable list of steps.

    Steps must be numbered 1..n in order (duplicates or gaps are errors, so a
    dependency always names the step the model meant). More than
    ``max_steps`` steps is an error too (0: only above :data:`MAX_PLAN_STEPS`). Step
    numbers have at most 6 digits and a reply is read up to ``MAX_PARSE_CHARS``.
    ``dependencies``, when given (the formalization's reply), replaces the
    dependencies written in ``text``; steps that name other steps still depend on them.
    """
    lines = _read_lines(text)
    steps, order = lines.steps, lines.order
    if not steps:
        raise PlanError("no 'Step N: question' lines found")
    if order != list(range(1, len(order) + 1)):
        raise PlanError(f"steps must be numbered 1..{len(order)} in order, got {order}")
    if len(steps) > step_cap(max_steps):
        raise PlanError(f"{len(steps)} steps; use at most {step_cap(max_steps)}")
    written = lines.edges
    if dependencies is not None:
        named = [(u, v) for v, q in steps.items() for u in deps.mentions(q)]
        written = deps.read_edges(dependencies) + named
    unique = list(dict.fromkeys(written))
    unknown = [e for e in unique if e[0] not in steps or e[1] not in steps]
    known = [e for e in unique if e not in unknown]
    kept, dropped = known, []
    g = nx.DiGraph(known)
    if any(u == v for u, v in known) or not nx.is_directed_acyclic_graph(g):
        kept, dropped = deps.break_cycles(sorted(steps), known)
    return Plan(tuple(steps[i] for i in range(1, len(steps) + 1)), tuple(kept), tuple(dropped), tuple(unknown))


def single_step(question: str) -> Plan:
    """The fallback plan: the question itself, one step."""
    return Plan((question,), ())


def plan_request(ctx: Context, question: str, passages: Sequence[str], demos: str, *,
                 max_tokens: int, max_steps: int, feedback: str = "") -> Request:
    context = numbered(passages, empty="(none)")
    rule = "If the question needs only one fact, write one step."
    if max_steps > 0:
        rule = f"Use at most {max_steps} steps; if the question needs only one fact, write one step."
    prompt = ctx.prompt("hgot_plan", demos=demos, context=context, question=question,
                        max_steps=step_cap(max_steps), step_rule=rule, feedback=feedback)
    return Request.of(prompt, max_tokens=max_tokens, seed=ctx.seed, stop=("\nQuestion:",))


_REWRITE_LINE = re.compile(r"^\s*(?:rewrite|rewritten question|question)\s*:\s*(.+)$", re.IGNORECASE)


#: What a dependent step is rewritten from: (step number, its question, its answer) per parent.
Known = tuple[int, str, str]


def rewrite_request(ctx: Context, step: str, known: Sequence[Known], demos: str, *,
                    max_tokens: int) -> Request:
    """Ask to turn a dependent step into a standalone question using ONLY the
    answers of the steps it depends on, each labelled by its step number (as
    in the authors' rewrite context, "Step 1: ... ANSWER: ...") so that the
    step's "Step 1" can be resolved."""
    facts = "\n".join(f"- Step {u}: {q} ANSWER: {a}" for u, q, a in known)
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


def fallback_rewrite(step: str, known: Sequence[Known]) -> str:
    """Used when the model's rewrite is unusable: the step with its references to
    earlier steps replaced by their answers, else the step plus the facts."""
    resolved = resolve_references(step, {u: a for u, _, a in known})
    if resolved != step or not known:
        return resolved
    facts = "; ".join(f"{q.rstrip('?')}: {a}" for _, q, a in known)
    return f"{step} (given: {facts})"


# "the director from Step 1", "the answer to Step 2", "Steps 1 and 2", "Step 1's":
# an optional preposition, an optional "the answer(s) to", the step list, an optional "'s"
_REFERENCE = re.compile(
    r"(?P<prep>\s+(?:in|from|of|to|by|at|for|on|with|found\s+in|named\s+in|identified\s+in)\b)?"
    r"(?P<answer>\s*\bthe\s+(?:answers?|results?)\s+(?:to|from|of|in)\b)?"
    r"\s*\bsteps?\s*(?P<nums>\d{1,6}(?:\s*(?:,|and|&)\s*(?:step\s*)?\d{1,6}){0,8})\b(?P<poss>'s)?",
    re.IGNORECASE)


def resolve_references(text: str, answers: Mapping[int, str]) -> str:
    """``text`` with each mention of a step replaced by that step's answer.

    A dependent step's search query must not ask about "Step 1": "Is the
    actor in Step 1 Jewish?" with step 1 answered "Susan Hayward" becomes
    "Is the actor (Susan Hayward) Jewish?", "When was Step 1 born?" becomes
    "When was Susan Hayward born?". A mention of a step with no answer is
    removed with its preposition ("When was the director from Step 1 born?"
    -> "When was the director born?"). Text that names no step is returned
    unchanged.
    """
    def sub(m: re.Match) -> str:
        nums = [int(n) for n in re.findall(r"\d+", m.group("nums"))]
        found = [answers[n].strip() for n in nums if answers.get(n, "").strip()]
        if not found:
            return ""
        value = " and ".join(dict.fromkeys(found)) + (m.group("poss") or "")
        if m.group("prep") and not m.group("answer"):
            return f" ({value})"
        return (m.group("prep") or "") + " " + value

    out = _REFERENCE.sub(sub, text)
    if out == text:
        return text
    return re.sub(r"\s+([?.!,])", r"\1", " ".join(out.split())).strip()

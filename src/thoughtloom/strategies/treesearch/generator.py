"""Thought generators: where a search's nodes come from.

A generator makes the root of one run's tree and the children of its
nodes; the children of any number of nodes go out as ONE ``lm.generate``
batch. Each generated request has its own ``sample_index``, so N samples
are N distinct, replayable cache entries. Unreadable and truncated (cut off
at ``max_tokens``) children are dropped as ``malformed`` events (``what:
tree_child``), duplicate and (for the ToT generator) revising ones
as ``tree_rejected``. A truncated or unreadable root is kept (a search
needs a root, and revising it is the point) but traced (``what:
tree_root``).

:class:`ThoughtGenerator` lets a child revise any part of its parent,
guided by the evaluator's feedback, and starts from the model's first answer
(ThoughtSculpt, Self-Refine). Where the task's candidates are listed
(``candidate_list``: crosswords, Appendix A.2's NEW_CANDIDATE, "list all
possible answers for unfilled or changed words, and your confidence
levels"), one request per node asks for them all and its lines, the surest
first (:func:`by_confidence`), are the up to ``k`` children. Where the task asks for it (story outlines,
``child_per_feedback_item``), the children of an itemized evaluation are
tied one-to-one to its items of feedback, least-scored item first.
:class:`ToTGenerator` is Tree of Thoughts' generator: it never sees the
evaluator's feedback, starts from an empty solution, and a child must extend
its parent unless the task's thoughts are whole candidates
(``whole_thoughts``: a new outline). It *proposes* several thoughts in one
reply (one per line) or *samples* them one per reply. Both are registered
(:data:`~.parts.GENERATORS`, ``revise`` and ``tot``); a strategy names one,
and ``from_config`` sets it from the strategy's config. Neither keeps run
state: each request's sample index comes from the run (``run.next_sample``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

from ...core.bounded import clip
from ...core.events import malformed
from ...core.protocols import Completable
from ...core.types import Completion, Request
from ..prompting import finished
from .budget import affordable
from .parts import GENERATORS, RunView
from .tree import Node

REVISE = ("Write an improved solution that fixes the problems named in the feedback. "
          "You may change ANY part of the current solution, or add to it.")
EXTEND = ("Continue the current solution: keep every part of it exactly as it is and only add "
          "the next piece (fill a blank, add a step). Do not change what is already there.")
REWRITE = "Write a new, better version of the whole solution."
GENERATE_MODES = ("auto", "propose", "sample")

MAX_PROPOSAL_LINES = 200  # lines of one proposal reply read as thoughts (a reply is model text: bounded)
#: A proposal line's confidence word, as ThoughtSculpt's crosswords NEW_CANDIDATE asks for it
#: ("certain/high/medium/low"), and its weight as Yao et al. rank their crossword proposals.
CONFIDENCE = {"certain": 1.0, "high": 0.5, "medium": 0.2, "low": 0.1}
_CONFIDENCE = re.compile(r"\(\s*(certain|high|medium|low)\s*\)\W*$", re.IGNORECASE)


@runtime_checkable
class GenerateModeOption(Protocol):
    """A config with the ``generate`` option (one of GENERATE_MODES: the Tree-of-Thoughts
    strategies' configs), which picks :class:`ToTGenerator`'s mode; the tot generator made from
    any other tree strategy's config runs as ``auto``."""

    generate: str


def by_confidence(lines: Sequence[str]) -> list[str]:
    """Proposal lines, the surest first (a line's ``(certain)``, ``(high)``, ``(medium)`` or
    ``(low)`` at its end; a line without one after them all); ties keep the reply's order."""
    def weight(line: str) -> float:
        m = _CONFIDENCE.search(line[-40:])
        return CONFIDENCE[m.group(1).lower()] if m else 0.0
    return sorted(lines, key=lambda line: -weight(line))


@GENERATORS.register("revise")
@dataclass(frozen=True)
class ThoughtGenerator:
    """Children that may revise their parent; the root is the model's first (greedy) answer. Its
    settings only: one object serves every run (the run's world, context and tree come with each call)."""

    max_tokens: int = 256
    temperature: float = 0.7
    instruction: ClassVar[str] = REVISE
    name: ClassVar[str] = "revise"  # its GENERATORS key (the registry sets it)

    @classmethod
    def from_config(cls, cfg: Any) -> "ThoughtGenerator":
        """This generator as a tree strategy's config (a ``SearchConfig``) sets it."""
        return cls(max_tokens=cfg.gen_max_tokens, temperature=cfg.temperature)

    def _request(self, run: RunView, prompt: str, temperature: float, candidates: int = 1) -> Request:
        """One generation request; a reply that lists ``candidates`` candidates may be that many
        times ``max_tokens`` long (``gen_max_tokens`` caps each candidate)."""
        return Request.of(prompt, max_tokens=self.max_tokens * candidates, temperature=temperature,
                          seed=run.ctx.seed, sample_index=run.next_sample())

    async def root(self, run: RunView) -> Node:
        """The task's given starting candidate, else this generator's own start."""
        given = run.world.view.root_candidate(run.world.problem)
        if given is not None:
            return run.tree.add(given)
        return await self._start(run)

    async def _start(self, run: RunView) -> Node:
        w = run.world
        prompt = run.ctx.prompt("tree_root", description=w.description,
                                 output_format=w.view.output_format(w.problem))
        reply = (await run.ctx.lm_for("generator").generate([self._request(run, prompt, 0.0)]))[0]
        whole = finished(run.ctx, reply, "tree_root")
        text = reply.text
        candidate = w.view.parse_candidate(w.problem, text, None)
        if candidate is None:  # dropped, as an unreadable child is (docs/tasks.md): the search starts empty
            if whole:  # a cut-off reply is traced once, as truncated
                malformed(run.ctx.trace, "tree_root", "unparseable", text)
            return empty_root(run)
        return run.tree.add(candidate)

    def admits(self, run: RunView, kind: str) -> bool:
        """Whether a child that ``kind`` ('extended' or 'revised') its parent may join the tree."""
        return True

    def can_grow(self, run: RunView, node: Node) -> bool:
        """Always: a child may revise any part of a complete candidate."""
        return True

    async def expand_many(self, run: RunView, nodes: Sequence[Node], k: int, *,
                          simulated: bool = False) -> list[list[Node]]:
        """``k`` children for each of ``nodes``, all requested in ONE batch.

        Simulated children (MCTS rollouts) join the tree but leave their
        parent unexpanded."""
        if k < 1 or not nodes:
            return [[] for _ in nodes]
        w, ctx = run.world, run.ctx
        listing = bool(w.view.candidate_list)  # one reply lists the candidates
        requests, spans = [], []
        for node in nodes:
            start = len(requests)
            for feedback in ([node.feedback] if listing else self._feedback(run, node, k)):
                prompt = ctx.prompt(
                    "tree_generate", description=w.description,
                    solution=w.view.render(w.problem, node.candidate),
                    feedback=feedback or "(no feedback)",
                    mode=self.instruction, output_format=w.view.output_format(w.problem))
                requests.append(self._request(run, prompt, self.temperature, candidates=k if listing else 1))
            spans.append((start, len(requests)))
        completions = await ctx.lm_for("generator").generate(affordable(ctx, requests))
        out = []
        for node, (start, end) in zip(nodes, spans):
            if not simulated:
                node.expanded = True
            out.append(self._children(run, node, completions[start:end], simulated, lines=listing, limit=k))
        return out

    def _feedback(self, run: RunView, node: Node, k: int) -> list[str]:
        """The feedback each of ``node``'s ``k`` children is written from.

        ThoughtSculpt §4.1: "Based on each itemized feedback, a child node will
        be proposed". Where the task asks for it and the node's evaluation was
        itemized, child j gets item j's feedback, least-scored item first, so
        there are at most as many children as items; a single child (a
        Self-Refine rewrite, an MCTS simulation step) and holistic feedback
        give every child the whole feedback."""
        items = [i for i in node.items if i.get("feedback")]
        if k > 1 and items and run.world.view.child_per_feedback_item:
            ranked = sorted(enumerate(items), key=lambda p: (p[1].get("score") is None, p[1].get("score") or 0.0, p[0]))
            return [f"{item['item']}: {item['feedback']}" for _, item in ranked[:k]]
        return [node.feedback] * k

    def _children(self, run: RunView, node: Node, replies: Sequence[Completion], simulated: bool,
                  seen: set[str] | None = None, lines: bool = False, limit: int | None = None) -> list[Node]:
        """The readable, new, admitted children in ``replies``, at most ``limit`` of them (the
        rest never join the tree); with ``lines``, each line of a reply is a proposal, the surest
        first (the complete lines of a reply cut off at max_tokens are kept, its cut-off last
        line is not)."""
        w, ctx, tree = run.world, run.ctx, run.tree
        seen = set() if seen is None else seen
        seen |= {tree.nodes[c].candidate for c in node.children} | {node.candidate}
        children = []
        for reply in replies:
            if not finished(ctx, reply, "tree_child", parent=node.id):
                if not lines:
                    continue
                texts = clip(reply.text).splitlines()[:-1][:MAX_PROPOSAL_LINES]
            else:
                texts = clip(reply.text).splitlines()[:MAX_PROPOSAL_LINES] if lines else [reply.text]
            if lines:
                texts = by_confidence(texts)
            parsed = [(t, w.view.parse_candidate(w.problem, t, node.candidate)) for t in texts if t.strip()]
            if not any(c is not None for _, c in parsed):
                if not reply.truncated:
                    malformed(ctx.trace, "tree_child", "unparseable", reply.text, parent=node.id)
                continue
            for _, candidate in parsed:
                if limit is not None and len(children) >= limit:
                    break
                if candidate is None:
                    continue  # a proposal list's prose line
                kind = w.view.change_kind(node.candidate, candidate)
                if candidate in seen:
                    ctx.trace.emit("tree_rejected", parent=node.id, reason="duplicate", candidate=candidate)
                    continue
                if not self.admits(run, kind):
                    ctx.trace.emit("tree_rejected", parent=node.id, reason="revises its parent",
                                        candidate=candidate)
                    continue
                seen.add(candidate)
                children.append(tree.add(candidate, node, kind, simulated=simulated))
        return children


@GENERATORS.register("tot")
@dataclass(frozen=True)
class ToTGenerator(ThoughtGenerator):
    """Tree of Thoughts' thought generator (Yao et al. 2023).

    No evaluator feedback reaches it: in ToT the evaluation only selects and
    prunes. The root is an empty solution (ToT starts from the bare input)
    unless the task gives one. ``mode`` is Yao et al.'s choice of generator:
    ``propose`` (one request per node whose reply lists up to ``k`` thoughts,
    one per line; for constrained thoughts such as an arithmetic step or a
    crossword word), ``sample`` (``k`` independent replies per node; for rich
    thoughts such as a whole outline), or ``auto``: ``sample`` where the
    task's thoughts are whole candidates (``whole_thoughts``), else
    ``propose``. A proposal repeated anywhere in one batch (one BFS level) is
    one child, as ToT values a duplicate candidate only once. A child must
    extend its parent, so a complete candidate (``SearchTask.complete``: a
    full crossword board) cannot grow.
    """

    mode: str = "auto"
    name: ClassVar[str] = "tot"

    @classmethod
    def from_config(cls, cfg: Any) -> "ToTGenerator":
        return cls(max_tokens=cfg.gen_max_tokens, temperature=cfg.temperature, mode=cfg.generate if isinstance(cfg, GenerateModeOption) else "auto")

    @staticmethod
    def _whole(run: RunView) -> bool:
        return bool(run.world.view.whole_thoughts)

    def _mode(self, run: RunView) -> str:
        return ("sample" if self._whole(run) else "propose") if self.mode == "auto" else self.mode

    async def _start(self, run: RunView) -> Node:
        return empty_root(run)  # nothing to judge yet

    def admits(self, run: RunView, kind: str) -> bool:
        return self._whole(run) or kind == "extended"

    def can_grow(self, run: RunView, node: Node) -> bool:
        """False for a complete candidate, unless a thought is a whole new candidate (it may rewrite)."""
        if self._whole(run):
            return True
        w = run.world
        return not (isinstance(w.view, Completable) and w.view.complete(w.problem, node.candidate))

    async def expand_many(self, run: RunView, nodes: Sequence[Node], k: int, *,
                          simulated: bool = False) -> list[list[Node]]:
        """Up to ``k`` children for each of ``nodes`` (one proposal request, or
        ``k`` samples, per node), all requested in ONE batch."""
        if k < 1 or not nodes:
            return [[] for _ in nodes]
        w, ctx, mode = run.world, run.ctx, self._mode(run)
        per_node = 1 if mode == "propose" else k
        requests = []
        for node in nodes:
            prompt = ctx.prompt(f"tot_{mode}", description=w.description,
                                solution=w.view.render(w.problem, node.candidate) if node.candidate else "(empty)",
                                n=k, mode=REWRITE if self._whole(run) else EXTEND,
                                output_format=w.view.output_format(w.problem))
            requests += [self._request(run, prompt, self.temperature, candidates=k if mode == "propose" else 1)
                         for _ in range(per_node)]
        completions = await ctx.lm_for("generator").generate(affordable(ctx, requests))
        seen: set[str] = set()
        out = []
        for j, node in enumerate(nodes):
            if not simulated:
                node.expanded = True
            replies = completions[j * per_node:(j + 1) * per_node]
            out.append(self._children(run, node, replies, simulated, seen, lines=mode == "propose", limit=k))
        return out


def empty_root(run: RunView) -> Node:
    """An empty start with nothing to judge (scored 0, ``evaluator: empty``): its children are the
    first candidates."""
    root = run.tree.add("")
    root.score, root.evaluator = 0.0, "empty"
    run.tree.scored(root)
    return root

"""Thought generators: where a search's nodes come from.

A generator makes the root of one run's tree and the children of its
nodes; the children of any number of nodes go out as ONE ``lm.generate``
batch. Each generated request has its own ``sample_index``, so N samples
are N distinct, replayable cache entries. Unreadable and truncated (cut off
at ``max_tokens``) children are dropped as ``malformed`` events (``what:
sculpt_child``), duplicate and (for the extending generator) revising ones
as ``sculpt_rejected``. A truncated or unreadable root is kept (a search
needs a root, and revising it is the point) but traced (``what:
sculpt_root``).

:class:`ThoughtGenerator` lets a child revise any part of its parent and
starts from the model's first answer (ThoughtSculpt, Self-Refine);
:class:`ExtendingGenerator` only lets a child add to its parent and starts
from an empty solution (Tree of Thoughts). A strategy picks one class.
"""

from __future__ import annotations

from typing import Sequence

from ...core.events import malformed
from ...core.types import Completion, Request
from ..base import Context, finished
from .budget import affordable
from .tree import Node, Tree
from .world import World

REVISE = ("Write an improved solution that fixes the problems named in the feedback. "
          "You may change ANY part of the current solution, or add to it.")
EXTEND = ("Continue the current solution: keep every part of it exactly as it is and only add "
          "the next piece (fill a blank, add a step). Do not change what is already there.")


class ThoughtGenerator:
    """Children that may revise their parent; the root is the model's first (greedy) answer."""

    instruction = REVISE

    def __init__(self, world: World, ctx: Context, tree: Tree, *, max_tokens: int, temperature: float) -> None:
        self.world, self.ctx, self.tree = world, ctx, tree
        self.max_tokens, self.temperature = max_tokens, temperature
        self._samples = 0  # distinct sample index per generated request

    def _request(self, prompt: str, temperature: float) -> Request:
        self._samples += 1
        return Request.of(prompt, max_tokens=self.max_tokens, temperature=temperature,
                          seed=self.ctx.seed, sample_index=self._samples)

    async def root(self) -> Node:
        """The task's given starting candidate, else this generator's own start."""
        given = self.world.view.root_candidate(self.world.problem)
        if given is not None:
            return self.tree.add(given)
        return await self._start()

    async def _start(self) -> Node:
        w = self.world
        prompt = self.ctx.prompt("sculpt_root", description=w.description,
                                 output_format=w.view.output_format(w.problem))
        reply = (await self.ctx.lm.generate([self._request(prompt, 0.0)]))[0]
        whole = finished(self.ctx, reply, "sculpt_root")
        text = reply.text
        candidate = w.view.parse_candidate(w.problem, text, None)
        if candidate is None:
            if whole:  # a cut-off reply is traced once, as truncated
                malformed(self.ctx.trace, "sculpt_root", "unparseable", text)
            candidate = text.strip()
        return self.tree.add(candidate)

    def admits(self, kind: str) -> bool:
        """Whether a child that ``kind`` ('extended' or 'revised') its parent may join the tree."""
        return True

    async def expand(self, node: Node, k: int, *, simulated: bool = False) -> list[Node]:
        """``k`` children of ``node`` from one batch (see :meth:`expand_many`)."""
        return (await self.expand_many([node], k, simulated=simulated))[0]

    async def expand_many(self, nodes: Sequence[Node], k: int, *, simulated: bool = False) -> list[list[Node]]:
        """``k`` children for each of ``nodes``, all requested in ONE batch.

        Simulated children (MCTS rollouts) join the tree but leave their
        parent unexpanded."""
        if k < 1 or not nodes:
            return [[] for _ in nodes]
        w = self.world
        requests = []
        for node in nodes:
            prompt = self.ctx.prompt(
                "sculpt_generate", description=w.description,
                solution=w.view.render(w.problem, node.candidate),
                feedback=node.feedback or "(no feedback)",
                mode=self.instruction, output_format=w.view.output_format(w.problem))
            requests += [self._request(prompt, self.temperature) for _ in range(k)]
        completions = await self.ctx.lm.generate(affordable(self.ctx, requests))
        out = []
        for j, node in enumerate(nodes):
            if not simulated:
                node.expanded = True
            out.append(self._children(node, completions[j * k:(j + 1) * k], simulated))
        return out

    def _children(self, node: Node, replies: Sequence[Completion], simulated: bool) -> list[Node]:
        w = self.world
        seen = {self.tree.nodes[c].candidate for c in node.children} | {node.candidate}
        children = []
        for reply in replies:
            if not finished(self.ctx, reply, "sculpt_child", parent=node.id):
                continue
            text = reply.text
            candidate = w.view.parse_candidate(w.problem, text, node.candidate)
            if candidate is None:
                malformed(self.ctx.trace, "sculpt_child", "unparseable", text, parent=node.id)
                continue
            kind = w.view.change_kind(node.candidate, candidate)
            if candidate in seen:
                self.ctx.trace.emit("sculpt_rejected", parent=node.id, reason="duplicate", candidate=candidate)
                continue
            if not self.admits(kind):
                self.ctx.trace.emit("sculpt_rejected", parent=node.id, reason="revises its parent",
                                    candidate=candidate)
                continue
            seen.add(candidate)
            children.append(self.tree.add(candidate, node, kind, simulated=simulated))
        return children


class ExtendingGenerator(ThoughtGenerator):
    """Children that only extend their parent; the root is an empty solution
    that thoughts build up step by step, as ToT starts from the bare input."""

    instruction = EXTEND

    async def _start(self) -> Node:
        root = self.tree.add("")
        root.score, root.evaluator = 0.0, "empty"  # nothing to judge yet
        self.tree.scored(root)
        return root

    def admits(self, kind: str) -> bool:
        return kind == "extended"

"""Tree of Thoughts (Yao et al. 2023): ``tot-bfs`` and ``tot-dfs``.

Both run on the tree-search kernel (same prompts, evaluator and budget as
ThoughtSculpt, so comparisons differ only in the search) with the
:class:`~thoughtloom.strategies.treesearch.generator.ExtendingGenerator`:
thoughts may only *extend* their parent, never revise it, starting from an
empty solution unless the task gives a start.

``tot-bfs``: level by level, every node of the beam proposes ``k``
children (all proposals in one batch), all children are evaluated (one
batch), and the ``beam`` best are kept. After ``max_depth`` levels the
answer is the best-scored node seen.

``tot-dfs``: the kernel's depth-first search with pruning and backtracking
(:mod:`thoughtloom.strategies.treesearch.dfs`), as ``sculpt-dfs`` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.events import phase
from ..base import register
from ..treesearch.dfs import DepthFirst
from ..treesearch.generator import ExtendingGenerator
from ..treesearch.search import SearchConfig, SearchRun, TreeSearch
from ..treesearch.tree import Node


@dataclass(frozen=True)
class BFSConfig(SearchConfig):
    beam: int = 2  # best children kept per level (b)
    stop_at_goal: bool = True  # stop once a level holds a node reaching goal_score


@register("tot-bfs")
class ToTBFS(TreeSearch):
    """Tree of Thoughts, BFS with beam b: children only extend, never revise."""

    Config = BFSConfig
    algorithm = "tot-bfs"
    generator = ExtendingGenerator

    async def search(self, s: SearchRun, root: Node) -> None:
        cfg: BFSConfig = self.config
        frontier = [root]
        for level in range(cfg.max_depth):
            if not frontier or (cfg.stop_at_goal and any(s.solved(n) for n in frontier)):
                break
            phase(s.ctx.trace, "depth", level + 1, cfg.max_depth)
            groups = await s.generator.expand_many(frontier, cfg.k)
            children = [c for g in groups for c in g]
            await s.evaluator.evaluate(children)
            frontier = sorted(children, key=lambda n: (-(n.score or 0.0), n.id))[: cfg.beam]


@register("tot-dfs")
class ToTDFS(DepthFirst):
    """Tree of Thoughts, DFS: like sculpt-dfs but children may only extend."""

    algorithm = "tot-dfs"
    generator = ExtendingGenerator

"""ThoughtSculpt with depth-first search (``sculpt-dfs``) and ToT-DFS (``tot-dfs``).

Expand a node into ``k`` children (one batch), evaluate them (one batch),
drop those scoring below ``prune_below`` (pruning), and descend into the
best first; when a subtree is used up, come back and try the next-best
sibling (backtracking). Stops at the first node reaching ``goal_score`` (if
``stop_at_goal``), or when ``max_steps`` expansions are spent. The answer
is the best-scored node seen. ``tot-dfs`` is the same search whose children
may only extend their parent (Tree of Thoughts), never revise it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.types import Problem
from ..base import Context, Result, Strategy, register
from .search import Search, SearchConfig, report
from ..treesearch.tree import Node


@dataclass(frozen=True)
class DFSConfig(SearchConfig):
    max_steps: int = 8          # expansions (for crosswords: search steps)
    prune_below: float = 0.1    # children scoring below this are not explored
    stop_at_goal: bool = True


class _Found(Exception):
    pass


async def depth_first(s: Search, cfg: DFSConfig, root: Node) -> None:
    steps = 0

    async def visit(node: Node) -> None:
        nonlocal steps
        if node.depth >= cfg.max_depth or steps >= cfg.max_steps:
            return
        steps += 1
        children = await s.expand(node, cfg.k)
        await s.evaluate(children)
        for child in sorted(children, key=lambda n: (-(n.score or 0.0), n.id)):
            if cfg.stop_at_goal and s.solved(child):
                raise _Found
            if (child.score or 0.0) < cfg.prune_below:
                s.ctx.trace.emit("sculpt_prune", node=child.id, score=child.score)
                continue
            await visit(child)
            if steps >= cfg.max_steps:
                return

    if cfg.stop_at_goal and s.solved(root):
        return
    try:
        await visit(root)
    except _Found:
        pass


class _DFS(Strategy):
    Config = DFSConfig
    extend_only = False

    async def run(self, problem: Problem, ctx: Context) -> Result:
        cfg: DFSConfig = self.config
        s = Search(problem, ctx, cfg, extend_only=self.extend_only)
        with s.budgeted():
            root = await s.make_root()
            await s.evaluate([root])
            await depth_first(s, cfg, root)
        return s.finish("tot-dfs" if self.extend_only else "dfs", s.tree.best_by_score)

    def report(self, result: Result) -> str:
        return report(result)


@register("sculpt-dfs")
class SculptDFS(_DFS):
    """ThoughtSculpt: greedy depth-first search with pruning, backtracking and revision."""


@register("tot-dfs")
class ToTDFS(_DFS):
    """Tree of Thoughts, DFS: like sculpt-dfs but children may only extend."""

    extend_only = True

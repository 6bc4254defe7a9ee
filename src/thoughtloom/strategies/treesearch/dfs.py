"""Depth-first search with pruning and backtracking, the control loop of
``sculpt-dfs-backtrack`` (children may revise; a variant, not the paper's
Algorithm 2, which ``sculpt-dfs`` runs) and ``tot-dfs`` (children only extend).

Expand a node into ``k`` children (one batch), evaluate them (one batch),
drop those scoring below ``prune_below`` (pruning), and descend into the
best first; when a subtree is used up, come back and try the next-best
sibling (backtracking). Stops at the first node reaching ``goal_score`` (if
``stop_at_goal``), or when ``max_steps`` expansions are spent. The answer
is the best-scored node seen.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.events import phase
from ...core.options import option
from .scaffold import SearchConfig, SearchRun, TreeSearch
from .tree import Node


@dataclass(frozen=True)
class DFSConfig(SearchConfig):
    max_steps: int = option(8, min=1)        # expansions (for crosswords: search steps)
    prune_below: float = option(0.1, min=0)  # children scoring below this are not explored
    stop_at_goal: bool = True   # stop at the first node reaching goal_score


class DepthFirst(TreeSearch):
    """Greedy best-first DFS; subclasses pick the generator and register a name."""

    Config = DFSConfig

    async def loop(self, s: SearchRun, root: Node) -> None:
        cfg: DFSConfig = self.config
        steps = 0

        async def visit(node: Node) -> bool:
            """Explore below ``node``; True once a node reaches the goal (the search ends)."""
            nonlocal steps
            if node.depth >= cfg.max_depth or steps >= cfg.max_steps:
                return False
            steps += 1
            phase(s.ctx.trace, "expansion", steps, cfg.max_steps, depth=node.depth)
            children = await s.generator.expand(node, cfg.k)
            await s.evaluator.evaluate(children)
            for child in sorted(children, key=lambda n: (-(n.score or 0.0), n.id)):
                if cfg.stop_at_goal and s.solved(child):
                    return True
                if (child.score or 0.0) < cfg.prune_below:
                    s.ctx.trace.emit("tree_prune", node=child.id, score=child.score)
                    continue
                if await visit(child):
                    return True
                if steps >= cfg.max_steps:
                    return False
            return False

        if not (cfg.stop_at_goal and s.solved(root)):
            await visit(root)

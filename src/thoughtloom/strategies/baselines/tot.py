"""Tree of Thoughts with breadth-first search (``tot-bfs``).

Level by level: every node of the beam proposes ``k`` children that may
only *extend* it (all proposals in one batch), all children are evaluated
(one batch), and the ``beam`` best are kept. After ``max_depth`` levels the
answer is the best-scored node seen. Runs on the ThoughtSculpt search core
(same prompts, evaluator and budget) so comparisons differ only in the
search. ``tot-dfs`` lives with ``sculpt-dfs``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.types import Problem
from ..base import Context, Result, Strategy, register
from ..sculpt.search import Search, SearchConfig, report


@dataclass(frozen=True)
class BFSConfig(SearchConfig):
    beam: int = 2
    stop_at_goal: bool = True


@register("tot-bfs")
class ToTBFS(Strategy):
    """Tree of Thoughts, BFS with beam b: children only extend, never revise."""

    Config = BFSConfig

    async def run(self, problem: Problem, ctx: Context) -> Result:
        cfg: BFSConfig = self.config
        s = Search(problem, ctx, cfg, extend_only=True)
        with s.budgeted():
            root = await s.make_root()
            await s.evaluate([root])
            frontier = [root]
            for _ in range(cfg.max_depth):
                if not frontier or (cfg.stop_at_goal and any(s.solved(n) for n in frontier)):
                    break
                groups = await s.expand_many(frontier, cfg.k)
                children = [c for g in groups for c in g]
                await s.evaluate(children)
                frontier = sorted(children, key=lambda n: (-(n.score or 0.0), n.id))[: cfg.beam]
        return s.finish("tot-bfs", s.tree.best_by_score)

    def report(self, result: Result) -> str:
        return report(result)

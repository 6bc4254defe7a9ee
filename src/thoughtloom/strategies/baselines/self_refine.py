"""Self-Refine (``self-refine``): one chain of self-feedback and rewrite.

The model answers, the evaluator gives feedback and a score, the generator
rewrites the answer using that feedback (revising any part), for up to
``iterations`` rounds or until the score reaches ``goal_score``. Like the
original method, the answer is the LAST version. Runs on the tree-search
kernel (same prompts, evaluator and budget as ThoughtSculpt): it is the
k=1, no-search special case.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.events import phase
from ...core.options import option
from ..registry import register
from ..treesearch.scaffold import SEARCH_ALGORITHMS, SearchConfig, SearchRun, TreeSearch
from ..treesearch.tree import Node


@dataclass(frozen=True)
class SelfRefineConfig(SearchConfig):
    iterations: int = option(3, min=1)  # critique-and-rewrite rounds
    stop_at_goal: bool = True  # stop once a version reaches goal_score


@SEARCH_ALGORITHMS.register("refine")
@dataclass(frozen=True)
class RefineChain:
    """Self-Refine's chain (the ``refine`` search algorithm): rewrite the current version from its
    feedback, ``iterations`` times; the answer is the last version."""

    config: SelfRefineConfig

    @classmethod
    def from_config(cls, cfg: SelfRefineConfig) -> "RefineChain":
        return cls(cfg)

    async def loop(self, s: SearchRun, root: Node) -> None:
        cfg = self.config
        for i in range(cfg.iterations):
            if (cfg.stop_at_goal and s.solved(s.current)) or s.complete(s.current):
                break
            phase(s.ctx.trace, "round", i + 1, cfg.iterations)
            rewrite = await s.expand(s.current, 1)
            await s.evaluate(rewrite)
            if rewrite:
                s.current = rewrite[0]
            elif not s.empty(s.current):  # an unreadable rewrite spent the round (retry_empty: try again)
                s.notes["stopped_early"] = f"no readable rewrite of node #{s.current.id}"
                break

    def choose(self, s: SearchRun) -> Node:
        return s.current  # the last version, even if an earlier one scored higher


@register("self-refine")
class SelfRefine(TreeSearch):
    """Self-Refine: answer, self-critique, rewrite; one chain, last version wins."""

    Config = SelfRefineConfig
    algorithm = "self-refine"
    search_algorithm = "refine"

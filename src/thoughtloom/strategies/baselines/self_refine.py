"""Self-Refine (``self-refine``): one chain of self-feedback and rewrite.

The model answers, the evaluator gives feedback and a score, the generator
rewrites the answer using that feedback (revising any part), for up to
``iterations`` rounds or until the score reaches ``goal_score``. Like the
original method, the answer is the LAST version. Runs on the ThoughtSculpt
search core (same prompts, evaluator and budget): it is the k=1, no-search
special case.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.types import Problem
from ..base import Context, Result, Strategy, register
from ..sculpt.search import Search, SearchConfig, report


@dataclass(frozen=True)
class SelfRefineConfig(SearchConfig):
    iterations: int = 3
    stop_at_goal: bool = True


@register("self-refine")
class SelfRefine(Strategy):
    """Self-Refine: answer, self-critique, rewrite; one chain, last version wins."""

    Config = SelfRefineConfig

    async def run(self, problem: Problem, ctx: Context) -> Result:
        cfg: SelfRefineConfig = self.config
        s = Search(problem, ctx, cfg)
        with s.budgeted():
            current = await s.make_root()
            await s.evaluate([current])
            for _ in range(cfg.iterations):
                if cfg.stop_at_goal and s.solved(current):
                    break
                nxt = await s.expand(current, 1)
                await s.evaluate(nxt)
                if not nxt:
                    continue  # an unreadable rewrite: try again from the same version
                current = nxt[0]
        return s.finish("self-refine", lambda: current)

    def report(self, result: Result) -> str:
        return report(result)

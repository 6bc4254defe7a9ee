"""ThoughtSculpt with Monte Carlo tree search (``sculpt-mcts``).

Each rollout: **select** a leaf from the root by UCB1,
``Q(x) + c * sqrt(ln n(parent) / n(x))`` where ``Q`` is the node's average
backed-up reward (its evaluator score before its first visit; unvisited
nodes go first, better-scored first); **expand** it into ``k`` children (one
generation batch, one evaluation batch; children may revise any part of the
parent); **simulate** from one child drawn uniformly, generating one node per
step for up to ``simulation_depth`` steps; **backpropagate** the last
simulated node's score to the root. After ``rollouts`` rollouts the answer
is the node with the highest average reward.

Simulated nodes stay in the tree (so they can be chosen and expanded later)
but do not mark their parent as expanded. Rollouts run one after another:
leaf-parallel rollouts with virtual loss would batch more calls together
but make each selection see stale statistics; with k children and their
evaluations already batched we keep the paper's sequential rollouts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core.types import Problem
from ..base import Context, Result, Strategy, register
from .search import Search, SearchConfig, report
from .tree import Node, Tree


@dataclass(frozen=True)
class MCTSConfig(SearchConfig):
    c: float = 1.0               # exploration constant of UCB1
    rollouts: int = 8            # d_rollout (for crosswords: search steps)
    simulation_depth: int = 1    # d_simulation (paper: 1)
    stop_at_goal: bool = False   # end early once a node reaches goal_score


def ucb1(node: Node, parent_visits: int, c: float) -> float:
    if node.visits == 0:
        return math.inf
    return node.mean_value + c * math.sqrt(math.log(max(parent_visits, 1)) / node.visits)  # type: ignore[operator]


def select(tree: Tree, c: float) -> Node:
    """Descend from the root through expanded nodes by UCB1 to a leaf."""
    node = tree.root
    while node.expanded and node.children:
        kids = tree.children(node)
        node = max(kids, key=lambda k: (ucb1(k, node.visits, c), k.score or 0.0, -k.id))
    return node


async def rollout(s: Search, cfg: MCTSConfig) -> Node:
    """One select-expand-simulate-backpropagate pass; returns the rewarded node."""
    leaf = select(s.tree, cfg.c)
    s.ctx.trace.emit("sculpt_select", node=leaf.id, depth=leaf.depth)
    last = leaf
    if leaf.depth < cfg.max_depth and not (cfg.stop_at_goal and s.solved(leaf)):
        children = await s.expand(leaf, cfg.k)
        await s.evaluate(children)
        if children:
            last = s.rng.choice(children)
            for _ in range(cfg.simulation_depth):
                if last.depth >= cfg.max_depth:
                    break
                nxt = await s.expand(last, 1, simulated=True)
                await s.evaluate(nxt)
                if not nxt:
                    break
                last = nxt[0]
    s.tree.backpropagate(last, last.score or 0.0)
    return last


@register("sculpt-mcts")
class SculptMCTS(Strategy):
    """ThoughtSculpt: MCTS over revisable thoughts with evaluator feedback."""

    Config = MCTSConfig

    async def run(self, problem: Problem, ctx: Context) -> Result:
        cfg: MCTSConfig = self.config
        s = Search(problem, ctx, cfg)
        with s.budgeted():
            root = await s.make_root()
            await s.evaluate([root])
            for _ in range(cfg.rollouts):
                last = await rollout(s, cfg)
                if cfg.stop_at_goal and s.solved(last):
                    break
        return s.finish("mcts", s.tree.best_by_mean)

    def report(self, result: Result) -> str:
        return report(result)

"""ThoughtSculpt with depth-first search: ``sculpt-dfs`` is the paper's Algorithm 2,
``sculpt-dfs-backtrack`` a variant that is not in the paper.

``sculpt-dfs`` (Algorithm 2, a greedy descent): from the root, expand the
node into ``k`` children (one generation batch), evaluate them (one
batch), take the best-scored child and repeat from it, ``max_depth`` times
(the algorithm's d). The answer is the node the descent reached, as
Algorithm 2 returns it (``DFS(x*, d-1)`` until ``d = 0``), not the best
node seen. Algorithm 2 does not say what happens when an expansion yields
no readable child; we expand the same node again (``retry_empty``, on by
default), and that attempt spends one of the d steps: the rule of every tree
method (:meth:`~thoughtloom.strategies.treesearch.scaffold.SearchRun.empty`);
``details["empty_expansions"]`` counts them. With ``retry_empty`` off the descent ends there
(``details["stopped_early"]`` says so). With ``stop_at_goal`` it ends once
the current node reaches ``goal_score``. Calls: at most 2 + 2k·d.

``sculpt-dfs-backtrack``: ThoughtSculpt's revising children in the
kernel's pruned, backtracking depth-first loop
(:mod:`thoughtloom.strategies.treesearch.dfs`, the loop ``tot-dfs`` runs):
children scoring below ``prune_below`` are dropped, the best is explored
first, a used-up subtree sends the search back to the next sibling, for up
to ``max_steps`` expansions; the answer is the best-scored node seen. It
was this project's ``sculpt-dfs`` before the paper's Algorithm 2 replaced it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.events import phase
from ..registry import register
from ..treesearch.dfs import DFSConfig
from ..treesearch.scaffold import SEARCH_ALGORITHMS, SearchConfig, SearchRun, TreeSearch
from ..treesearch.tree import Node


@dataclass(frozen=True)
class GreedyDFSConfig(SearchConfig):
    stop_at_goal: bool = False  # end the descent once the current node reaches goal_score (not in Algorithm 2)


@SEARCH_ALGORITHMS.register("dfs")
@dataclass(frozen=True)
class GreedyDescent:
    """Algorithm 2's descent (the ``dfs`` search algorithm): expand, take the best child, repeat
    max_depth times; the answer is the node the descent reached."""

    config: GreedyDFSConfig

    @classmethod
    def from_config(cls, cfg: GreedyDFSConfig) -> "GreedyDescent":
        return cls(cfg)

    async def loop(self, s: SearchRun, root: Node) -> None:
        cfg = self.config
        node = root
        for level in range(cfg.max_depth):
            if (cfg.stop_at_goal and s.solved(node)) or s.complete(node):
                break
            phase(s.ctx.trace, "depth", level + 1, cfg.max_depth)
            children = await s.expand(node, cfg.k)
            await s.evaluate(children)
            if not children:
                if s.empty(node):
                    continue  # the step is spent; the next one expands the same node again
                s.notes["stopped_early"] = f"no readable child of node #{node.id} at depth {node.depth + 1}"
                break
            node = max(children, key=lambda n: (n.score or 0.0, -n.id))
            s.current = node
        s.notes["descent_depth"] = node.depth

    def choose(self, s: SearchRun) -> Node:
        return s.current  # Algorithm 2 returns the node its descent reached


@register("sculpt-dfs")
class SculptDFS(TreeSearch):
    """ThoughtSculpt, DFS as the paper's Algorithm 2: expand, take the best child, repeat max_depth times."""

    paper = "ThoughtSculpt"
    Config = GreedyDFSConfig
    algorithm = "dfs"
    search_algorithm = "dfs"


@register("sculpt-dfs-backtrack")
class SculptDFSBacktrack(TreeSearch):
    """A variant, not the paper's: ThoughtSculpt's children in a pruned, backtracking DFS (tot-dfs's loop)."""

    paper = "ThoughtSculpt"
    Config = DFSConfig
    algorithm = "dfs-backtrack"
    search_algorithm = "dfs-backtrack"

"""Depth-first search with pruning and backtracking, the control loop of
``sculpt-dfs-backtrack`` (children may revise; a variant, not the paper's
Algorithm 2, which ``sculpt-dfs`` runs) and ``tot-dfs`` (children only extend).

Expand a node into ``k`` children (one batch), evaluate them (one batch),
prune, and descend into the best first; when a subtree is used up, come
back and try the next-best sibling (backtracking). Stops at the first node
reaching ``goal_score`` (if ``stop_at_goal``), or when ``max_steps``
expansions are spent. The answer is the best-scored node seen.

**Pruning** follows Yao et al.'s crosswords DFS, which goes on below a
state only if none of its clues is judged impossible: a child whose
evaluation is itemized is pruned when any item the task lets judge it
(``SearchTask.judged_items``; crosswords: a clue with at least two letters in
place, as Yao et al. value only those) scores below ``prune_below`` (0.1:
a 0/10, "impossible"); a child with a holistic score from the model, when
that score is below ``prune_below``. A score from the task's exact checker
(``evaluator: symbolic``, e.g. CommonGen's concept coverage) never prunes: it
measures how far a partial state has come, not whether it can still succeed
(a first ToT thought covering 2 of 25 concepts scores 0.08 and was pruned as
"impossible", ending the search after 1 of its 3 steps). Each prune is a
``tree_prune`` event (``item`` names the clue).

**An expansion with no readable child** spends one of the ``max_steps`` and
the next step expands the same node again (``retry_empty``, the rule of every
tree method, :meth:`~.scaffold.SearchRun.empty`); with it off the search goes
back up to the parent's next child, as Yao et al.'s does.

**A complete node** (one the generator cannot add to: a full crossword board
under ToT's generator, whose children may only fill blanks) is not expanded
at all: the search goes back up to the next sibling without spending a step
(:meth:`~.scaffold.SearchRun.complete`), as Yao et al.'s crosswords DFS
recurses only while ``env.steps < 10``. The node itself stays in the tree, a
candidate answer like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.events import phase
from ...core.options import option
from ...core.protocols import PruneMasked
from .evaluator import item_labels
from .reading import judged_below
from .scaffold import SEARCH_ALGORITHMS, SearchConfig, SearchRun
from .tree import Node


@dataclass(frozen=True)
class DFSConfig(SearchConfig):
    max_steps: int = option(8, min=1)        # expansions (for crosswords: search steps)
    prune_below: float = option(0.1, min=0)  # a child scoring (or with a judged item scoring) below this is pruned
    stop_at_goal: bool = True   # stop at the first node reaching goal_score


def prune_reason(s: SearchRun, node: Node, below: float) -> dict | None:
    """Why ``node`` is not explored (the ``tree_prune`` event's fields), or None to explore it."""
    scored = [i for i in node.items if i.get("score") is not None]
    if scored:  # itemized: Yao et al.'s rule, any judged item impossible
        w = s.world
        labels = item_labels(w.view.evaluation_items(w.problem, node.candidate))
        mask = (list(w.view.judged_items(w.problem, node.candidate)) if isinstance(w.view, PruneMasked)
                else [True] * len(labels))
        item = judged_below(node.items, labels, mask, below)
        return None if item is None else {"score": node.score, "item": item}
    if node.evaluator == "symbolic":  # a task's exact checker measures progress (coverage), not whether
        return None                    # the state can still succeed: no judgment of "impossible" to prune on
    if (node.score or 0.0) < below:
        return {"score": node.score}
    return None


@SEARCH_ALGORITHMS.register("dfs-backtrack")
@dataclass(frozen=True)
class DepthFirst:
    """Best-first DFS with pruning and backtracking (the ``dfs-backtrack`` search algorithm); the
    answer is the best-scored node seen."""

    config: DFSConfig

    @classmethod
    def from_config(cls, cfg: DFSConfig) -> "DepthFirst":
        return cls(cfg)

    async def loop(self, s: SearchRun, root: Node) -> None:
        cfg = self.config
        steps = 0

        async def children_of(node: Node) -> list[Node]:
            """``node``'s evaluated children, expanding it again after an empty expansion (retry_empty)."""
            nonlocal steps
            while steps < cfg.max_steps:
                steps += 1
                phase(s.ctx.trace, "expansion", steps, cfg.max_steps, depth=node.depth)
                children = await s.expand(node, cfg.k)
                await s.evaluate(children)
                if children or not s.empty(node):
                    return children
            return []

        async def visit(node: Node) -> bool:
            """Explore below ``node``; True once a node reaches the goal (the search ends)."""
            if node.depth >= cfg.max_depth or s.complete(node):  # nothing below it: back up, no step spent
                return False
            for child in sorted(await children_of(node), key=lambda n: (-(n.score or 0.0), n.id)):
                if cfg.stop_at_goal and s.solved(child):
                    return True
                why = prune_reason(s, child, cfg.prune_below)
                if why is not None:
                    s.ctx.trace.emit("tree_prune", node=child.id, **why)
                    continue
                if await visit(child):
                    return True
                if steps >= cfg.max_steps:
                    return False
            return False

        if not (cfg.stop_at_goal and s.solved(root)):
            await visit(root)
        s.notes["steps_done"] = steps

    def choose(self, s: SearchRun) -> Node:
        return s.tree.best_by_score()

"""ThoughtSculpt with Monte Carlo tree search (``sculpt-mcts``), Algorithm 1 of the paper.

**Values.** A node's value is its average reward, and its own evaluation
counts as its first visit (one visit with reward v(x), the evaluator's
score): a node the search has only evaluated has value v(x), as Eq. 4's
``UCB1(x) = v(x) + c * sqrt(ln n(x_parent) / n(x))`` reads; every rollout
through it then adds one visit and its reward.

Each rollout: **select** a leaf from the root by UCB1 over the average
value, descending only through nodes that can still grow (a node at
``max_depth``, or one whose children all are at it, is never selected: such
a rollout would add nothing); **expand** it into ``k`` children (one
generation batch, one evaluation batch; children may revise any part of the
parent); **simulate** from one child drawn uniformly, generating one node
per step for up to ``simulation_depth`` steps; **backpropagate** the last
simulated node's score to the root (that node's own evaluation was its
visit). If no leaf can grow, the search stops before its ``rollouts`` are
spent and says so (``tree_exhausted``; ``details["rollouts_done"]``).

**The answer** is chosen among every evaluated node. By default (``answer:
mean``) it is the node with the highest average reward, as §3.3 says ("The
node with the highest average reward will be chosen as the final output"),
ties broken by v(x). ``answer: score`` is the reading of Algorithm 1's
"Choose the best node x* with the highest reward v" (in the paper's
appendix listing, not the text): the highest v(x), ties by the average
reward, so a node the evaluator scored best is never passed over for a
better-visited one.

Simulated nodes stay in the tree (so they can be chosen and expanded later)
but do not mark their parent as expanded.

**Leaf-parallel rollouts** (``parallel`` > 1; default 1, the paper's
sequential rollouts). Each iteration selects up to ``parallel`` leaves one
after another; after each selection a *virtual loss* is put on the leaf's
path (``virtual_loss`` extra visits with reward 0 on every node from the root
to the leaf), so UCB1 steers the next selection elsewhere. The selected
leaves are then expanded in ONE generation batch, their children evaluated
in ONE batch, simulated together, and the virtual losses removed before the
real rewards are backpropagated (the virtual visits are counted beside the
tree, never on its nodes: :func:`select_leaves`). Each leaf counts as one of the
``rollouts``. The trade-off: a batching server (vLLM, llama.cpp server with
several slots) serves ``parallel`` x k generations in about the time of k,
but each selection after the first sees statistics that lack the rewards
of the rollouts still in flight, so the search spends some rollouts on
leaves a sequential search would have skipped. On the single-stream
embedded model a batch is not faster than its parts (only the KV prefix is
reused), so there ``parallel=1`` is the better choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ...core.events import phase
from ...core.options import option
from ..registry import register
from ..treesearch.scaffold import SEARCH_ALGORITHMS, SearchConfig, SearchRun, TreeSearch
from ..treesearch.tree import Node, Tree


#: MCTS's answer rules (``answer``): §3.3's highest average reward, or the highest single score.
ANSWER_RULES = ("mean", "score")


@dataclass(frozen=True)
class MCTSConfig(SearchConfig):
    c: float = option(1.0, min=0)             # exploration constant of UCB1
    rollouts: int = option(8, min=1)          # d_rollout (for crosswords: search steps)
    simulation_depth: int = option(1, min=0)  # d_simulation (paper: 1)
    stop_at_goal: bool = False                # end early once a node reaches goal_score
    parallel: int = option(1, min=1)          # leaves per iteration (leaf-parallel rollouts); 1 = sequential
    virtual_loss: int = option(1, min=0)      # virtual visits (reward 0) on a selected leaf's path while in flight
    answer: str = option("mean", choices=ANSWER_RULES, help="the answer node: 'mean', the highest average "
                         "reward (§3.3); 'score', the highest evaluator score v(x), ties by the average")


def ucb1(node: Node, parent_visits: int, c: float, pending: int = 0) -> float:
    """Eq. 4 over ``node``'s visits plus ``pending`` virtual ones (reward 0: leaf-parallel rollouts in flight)."""
    visits = node.visits + pending
    if visits == 0:  # not evaluated (a budget stop cut its evaluation): nothing known yet
        return math.inf
    return node.value_sum / visits + c * math.sqrt(math.log(max(parent_visits, 1)) / visits)


def growable(tree: Tree, max_depth: float, retry_empty: bool = True,
             complete: Callable[[Node], bool] | None = None) -> set[int]:
    """Ids of the nodes a rollout through them can still add to: below ``max_depth``, not ``complete``
    (a state the generator cannot add to), and either unexpanded, expanded with no child (with
    ``retry_empty``: its expansion is tried again), or with a growable child."""
    ids: set[int] = set()
    for node in reversed(tree.nodes):  # children come after their parents
        if node.depth >= max_depth:
            continue
        expandable = not node.expanded or (retry_empty and not node.children)
        if any(c in ids for c in node.children) or (expandable and not (complete and complete(node))):
            ids.add(node.id)
    return ids


def select(tree: Tree, c: float, max_depth: float = math.inf, retry_empty: bool = True,
           pending: Mapping[int, int] | None = None, complete: Callable[[Node], bool] | None = None) -> Node | None:
    """Descend from the root through expanded nodes by UCB1 to a leaf that can grow; None if none can.
    ``pending``: virtual visits by node id (:func:`select_leaves`), counted as visits with reward 0."""
    can_grow = growable(tree, max_depth, retry_empty, complete)
    virtual = pending or {}
    node = tree.root
    if node.id not in can_grow:
        return None
    while node.expanded and node.children:
        kids = [k for k in tree.children(node) if k.id in can_grow]
        visits = node.visits + virtual.get(node.id, 0)
        node = max(kids, key=lambda k: (ucb1(k, visits, c, virtual.get(k.id, 0)), k.score or 0.0, -k.id))
    return node


def select_leaves(tree: Tree, cfg: MCTSConfig, width: int, pending: dict[int, int],
                  complete: Callable[[Node], bool] | None = None) -> list[Node]:
    """Up to ``width`` distinct leaves, a virtual loss (``cfg.virtual_loss`` visits with reward 0,
    counted in ``pending``) on each one's path as it is chosen.

    Stops early when UCB1 leads back to a leaf already chosen (the tree has
    no other leaf worth taking yet, e.g. only the root), or to none (no
    leaf can grow). The virtual losses live in ``pending`` alone, never on
    the tree's nodes, so they end with the rollout that made them, and a
    budget stop or an anytime look at the tree meanwhile sees only real visits.
    """
    leaves: list[Node] = []
    for _ in range(width):
        leaf = select(tree, cfg.c, cfg.max_depth, cfg.retry_empty, pending, complete)
        if leaf is None or leaf in leaves:
            break
        leaves.append(leaf)
        for node in tree.path(leaf):
            pending[node.id] = pending.get(node.id, 0) + cfg.virtual_loss
    return leaves


async def evaluated(s: SearchRun, nodes: Sequence[Node]) -> None:
    """Evaluate ``nodes`` (one batch) and count each one's evaluation as its first visit."""
    await s.evaluate(nodes)
    for node in nodes:
        s.tree.first_visit(node)


async def rollouts(s: SearchRun, cfg: MCTSConfig, width: int, done: int = 0) -> list[Node]:
    """Select ``width`` leaves, expand, simulate and backpropagate them together.

    With ``width`` 1 this is one plain select-expand-simulate-backpropagate
    rollout. Returns the rewarded node of each leaf; empty when no leaf can grow.
    """
    leaves = select_leaves(s.tree, cfg, width, {}, s.complete)
    if not leaves:
        return []
    phase(s.ctx.trace, "rollout", done + 1, cfg.rollouts)
    for leaf in leaves:
        s.ctx.trace.emit("tree_select", node=leaf.id, depth=leaf.depth, parallel=len(leaves))
    last = {leaf.id: leaf for leaf in leaves}
    grow = [leaf for leaf in leaves if not (cfg.stop_at_goal and s.solved(leaf))]
    groups = await s.expand_many(grow, cfg.k)
    await evaluated(s, [c for g in groups for c in g])
    for leaf, g in zip(grow, groups):
        if not g:  # the rollout is spent; UCB1 may select the leaf again (retry_empty)
            s.empty(leaf)
    chains = {leaf.id: s.rng.choice(g) for leaf, g in zip(grow, groups) if g}
    active = dict(chains)  # a chain whose simulated step came back unreadable stops there
    for _ in range(cfg.simulation_depth):
        going = [(lid, node) for lid, node in active.items() if node.depth < cfg.max_depth]
        if not going:
            break
        nxt = await s.expand_many([node for _, node in going], 1, simulated=True)
        await evaluated(s, [c for g in nxt for c in g])
        active = {lid: g[0] for (lid, _), g in zip(going, nxt) if g}
        chains.update(active)
    last.update(chains)
    for leaf in leaves:
        node = last[leaf.id]  # a new node's own evaluation was already its visit
        s.tree.backpropagate(node, node.score or 0.0, include_node=node is leaf)
    return [last[leaf.id] for leaf in leaves]


@SEARCH_ALGORITHMS.register("mcts")
@dataclass(frozen=True)
class MCTS:
    """Algorithm 1's rollouts (the ``mcts`` search algorithm) and its answer rule."""

    config: MCTSConfig

    @classmethod
    def from_config(cls, cfg: MCTSConfig) -> "MCTS":
        return cls(cfg)

    async def loop(self, s: SearchRun, root: Node) -> None:
        cfg = self.config
        s.tree.first_visit(root)
        done = 0
        s.notes["rollouts_done"] = 0
        while done < cfg.rollouts:
            lasts = await rollouts(s, cfg, min(cfg.parallel, cfg.rollouts - done), done)
            if not lasts:  # every leaf is at max_depth (or empty, retry_empty off): a rollout would add nothing
                s.ctx.trace.emit("tree_exhausted", rollouts=done, planned=cfg.rollouts)
                s.notes["stopped_early"] = f"no leaf below max_depth={cfg.max_depth} left to grow" + (
                    "" if cfg.retry_empty or not s.notes.get("empty_expansions") else
                    " (an expansion with no readable child is not tried again: retry_empty is off)")
                break
            done += len(lasts)
            s.notes["rollouts_done"] = done
            if cfg.stop_at_goal and any(s.solved(n) for n in lasts):
                break

    def choose(self, s: SearchRun) -> Node:
        return s.tree.best_by_mean() if self.config.answer == "mean" else s.tree.best_by_value()


@register("sculpt-mcts")
class SculptMCTS(TreeSearch):
    """ThoughtSculpt: MCTS over revisable thoughts with evaluator feedback."""

    paper = "ThoughtSculpt"
    Config = MCTSConfig
    algorithm = "mcts"
    search_algorithm = "mcts"

"""Tree of Thoughts (Yao et al. 2023), as ThoughtSculpt runs it as a baseline: ``tot-bfs`` and ``tot-dfs``.

Both run on the tree-search kernel (same tasks, evaluator prompts and budget
as ThoughtSculpt) with the
:class:`~thoughtloom.strategies.treesearch.generator.ToTGenerator`: thoughts
are generated from the task and the current solution only, never from the
evaluator's feedback, and the evaluation only selects and prunes (ThoughtSculpt
§4.2: ToT's evaluation is used for "pruning branches", ThoughtSculpt's "to
generate new candidates"). Thoughts extend their parent, starting from an
empty solution, except where a task's thoughts are whole candidates (a new
outline). ``generate`` picks Yao et al.'s generator: ``propose`` (one reply
listing several thoughts), ``sample`` (one thought per reply), ``auto``.

``tot-bfs``: level by level, every node of the beam proposes
``max(k, beam)`` thoughts (all in one batch), each new thought is valued
``value_samples`` times (3, as Yao et al. sample their value prompt; one
batch) and the ``beam`` best by mean value are kept. After ``max_depth``
levels the answer is the best thought of the last level kept, as Yao et
al. answer with the first of their final beam. A level that brings no
readable thought spends that level and the next one expands the same beam
again (``retry_empty``, the rule of every tree method). A complete thought
in the beam (a full board: nothing can extend it) is not expanded; it
competes for the next beam with the new thoughts, and a beam of complete
thoughts ends the search (Yao et al. do not say; our choice).

``tot-dfs``: the kernel's depth-first search with pruning and backtracking
(:mod:`thoughtloom.strategies.treesearch.dfs`), each expansion one proposal
request of ``k`` thoughts, each valued once; a state with a clue judged
impossible is pruned, as Yao et al. prune, an empty expansion is tried
again within ``max_steps``, and a full board sends the search back up
without spending a step.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.events import phase
from ...core.options import option
from ..registry import register
from ..treesearch.dfs import DFSConfig
from ..treesearch.evaluator import EVAL_STYLES
from ..treesearch.generator import GENERATE_MODES
from ..treesearch.scaffold import SEARCH_ALGORITHMS, SearchConfig, SearchRun, TreeSearch
from ..treesearch.tree import Node


@dataclass(frozen=True)
class BFSConfig(SearchConfig):
    beam: int = option(2, min=1)  # best thoughts kept per level (b)
    stop_at_goal: bool = True  # stop once a level holds a node reaching goal_score
    generate: str = option("auto", choices=GENERATE_MODES)  # 'propose', 'sample', or 'auto' (sample where a thought is a whole candidate)
    value_samples: int = option(3, min=1, max=100)  # value prompts per thought, mean (Yao et al.: 3)
    eval_temperature: float = option(0.7, min=0)  # so the value samples differ (Yao et al. sample every call at 0.7)
    eval_style: str = option("score", choices=EVAL_STYLES)  # Yao et al. value a partial state on a graded scale


@dataclass(frozen=True)
class ToTDFSConfig(DFSConfig):
    generate: str = option("auto", choices=GENERATE_MODES)  # 'propose', 'sample', or 'auto' (sample where a thought is a whole candidate)
    eval_style: str = option("score", choices=EVAL_STYLES)  # Yao et al. value a partial state on a graded scale


@SEARCH_ALGORITHMS.register("bfs")
@dataclass(frozen=True)
class BeamSearch:
    """Yao et al.'s BFS with beam b (the ``bfs`` search algorithm): expand the beam, keep the b best
    children; the answer is the best thought of the last level kept."""

    config: BFSConfig

    @classmethod
    def from_config(cls, cfg: BFSConfig) -> "BeamSearch":
        return cls(cfg)

    async def loop(self, s: SearchRun, root: Node) -> None:
        cfg = self.config
        frontier = [root]
        for level in range(cfg.max_depth):
            if not frontier or (cfg.stop_at_goal and any(s.solved(n) for n in frontier)):
                break
            growing = [n for n in frontier if not s.complete(n)]
            if not growing:  # a beam of complete states: no level can add to it
                break
            phase(s.ctx.trace, "depth", level + 1, cfg.max_depth)
            groups = await s.expand_many(growing, max(cfg.k, cfg.beam))
            children = [c for g in groups for c in g]
            await s.evaluate(children)
            if not children:  # the level is spent; the next one expands the same beam again (retry_empty)
                if s.empty(growing[0]):
                    continue
                s.notes["stopped_early"] = f"no readable child of the beam at depth {growing[0].depth + 1}"
                break
            kept = [n for n in frontier if n not in growing]  # a complete state stays a candidate for the beam
            frontier = sorted(children + kept, key=lambda n: (-(n.score or 0.0), n.id))[: cfg.beam]
            if frontier:
                s.current = frontier[0]

    def choose(self, s: SearchRun) -> Node:
        """The best thought of the last level kept (the root if no level grew)."""
        return s.current


@register("tot-bfs")
class ToTBFS(TreeSearch):
    """Tree of Thoughts, BFS with beam b: propose, value (sampled), keep the b best; no feedback."""

    Config = BFSConfig
    algorithm = "tot-bfs"
    generator = "tot"
    search_algorithm = "bfs"


@register("tot-dfs")
class ToTDFS(TreeSearch):
    """Tree of Thoughts, DFS: sculpt-dfs-backtrack's loop over proposed thoughts, without feedback."""

    Config = ToTDFSConfig
    algorithm = "tot-dfs"
    generator = "tot"
    search_algorithm = "dfs-backtrack"

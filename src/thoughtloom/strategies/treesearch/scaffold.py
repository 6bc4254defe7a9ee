"""The base of every tree strategy (sculpt-mcts, sculpt-dfs,
sculpt-dfs-backtrack, tot-bfs, tot-dfs, self-refine): one run's
:class:`SearchRun` state and the :class:`TreeSearch` scaffold around a
strategy's control loop.

``TreeSearch.solve`` makes the run's state, the root and its evaluation,
runs the subclass's :meth:`~TreeSearch.loop` until it ends or the
per-question budget runs out (the tree so far is the run's best result so
far, :meth:`Context.best_so_far`: a budget stop answers from it), and
builds the :class:`Result`. A
subclass names its ``algorithm``, picks its ``generator`` class, writes
``loop`` (its control loop; named so since ``search`` is retrieval,
``Context.search``) and, if its answer is not the best-scored node, ``choose``.

A :class:`SearchRun` is created inside ``solve`` and dropped with it; it holds
the only mutable state of a run, so one strategy object serves any number
of questions at once.

Trace events (``tree_node``, ``tree_eval``, ``tree_eval_salvaged``, ``tree_eval_limited``,
``tree_rejected``, ``tree_select``, ``tree_backprop``,
``tree_prune``, ``tree_budget_trim``, ``tree_answer``, ``malformed``
with ``what`` tree_root / tree_child / tree_evaluation) and their
fields: :mod:`thoughtloom.core.events`. Each loop names its steps with
``phase`` events ("first answer", then "rollout 3/8", "expansion 2/8",
"depth 2/3", "round 1/3") for live progress.
"""

from __future__ import annotations

import hashlib
import random
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.events import phase
from ...core.options import Options, option
from ...core.types import Problem
from ..context import Context
from ..interface import DEFAULT_MAX_CALLS, Strategy
from ..result import Result
from .evaluator import EVAL_STYLES, ModelEvaluator, SymbolicEvaluator
from .generator import ThoughtGenerator
from .tree import Node, Tree, render_tree
from .world import World


#: ``evaluation``: how a node is scored (itemized where the task has items, under ``auto``).
EVALUATIONS = ("auto", "holistic", "itemized")
#: ``evaluator``: the model's verdict, or the task's exact checker.
EVALUATORS = ("model", "symbolic")


@dataclass(frozen=True)
class SearchConfig(Options):
    """Knobs shared by every tree strategy (paper defaults: k=3, depth 3, T=0.7)."""

    k: int = option(3, min=0)                     # children per expansion
    max_depth: int = option(3, min=1)             # deepest node level (root = 0)
    temperature: float = option(0.7, min=0)       # generator sampling temperature
    eval_temperature: float = option(0.0, min=0)  # evaluator: greedy, so scores are reproducible
    evaluation: str = option("auto", choices=EVALUATIONS)  # 'holistic', 'itemized', or 'auto' (itemized where the task has items)
    evaluator: str = option("model", choices=EVALUATORS)   # 'model', or 'symbolic' (task's exact checker sets the score)
    gen_max_tokens: int = option(256, min=1)      # cap on each generated candidate
    eval_max_tokens: int = option(384, min=1)     # cap on each evaluation
    malformed_score: float = option(0.0, min=0)   # score of a node whose evaluation could not be read
    goal_score: float = option(1.0, min=0)        # a node scoring this high ends the search early
    keep_tree: bool = True                        # put the tree JSON in Result.details
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question
    value_samples: int = option(1, min=1, max=100)  # evaluations per node, mean score
    score_limits: bool = option(True, help="hold the model's scores to the task's own rubric limits, a symbolic "
                                "check that can only lower a score (crosswords: a clue with blanks scores at "
                                "most 5/10, so a board with blanks never counts as solved)")
    eval_schema: bool = option(True, help="send the evaluation reply's JSON schema (0-10 integer scores) with "
                               "each evaluation request, for backends that constrain output to it; false: the "
                               "prompt alone asks for the shape")
    eval_style: str = option("auto", choices=EVAL_STYLES, help="the evaluation prompt: 'auto', the task's "
                             "own (ThoughtSculpt App. A: CommonGen's verdict, Game of 24's correctness check, "
                             "outlines' least interesting spans, else a 0-10 score); 'score', 'verdict' or "
                             "'check' for every task, 'spans' for a task with items")
    retry_empty: bool = option(True, help="an expansion with no readable child spends one of the method's steps "
                               "(rollout, expansion, level, round) and the next step expands the same node(s) "
                               "again; the one rule of every tree method (no paper says what to do); false: the "
                               "search ends there (a backtracking DFS goes back up, as Yao et al.'s does)")


class SearchRun:
    """One run's state: the world, the tree, its generator and evaluator, and an rng seeded per problem."""

    def __init__(self, problem: Problem, ctx: Context, cfg: SearchConfig,
                 generator: type[ThoughtGenerator]) -> None:
        self.ctx, self.cfg = ctx, cfg
        self.world = World.of(problem, ctx.task)
        self.tree = Tree(ctx.trace)
        self.generator = generator.of(self.world, ctx, self.tree, cfg)
        evaluator = SymbolicEvaluator if cfg.evaluator == "symbolic" else ModelEvaluator
        self.evaluator = evaluator(self.world, ctx, self.tree, evaluation=cfg.evaluation,
                                   max_tokens=cfg.eval_max_tokens, temperature=cfg.eval_temperature,
                                   malformed_score=cfg.malformed_score, samples=cfg.value_samples,
                                   score_limits=cfg.score_limits, schema=cfg.eval_schema,
                                   style=cfg.eval_style, proposals=cfg.k)
        digest = hashlib.sha256(f"{ctx.seed}:{problem.id}".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        self.current: Node | None = None  # the node a chain stands on (the root until a loop moves it)
        self.notes: dict[str, Any] = {}  # a loop's own figures for Result.details (rollouts done, why it ended)
        self.held: tuple[list[Node], int] = ([], 0)  # MCTS: the leaves carrying a virtual loss, and its size

    def empty(self, node: Node) -> bool:
        """The one rule for an expansion of ``node`` that gave no readable child, in every tree method:
        count it (``details["empty_expansions"]``), trace it (``tree_empty``) and say whether the method
        tries again (``retry_empty``). Either way the attempt has spent one of the method's steps."""
        self.notes["empty_expansions"] = self.notes.get("empty_expansions", 0) + 1
        self.ctx.trace.emit("tree_empty", node=node.id, depth=node.depth, retry=self.cfg.retry_empty)
        return self.cfg.retry_empty

    def solved(self, node: Node) -> bool:
        return node.score is not None and node.score >= self.cfg.goal_score

    def result(self, best: Node, algorithm: str) -> Result:
        w = self.world
        answer = w.view.candidate_answer(w.problem, best.candidate)
        details: dict[str, Any] = {
            "algorithm": algorithm, "chosen": best.id, "nodes": len(self.tree.nodes),
            "chosen_score": best.score, "chosen_mean": best.mean_value,
            "chosen_evaluator": best.evaluator, "chosen_salvaged": best.salvaged,
            "revised": sum(n.kind == "revised" for n in self.tree.nodes),
            "extended": sum(n.kind == "extended" for n in self.tree.nodes),
            "evaluator": self.cfg.evaluator,
            "chosen_rendered": w.view.render(w.problem, best.candidate),
            **self.notes,
        }
        if getattr(w.view, "judged_metrics", ()):  # a task judged per step (eval.judge): Fig. 4's curve
            # step s's answer: the best-scored node within s revisions of the root
            details["step_best"] = [w.view.candidate_answer(w.problem, self.tree.best_within(d).candidate)
                                    for d in range(max(n.depth for n in self.tree.nodes) + 1)]
        if self.cfg.keep_tree:
            details["tree"] = self.tree.to_json()
        self.ctx.trace.emit("tree_answer", node=best.id, answer=answer, path=[n.id for n in self.tree.path(best)])
        return Result(answer=answer, text=best.candidate, confidence=best.score, details=details)


class TreeSearch(Strategy):
    """A search over a tree of candidate solutions; subclasses add only the control loop."""

    Config = SearchConfig
    needs = "search"
    algorithm: ClassVar[str] = ""  # details["algorithm"]
    generator: ClassVar[type[ThoughtGenerator]] = ThoughtGenerator
    # a capped run trims its last batch to the budget left (budget.affordable)
    anytime_exact = "batch boundaries"
    retired = {**Strategy.retired,
               "search": "a tree strategy's control loop is named loop(s, root) (search is retrieval: Context.search)"}

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        s = SearchRun(problem, ctx, self.config, self.generator)
        ctx.best_so_far(lambda: self._answer(s))  # a budget stop answers from the tree so far
        phase(ctx.trace, "first answer")
        s.current = root = await s.generator.root()
        await s.evaluator.evaluate([root])
        await self.loop(s, root)
        return self._answer(s)

    def _answer(self, s: SearchRun) -> Result:
        if not s.tree.nodes:
            return Result(answer="", details={"nodes": 0})
        return s.result(self.choose(s), self.algorithm)

    @abstractmethod
    async def loop(self, s: SearchRun, root: Node) -> None:
        """Grow ``s.tree`` from the evaluated ``root`` (the strategy's control loop)."""

    def choose(self, s: SearchRun) -> Node:
        """The answer node: by default the best-scored node seen."""
        return s.tree.best_by_score()

    def report(self, result: Result) -> str:
        return report(result)


def report(result: Result) -> str:
    """The tree summary ``thoughtloom run`` prints."""
    d = result.details
    head = (f"{d.get('algorithm', 'search')}: {d.get('nodes', 0)} nodes "
            f"({d.get('revised', 0)} revised, {d.get('extended', 0)} extended); "
            f"chosen #{d.get('chosen')} score={d.get('chosen_score')}{_score_note(d)} evaluator={d.get('evaluator')}"
            + ("; budget exhausted" if result.stopped == "budget" else ""))
    tree = d.get("tree")
    body = render_tree(tree, d.get("chosen")) if tree else ""
    chosen = d.get("chosen_rendered") or result.text
    return f"{head}\n{body}\nchosen candidate:\n{chosen}"


def _score_note(details: dict[str, Any]) -> str:
    """Where the chosen node's score came from, when not from a readable evaluation."""
    if details.get("chosen_salvaged"):
        return " (salvaged: read in part from a malformed evaluation)"
    if details.get("chosen_evaluator") == "malformed":
        return " (no readable evaluation: malformed_score)"
    if "chosen_evaluator" in details and details.get("chosen_score") is None:
        return " (not evaluated)"
    return ""

"""The base of every tree strategy (sculpt-mcts, sculpt-dfs,
sculpt-dfs-backtrack, tot-bfs, tot-dfs, self-refine): one run's
:class:`SearchRun` state and the :class:`TreeSearch` scaffold around its
parts (:mod:`.parts`: a generator, an evaluator, a search algorithm).

``TreeSearch.solve`` makes the run's state, the root and its evaluation,
runs the search algorithm's control loop (:meth:`~TreeSearch.loop`) until
it ends or the per-question budget runs out (the tree so far is the run's
best result so far, :meth:`Context.best_so_far`: a budget stop answers from
it), and builds the :class:`Result` from the algorithm's answer node
(``choose``). A strategy class names its ``algorithm`` (the label in
``details``), its ``generator`` and its ``search_algorithm`` (registry keys;
the evaluator's key is the ``evaluator`` option); an object passed to the
constructor takes a part's place.

A :class:`SearchRun` is created inside ``solve`` and dropped with it; it holds
the only mutable state of a run, so one strategy object serves any number
of questions at once.

Trace events (``tree_node``, ``tree_eval``, ``tree_eval_salvaged``, ``tree_eval_limited``,
``tree_rejected``, ``tree_select``, ``tree_backprop``, ``tree_empty``, ``tree_complete``,
``tree_prune``, ``tree_budget_trim``, ``tree_answer``, ``malformed``
with ``what`` tree_root / tree_child / tree_evaluation) and their
fields: :mod:`thoughtloom.core.events`. Each loop names its steps with
``phase`` events ("first answer", then "rollout 3/8", "expansion 2/8",
"depth 2/3", "round 1/3") for live progress.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

from ...core.events import phase
from ...core.options import Options, option
from ...core.types import Problem
from ..context import Context
from ..interface import DEFAULT_MAX_CALLS, Strategy
from ..result import Result
from .evaluator import EVAL_STYLES
from .generator import ThoughtGenerator, ToTGenerator  # noqa: F401 (registers the built-in generators)
from .parts import EVALUATORS, GENERATORS, Evaluator, Generator, Registry
from .tree import Node, Tree, render_tree
from .world import World


#: ``evaluation``: how a node is scored (itemized where the task has items, under ``auto``).
EVALUATIONS = ("auto", "holistic", "itemized")


@dataclass(frozen=True)
class SearchConfig(Options):
    """Knobs shared by every tree strategy (paper defaults: k=3, depth 3, T=0.7)."""

    k: int = option(3, min=0)                     # children per expansion
    max_depth: int = option(3, min=1)             # deepest node level (root = 0)
    temperature: float = option(0.7, min=0)       # generator sampling temperature
    eval_temperature: float = option(0.0, min=0)  # evaluator: greedy, so scores are reproducible
    evaluation: str = option("auto", choices=EVALUATIONS)  # 'holistic', 'itemized', or 'auto' (itemized where the task has items)
    evaluator: str = option("model", choices=EVALUATORS.names())  # 'model', or 'symbolic' (task's exact checker sets the score), or one registered
    gen_max_tokens: int = option(256, min=1)      # cap on each generated candidate (a reply listing k: k times it)
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
    """One run's state: the world, the tree, the parts that grow and judge it, and an rng seeded per problem.

    The only mutable state of a run (the parts and the strategy keep none), handed to each part's
    methods; a control loop calls the parts through it (:meth:`expand`, :meth:`evaluate`)."""

    def __init__(self, problem: Problem, ctx: Context, cfg: SearchConfig, generator: Generator,
                 evaluator: Evaluator) -> None:
        self.ctx, self.cfg = ctx, cfg
        self.world = World.of(problem, ctx.task)
        self.tree = Tree(ctx.trace)
        self.generator, self.evaluator = generator, evaluator
        digest = hashlib.sha256(f"{ctx.seed}:{problem.id}".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        self.current: Node | None = None  # the node a chain stands on (the root until a loop moves it)
        self.notes: dict[str, Any] = {}  # a loop's own figures for Result.details (rollouts done, why it ended)
        self._samples = 0  # the generator's requests so far: each gets the next sample index
        self._complete: set[int] = set()  # nodes found complete (traced once each)

    def next_sample(self) -> int:
        """A sample index no earlier generation request of this run had (N samples are N cache entries)."""
        self._samples += 1
        return self._samples

    async def root(self) -> Node:
        """The tree's first node, from the generator (:class:`~.parts.Generator`)."""
        return await self.generator.root(self)

    async def expand_many(self, nodes: Sequence[Node], k: int, *, simulated: bool = False) -> list[list[Node]]:
        """Up to ``k`` children for each of ``nodes``, one generation batch (:class:`~.parts.Generator`)."""
        return await self.generator.expand_many(self, nodes, k, simulated=simulated)

    async def expand(self, node: Node, k: int, *, simulated: bool = False) -> list[Node]:
        """Up to ``k`` children of ``node``, one generation batch."""
        return (await self.expand_many([node], k, simulated=simulated))[0]

    async def evaluate(self, nodes: Sequence[Node]) -> None:
        """Score every node of ``nodes`` not scored yet, one evaluation batch (:class:`~.parts.Evaluator`)."""
        await self.evaluator.evaluate(self, nodes)

    def empty(self, node: Node) -> bool:
        """The one rule for an expansion of ``node`` that gave no readable child, in every tree method:
        count it (``details["empty_expansions"]``), trace it (``tree_empty``) and say whether the method
        tries again (``retry_empty``). Either way the attempt has spent one of the method's steps."""
        self.notes["empty_expansions"] = self.notes.get("empty_expansions", 0) + 1
        self.ctx.trace.emit("tree_empty", node=node.id, depth=node.depth, retry=self.cfg.retry_empty)
        return self.cfg.retry_empty

    def complete(self, node: Node) -> bool:
        """Whether ``node`` is a complete state its generator cannot add to (:meth:`~.parts.Generator.can_grow`):
        a search spends no step on expanding it (a depth-first one goes back up, as Yao et al.'s does at a
        full board), unlike an expansion that came back unreadable (:meth:`empty`). Traced once per node
        (``tree_complete``)."""
        if self.generator.can_grow(self, node):
            return False
        if node.id not in self._complete:
            self._complete.add(node.id)
            self.ctx.trace.emit("tree_complete", node=node.id, depth=node.depth)
        return True

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
            "evaluator": self.evaluator.name,
            "chosen_rendered": w.view.render(w.problem, best.candidate),
            **self.notes,
        }
        if w.view.judged_metrics:  # a task judged per step (eval.judge): Fig. 4's curve
            # step s's answer: the best-scored node within s revisions of the root
            details["step_best"] = [w.view.candidate_answer(w.problem, self.tree.best_within(d).candidate)
                                    for d in range(max(n.depth for n in self.tree.nodes) + 1)]
        if self.cfg.keep_tree:
            details["tree"] = self.tree.to_json()
        self.ctx.trace.emit("tree_answer", node=best.id, answer=answer, path=[n.id for n in self.tree.path(best)])
        return Result(answer=answer, text=best.candidate, confidence=best.score, details=details)


@runtime_checkable
class SearchAlgorithm(Protocol):
    """How we search (the third part, beside :mod:`.parts`' generator and evaluator): the control
    loop over one run's tree, and the answer node. Built once per strategy (``from_config``); all it
    changes is the run it is handed."""

    async def loop(self, run: SearchRun, root: Node) -> None:
        """Grow ``run.tree`` from the evaluated ``root`` until the method's steps are spent."""
        ...

    def choose(self, run: SearchRun) -> Node:
        """The answer node of the tree as it stands (also read by a budget stop mid-loop)."""
        ...


#: Control loops by name: ``mcts``, ``dfs`` (Algorithm 2's descent), ``dfs-backtrack``, ``bfs``, ``refine``.
SEARCH_ALGORITHMS: Registry[SearchAlgorithm] = Registry("search algorithm")


@dataclass(frozen=True)
class TreeParts:
    """A tree strategy's parts (:mod:`.parts`): built once, shared by every run of the strategy."""

    generator: Generator
    evaluator: Evaluator
    search_algorithm: SearchAlgorithm | None  # None: the strategy class writes its own loop


class TreeSearch(Strategy):
    """A search over a tree of candidate solutions: a generator, an evaluator and a search algorithm.

    Each part is looked up by name in its registry (the class's ``generator`` and ``search_algorithm``
    keys, the config's ``evaluator``) and made from the config, unless an object is passed in
    (``SculptMCTS(config, evaluator=MyEvaluator())``). A subclass may instead write ``loop`` (and
    ``choose``) itself, leaving ``search_algorithm`` empty."""

    Config = SearchConfig
    needs = "search"
    algorithm: ClassVar[str] = ""  # details["algorithm"]
    generator: ClassVar[str] = "revise"  # its generator's key in GENERATORS
    search_algorithm: ClassVar[str] = ""  # its control loop's key in SEARCH_ALGORITHMS ('': it writes loop)
    # a capped run trims its last batch to the budget left (budget.affordable)
    anytime_exact = "batch boundaries"
    retired = {**Strategy.retired,
               "search": "a tree strategy's control loop is named loop(s, root) (search is retrieval: Context.search)"}

    def __init__(self, config: Any = None, *, generator: Generator | None = None,
                 evaluator: Evaluator | None = None, search_algorithm: SearchAlgorithm | None = None) -> None:
        super().__init__(config)
        cls, cfg = type(self), self.config
        if search_algorithm is None and cls.search_algorithm:
            search_algorithm = SEARCH_ALGORITHMS.make(cls.search_algorithm, cfg)
        if search_algorithm is None and cls.loop is TreeSearch.loop:
            raise TypeError(f"{cls.__qualname__} has no control loop: name a search_algorithm "
                            f"(one of: {', '.join(SEARCH_ALGORITHMS.names())}), pass one, or write loop(s, root)")
        self.parts = TreeParts(generator if generator is not None else GENERATORS.make(cls.generator, cfg),
                               evaluator if evaluator is not None else EVALUATORS.make(cfg.evaluator, cfg),
                               search_algorithm)

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        s = SearchRun(problem, ctx, self.config, self.parts.generator, self.parts.evaluator)
        ctx.best_so_far(lambda: self._answer(s))  # a budget stop answers from the tree so far
        phase(ctx.trace, "first answer")
        s.current = root = await s.root()
        await s.evaluate([root])
        await self.loop(s, root)
        return self._answer(s)

    def _answer(self, s: SearchRun) -> Result:
        if not s.tree.nodes:
            return Result(answer="", details={"nodes": 0})
        return s.result(self.choose(s), self.algorithm)

    async def loop(self, s: SearchRun, root: Node) -> None:
        """Grow ``s.tree`` from the evaluated ``root``: the search algorithm's control loop."""
        assert self.parts.search_algorithm is not None  # __init__ refuses a class with neither
        await self.parts.search_algorithm.loop(s, root)

    def choose(self, s: SearchRun) -> Node:
        """The answer node: the search algorithm's; for a class that writes its own loop, the best-scored node."""
        if self.parts.search_algorithm is not None:
            return self.parts.search_algorithm.choose(s)
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

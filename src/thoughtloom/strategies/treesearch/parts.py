"""The three replaceable parts of a tree search, each a protocol and a registry.

llm-reasoners' split, typed and stateless: *what the world is* is the
:class:`~.world.World` (one problem as the task shows it to a search); the
parts are

- a :class:`Generator`: where nodes come from (the root, a node's children);
- an :class:`Evaluator`: how good a node is (its score in [0, 1] and feedback);
- a :class:`SearchAlgorithm`: how we search (the control loop, and which node
  is the answer).

A part is built once per strategy object from its config (``from_config``)
and serves any number of runs at once: it keeps no per-run state on
``self``. Everything one run owns (the world, the tree, the context with its
trace, budget and role models, the rng, the generator's sample counter) is
on the :class:`~.scaffold.SearchRun` each method is handed (a generator and
an evaluator read it as a :class:`RunView`; a search algorithm drives the
whole run). The generator and evaluator protocols and registries are here;
the search algorithm's, :class:`~.scaffold.SearchAlgorithm` and
:data:`~.scaffold.SEARCH_ALGORITHMS`, are beside the run they drive.

Each part has a registry (:data:`GENERATORS`, :data:`EVALUATORS`,
``SEARCH_ALGORITHMS``): a strategy names its generator and search
algorithm by key, and the ``evaluator`` option picks the evaluator's key
(``model``, ``symbolic``, or any key registered since). A part object of
one's own may also be passed straight to a strategy
(``SculptMCTS(config, evaluator=MyEvaluator())``): it needs only the
protocol's methods, no registration and no ``from_config``.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, KeysView, Protocol, Sequence, TypeVar, runtime_checkable

from ...core.names import unknown
from ..context import Context
from .tree import Node, Tree
from .world import World


class RunView(Protocol):
    """What a generator or an evaluator reads of one run (a :class:`~.scaffold.SearchRun` is one)."""

    world: World  # the problem and the task as the search sees it
    ctx: Context  # the run's trace, budget, prompts and role models (ctx.lm_for("generator"))
    tree: Tree  # every node so far; a part adds and reports nodes through it

    def next_sample(self) -> int:
        """A sample index no earlier generation request of this run had."""
        ...


@runtime_checkable
class Generator(Protocol):
    """Where a search's nodes come from; every node it makes joins ``run.tree``."""

    async def root(self, run: RunView) -> Node:
        """The tree's first node (the task's given start, or the generator's own)."""
        ...

    async def expand_many(self, run: RunView, nodes: Sequence[Node], k: int, *,
                          simulated: bool = False) -> list[list[Node]]:
        """Up to ``k`` new children for each of ``nodes``, all requested in one batch.
        An empty list for a node is an expansion with no readable child. A simulated
        child (an MCTS rollout step) joins the tree but leaves its parent unexpanded."""
        ...

    def can_grow(self, run: RunView, node: Node) -> bool:
        """Whether ``node`` can have a child at all: False for a complete state this generator
        cannot add to (a full crossword board, where a child may only fill a blank). A search
        does not spend a step on expanding such a node; a depth-first one goes back up."""
        ...


@runtime_checkable
class Evaluator(Protocol):
    """How good a node is. ``name`` is what ``details["evaluator"]`` reports."""

    name: str

    async def evaluate(self, run: RunView, nodes: Sequence[Node]) -> None:
        """Set ``score`` (in [0, 1]), ``feedback``, ``items`` and ``evaluator`` on each node of
        ``nodes`` whose score is None, in one batch, and report each with ``run.tree.scored``."""
        ...


Part = TypeVar("Part")


class Registry(Generic[Part]):
    """Parts of one kind by name, each made from a strategy's config by its class's ``from_config``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._makers: dict[str, Callable[[Any], Part]] = {}

    def register(self, name: str) -> Callable[[type], type]:
        """Class decorator: ``name`` makes the class's ``from_config(config)`` (and, as strategies
        are, sets ``cls.name``); a name already held by another class is refused."""
        def deco(cls: type) -> type:
            held = self._makers.get(name)
            if held is not None and getattr(held, "__self__", None) is not cls:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            cls.name = name
            self._makers[name] = cls.from_config  # type: ignore[attr-defined]
            return cls
        return deco

    def make(self, name: str, config: Any) -> Part:
        """The part registered as ``name``, made for ``config``."""
        try:
            maker = self._makers[name]
        except KeyError:
            raise unknown(self.kind, name, self._makers) from None
        return maker(config)

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a test's or a session's own part, put back as it was)."""
        self._makers.pop(name, None)

    def names(self) -> KeysView[str]:
        """The registered names, a live view: an option whose choices are these accepts a part
        registered after the option was declared."""
        return self._makers.keys()


#: Generators by name: ``revise`` (ThoughtSculpt, Self-Refine) and ``tot`` (Tree of Thoughts).
GENERATORS: Registry[Generator] = Registry("tree generator")
#: Evaluators by name, the ``evaluator`` option's choices: ``model`` and ``symbolic`` built in.
EVALUATORS: Registry[Evaluator] = Registry("tree evaluator")

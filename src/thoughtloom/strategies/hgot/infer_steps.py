"""HGOT's Infer as a pluggable step: a small protocol, a registry, the paper's Infer as the default.

An Infer step answers one question of the hierarchy over its pool of scored passages and returns
an :class:`~.infer.InferOutcome` (answer, confidence, the pool rescored, the passages it showed).
:mod:`.levels` calls the step that the ``infer`` option names, built once per config
(:func:`infer_step`):

* ``cited`` (the default): the paper's Infer (:func:`.infer.infer`), cited thoughts sampled,
  judged, voted by quality, passages rescored -- as before this seam, byte for byte;
* any registered strategy and its options, e.g. ``infer="cot-sc n=5"`` (``--set infer="cot-sc n=5"``,
  ``thoughtloom.solve("hgot", ..., infer="cot-sc")``): the strategy answers the question with the
  top-K passages as its problem's context (numbered as the paper's Infer shows them, and the
  sub-answer hints where ``hints`` is on), as one step of the run
  (:func:`thoughtloom.strategies.steps.run_step`: the run's budget and trace, its events inside
  ``within: [{"step": "hgot_infer", "node": ..., "strategy": ...}]``); its answer and confidence are
  the node's, and the pool is rescored as the paper's rescoring does for a passage never cited
  (citation frequency 0: ``w1 * score + w3 * confidence``), since such a step cites nothing;
* a step of your own: :func:`register_infer` ``(name, factory)``, ``factory(cfg, spec) -> InferStep``.

Each Infer is traced as ``hgot_infer`` (a strategy step's ``thoughts`` is empty; its ``tally`` is
the strategy's own where it has one, as cot-sc's) and ``passage_scores``.
"""

from __future__ import annotations

import functools
from typing import Callable, Protocol, Sequence

from ...core.errors import ConfigError
from ...core.types import Problem, ScoredPassage
from ..context import Context
from ..passages import numbered
from ..registry import available
from ..steps import StepSpec, build_step, parse_spec, run_step
from .config import HGOTConfig
from .infer import InferOutcome, infer, top_passages, trace_pool_update, update_pool
from .node import QuestionNode


class InferStep(Protocol):
    """One Infer of a node: its answer over ``pool`` (``demos``: the Infer demonstrations, ``hints``:
    the steps' answers where ``hints`` is on)."""

    async def __call__(self, ctx: Context, node: QuestionNode, pool: Sequence[ScoredPassage], demos: str,
                       hints: str = "") -> InferOutcome: ...


class CitedInfer:
    """The paper's Infer (§3.1-3.3): :func:`.infer.infer` with the run's config."""

    def __init__(self, cfg: HGOTConfig) -> None:
        self.cfg = cfg

    async def __call__(self, ctx: Context, node: QuestionNode, pool: Sequence[ScoredPassage], demos: str,
                       hints: str = "") -> InferOutcome:
        return await infer(ctx, self.cfg, node, pool, demos, hints)


class StrategyInfer:
    """A registered strategy as the Infer step (see the module)."""

    def __init__(self, cfg: HGOTConfig, spec: StepSpec) -> None:
        self.cfg, self.spec = cfg, spec

    async def __call__(self, ctx: Context, node: QuestionNode, pool: Sequence[ScoredPassage], demos: str,
                       hints: str = "") -> InferOutcome:
        top, texts = top_passages(self.cfg, pool)
        context = numbered(texts) + (f"\n\n{hints}" if hints else "")
        step = await run_step(build_step(self.spec, ctx.task), Problem(f"hgot:{node.id}", node.question, context),
                              ctx, step="hgot_infer", node=node.id, strategy=self.spec.name)
        result = step.result
        confidence = float(result.confidence or 0.0) if result.answer else 0.0
        update = update_pool(self.cfg, top, pool, [0.0] * len(top), confidence)
        ctx.trace.emit("hgot_infer", node=node.id, depth=node.depth, question=node.question, thoughts=[],
                       tally=result.details.get("tally", {}), answer=result.answer or None, confidence=confidence)
        trace_pool_update(ctx, node, update)
        return InferOutcome(result.answer, confidence, update.pool, [], result.text, tuple(texts))


InferFactory = Callable[[HGOTConfig, StepSpec], InferStep]

#: The Infer steps by name (``infer`` option); a name not here that is a registered strategy runs
#: that strategy (:class:`StrategyInfer`).
def _cited(cfg: HGOTConfig, spec: StepSpec) -> InferStep:
    if spec.options:
        raise ConfigError(f"bad value for hgot option infer: {spec.render()!r} (the paper's Infer takes no "
                          "options of its own)", hint="set HGOT's own options: --set samples=20 ...")
    return CitedInfer(cfg)


_STEPS: dict[str, InferFactory] = {"cited": _cited}


def register_infer(name: str, factory: InferFactory) -> InferFactory:
    """Name an Infer step: ``factory(cfg, spec)`` builds it (``spec.options``: what ``infer="NAME K=V"``
    gave); a name another factory holds is refused."""
    if name in _STEPS and _STEPS[name] is not factory:
        raise ValueError(f"Infer step {name!r} is registered twice")
    _STEPS[name] = factory
    return factory


@functools.lru_cache(maxsize=64)
def infer_step(cfg: HGOTConfig) -> InferStep:
    """The Infer step ``cfg.infer`` names, built once per config (a ConfigError for an unknown name or
    a bad option, raised when the strategy is built, before any call)."""
    spec = parse_spec(cfg.infer, "hgot option infer")
    if spec.name in _STEPS:
        return _STEPS[spec.name](cfg, spec)
    if spec.name not in available():
        raise ConfigError(f"bad value for hgot option infer: {cfg.infer!r} (no Infer step or strategy "
                          f"{spec.name!r})", hint="Infer steps: " + ", ".join(sorted(_STEPS))
                          + "; or a strategy: " + ", ".join(available()))
    build_step(spec, where=f"hgot option infer {cfg.infer!r}")  # its options are checked now
    return StrategyInfer(cfg, spec)

"""``hgot``: Hierarchical Graph of Thoughts (Fang, Thomas & Zhu, arXiv 2402.09390).

Probe the question, then solve it level by level (see :mod:`.levels`):
cited thoughts sampled in one batch, weighted by citation quality
(:mod:`.quality`), voted (:mod:`.vote`), with passages re-scored after
every Infer and sub-questions planned as a DAG (:mod:`.plan`).

Needs ``ctx.retriever`` (closed book otherwise: empty pools, traced) and
uses ``ctx.entail`` for thought quality (without a judge every thought
weighs 1 and the vote is plain self-consistency; traced).

A spent budget ends the run with the root's answer so far: the result is
the root (its plan, if any, and ``stop: budget exceeded``), marked
``stopped="budget"``. Once the root's thoughts are sampled they answer,
even before the judge has weighed them (a plain vote, and the stop says so);
a budget too small for the first thoughts leaves no answer.
"""

from __future__ import annotations

from typing import Any

from ...core.types import Problem
from ..context import Context
from ..interface import Strategy
from ..registry import register
from ..result import Result
from . import demos as demolib
from . import levels
from .config import PRESETS, HGOTConfig
from .infer_steps import infer_step
from .probe import probe
from .similarity import encode, require_encoder
from .node import QuestionNode


@register("hgot")
class HGOT(Strategy):
    """Hierarchical graph of thoughts: planned sub-questions, cited thoughts, quality-weighted votes."""

    paper = "HGOT"
    needs = "open_domain"
    Config = HGOTConfig
    presets = PRESETS

    def __init__(self, config: HGOTConfig | None = None) -> None:
        super().__init__(config)
        if self.config.stop_rule == "cosine":
            require_encoder("stop_rule=cosine")
        infer_step(self.config)  # an unknown Infer step or a bad option of it is refused now, before any call
        # one per strategy object: the questions it answers share the demo file and the
        # vectors of demo questions already encoded, and nothing outlives the strategy
        self.demo_selector = demolib.DemoSelector(self.config, encode=encode)

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        cfg = self.config
        question = problem.question
        demos = self.demo_selector.select(question, ctx.seed)
        (pool,) = await probe(ctx, [question], cfg.k)
        root = QuestionNode(question, 0)
        # a budget stop answers with the root's answer so far (the tree's root, stopped)
        ctx.best_so_far(lambda: _stopped(ctx, root))
        await levels.first_answer(ctx, cfg, root, pool, demos)
        return _result(await levels.refine(ctx, cfg, root, demos))

    def demo_annotation(self) -> demolib.Annotation | None:
        """HGOT+KNN / +Sampling with no ``demo_file``: demos annotated by HGOT itself before the eval."""
        return demolib.annotation(self)

    def report(self, result: Result) -> str:
        tree = result.details.get("tree")
        if not tree:
            return ""
        lines: list[str] = []
        _render(tree, lines, "")
        lines.append("")
        lines.append("passages (final quality):")
        for i, p in enumerate(tree["passages"][: self.config.top_k], 1):
            lines.append(f"  [{i}] {p['score']:.3f}  {p['title'] or p['id']}")
        if result.text:
            lines.append("")
            lines.append(f"rationale: {result.text}")
        return "\n".join(lines)


def _stopped(ctx: Context, root: QuestionNode) -> Result:
    """A budget stop's result: the root's answer so far, stopped; the live tree is left as it
    was (an anytime look goes on with it)."""
    stop = root.stop
    try:
        return _result(levels.budget_stop(ctx, root), finished=False)
    finally:
        root.stop = stop


def _result(root: QuestionNode, finished: bool = True) -> Result:
    """The result; a finished run's ``details['context']`` holds the passages the Infer behind
    the root's answer showed, so an annotation of this run keeps them as its Rationale Context."""
    tree = root.to_dict()
    gathered = _gathered(tree)
    details = {"tree": tree, "passages": tree["passages"], "gathered": sorted(gathered),
               "gathered_titles": sorted({t for t in gathered.values() if t})}
    if finished:
        details["context"] = list(root.shown)
    return Result(answer=root.answer, text=root.rationale, confidence=root.confidence, details=details)


def _gathered(tree: dict[str, Any]) -> dict[str, str]:
    """Every passage in the final pools of the hierarchy: id -> title."""
    ids = {p["id"]: p["title"] for p in tree["passages"]}
    for child in tree["children"]:
        ids.update(_gathered(child))
    return ids


def _render(node: dict[str, Any], lines: list[str], indent: str) -> None:
    label = f"L{node['depth'] + 1}"
    conf = f"{node['confidence']:.0%}"
    lines.append(f"{indent}{label} {node['question']}  ->  {node['answer'] or '(none)'} ({conf}; {node['stop']})")
    if node.get("original"):
        lines.append(f"{indent}   (rewritten from: {node['original']})")
    plan = node.get("plan")
    if plan and node["children"]:
        deps = ", ".join(f"Step {u} -> Step {v}" for u, v in plan["edges"]) or "none"
        lines.append(f"{indent}   plan: {len(plan['steps'])} steps; dependencies: {deps}")
    for child in node["children"]:
        _render(child, lines, indent + "    ")

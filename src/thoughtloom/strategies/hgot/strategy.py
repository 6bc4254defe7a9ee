"""``hgot``: Hierarchical Graph of Thoughts (Fang, Thomas & Zhu, arXiv 2402.09390).

Probe the question, then solve it level by level (see :mod:`.search`):
cited thoughts sampled in one batch, weighted by citation quality
(:mod:`.quality`), voted (:mod:`.vote`), with passages re-scored after
every Infer and sub-questions planned as a DAG (:mod:`.plan`).

Needs ``ctx.retriever`` (closed book otherwise: empty pools, traced) and
uses ``ctx.entail`` for thought quality (without a judge every thought
weighs 1 and the vote is plain self-consistency; traced).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ...core.errors import BudgetExceeded
from ...core.types import Problem
from ..base import Context, Result, Strategy, register
from . import demos as demolib
from .config import HGOTConfig
from .probe import probe
from .search import solve


@lru_cache(maxsize=8)
def _demo_pool(path: str) -> tuple[demolib.Annotated, ...]:
    return tuple(demolib.load_annotated(path))


@lru_cache(maxsize=1)
def _minilm():
    """The packaged MiniLM sentence encoder, loaded once per process (needs the ``dense`` extra)."""
    from ...retrieval.dense import SentenceTransformerEncoder

    return SentenceTransformerEncoder()


_QUESTION_VECTORS: dict[str, Any] = {}  # text -> MiniLM row; demo questions are encoded once


def _minilm_embed(texts: list[str]):
    """texts -> unit rows for ``knn_select``, each distinct text encoded once per process."""
    import numpy as np

    missing = [t for t in dict.fromkeys(texts) if t not in _QUESTION_VECTORS]
    if missing:
        _QUESTION_VECTORS.update(zip(missing, _minilm().encode(missing)))
    return np.vstack([_QUESTION_VECTORS[t] for t in texts])


def select_demos(cfg: HGOTConfig, question: str, seed: int) -> dict[str, str]:
    if not cfg.demos:
        return {"plan": "", "rewrite": "", "infer": ""}
    pool = list(_demo_pool(cfg.demos))
    if cfg.demo_select == "knn":
        chosen = demolib.knn_select(question, pool, cfg.n_demos, embed=_minilm_embed)
    elif cfg.demo_select == "knn-bow":
        chosen = demolib.knn_select(question, pool, cfg.n_demos)
    elif cfg.demo_select == "balanced":
        chosen = demolib.balanced_select(pool, cfg.n_demos, seed)
    else:
        chosen = pool[: cfg.n_demos]
    return {"plan": demolib.render_plan_demos(chosen), "rewrite": demolib.render_rewrite_demos(chosen),
            "infer": demolib.render_infer_demos(chosen, cfg.thought_format)}


@register("hgot")
class HGOT(Strategy):
    """Hierarchical graph of thoughts: planned sub-questions, cited thoughts, quality-weighted votes."""

    Config = HGOTConfig

    async def run(self, problem: Problem, ctx: Context) -> Result:
        cfg = self.config
        question = problem.question
        demos = select_demos(cfg, question, ctx.seed)
        (pool,) = await probe(ctx, [question], cfg.k)
        try:
            root = await solve(ctx, cfg, question, pool, 0, demos)
        except BudgetExceeded:
            return Result(answer="", details={"budget_exceeded": True})
        tree = root.to_dict()
        gathered = _gathered(tree)
        return Result(answer=root.answer, text=root.rationale, confidence=root.confidence,
                      details={"tree": tree, "passages": tree["passages"], "gathered": sorted(gathered),
                               "gathered_titles": sorted({t for t in gathered.values() if t})})

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

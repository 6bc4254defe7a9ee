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

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...core.errors import BudgetExceeded, ConfigError
from ...core.types import Problem
from ..base import DEFAULT_MAX_CALLS, Context, Result, Strategy, register
from . import demos as demolib
from .infer import THOUGHT_FORMATS
from .probe import probe
from .search import solve


DEMO_SELECT = ("knn", "knn-bow", "balanced", "first")


@dataclass(frozen=True)
class HGOTConfig:
    # hierarchy
    max_depth: int = 2  # levels of questions; 1 = no planning (retrieve, cite, vote)
    max_steps: int = 4
    plan_retries: int = 1  # re-asks after an unusable plan, then a single-step plan
    stop_similarity: float = 0.7  # single-step plan this close to its question stops recursion
    # retrieval and passages
    k: int = 3  # passages probed per (sub-)question
    top_k: int = 5  # passages shown to Infer (K)
    clip: int = 7  # pool size after merging a level's passages
    parent_weight: float = 0.8  # a parent's passage scores are scaled by this when merged
    plan_context: int = 3  # passages shown to Plan
    passage_words: int = 0  # clip each passage to this many words in prompts (0 = whole)
    # thoughts: json (schema-constrained object) | lines (the paper's "Rationale/Answer" text)
    thought_format: str = "json"
    samples: int = 5  # thoughts per Infer, one batch
    temperature: float = 0.7
    max_tokens: int = 200  # a JSON thought of 3 statements runs to ~150 tokens
    plan_max_tokens: int = 160
    rewrite_max_tokens: int = 48
    # thought quality (alpha, beta, gamma) and passage quality (w1, w2, w3)
    alpha: float = 0.2
    beta: float = 0.4
    gamma: float = 0.4
    w1: float = 0.2
    w2: float = 0.55
    w3: float = 0.25
    entail_threshold: float = 0.5
    expand_citations: bool = True  # a passage that alone entails a statement counts as cited
    # demonstrations (authors' CSV format); selection: knn (MiniLM sentence embeddings, the
    # packaged all-MiniLM-L6-v2) | knn-bow (bag-of-words cosine, no model) | balanced | first
    demos: str | None = None
    demo_select: str = "knn"
    n_demos: int = 2
    max_calls: int = DEFAULT_MAX_CALLS  # finite bound on model calls per question

    def __post_init__(self) -> None:
        if self.max_depth < 1:
            raise ConfigError("hgot: max_depth must be >= 1")
        if self.demo_select not in DEMO_SELECT:
            raise ConfigError(f"hgot: demo_select={self.demo_select!r}", hint="use " + ", ".join(DEMO_SELECT))
        if self.thought_format not in THOUGHT_FORMATS:
            raise ConfigError(f"hgot: thought_format={self.thought_format!r}",
                              hint="use " + " or ".join(THOUGHT_FORMATS))
        if min(self.k, self.top_k, self.clip, self.samples) < 1:
            raise ConfigError("hgot: k, top_k, clip and samples must be >= 1")


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

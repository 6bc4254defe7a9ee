"""Infer (HGOT §3.1-3.3): cited thoughts sampled over the top-K passages of a
question's pool in ONE batch, weighed by citation quality, voted, and the
pool's passage scores updated.

:func:`infer` is the paper's Infer of a node, in its parts: :func:`top_passages`
(what it shows), :func:`sample_thoughts` (sampling), :func:`judge_thoughts`
(judging: citation recall and precision, thought quality), :func:`.answers.select_answer`
(voting) and :func:`update_pool` / :func:`trace_pool_update` (rescoring).
:func:`infer_requests` builds its sampled requests. What a thought is and how
a reply is read as one: :mod:`.thought`. Another Infer plugs in at
:mod:`.infer_steps`, which reuses the parts it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...core.events import malformed
from ...core.types import Request, ScoredPassage
from ..context import Context
from ..prompting import finished
from ..passages import numbered, passage_text
from .answers import Vote, select_answer, thought_answer
from .config import HGOTConfig
from .node import QuestionNode
from .probe import ranked
from .quality import (CitationScores, citation_frequency, citation_scores, entailment_pairs,
                      judge_pairs, passage_quality, thought_quality)
from .thought import Thought, how_many, parse_thought, thought_schema


@dataclass(frozen=True)
class InferOutcome:
    answer: str
    confidence: float
    pool: list[ScoredPassage]
    thoughts: list[dict[str, Any]]
    rationale: str = ""
    shown: tuple[str, ...] = ()  # the passages the prompt showed, [1] first (what the rationale cites)


def top_passages(cfg: HGOTConfig, pool: Sequence[ScoredPassage]) -> tuple[list[ScoredPassage], list[str]]:
    """The top-K passages of ``pool`` (``top_k``, best first) and their texts as the prompt shows them."""
    top = sorted(pool, key=lambda s: s.score, reverse=True)[: cfg.top_k]
    return top, [passage_text(s.passage, cfg.passage_words) for s in top]


async def sample_thoughts(ctx: Context, cfg: HGOTConfig, node: QuestionNode, texts: Sequence[str], demos: str,
                          hints: str = "") -> list[Thought]:
    """Sampling: ``samples`` cited thoughts over ``texts`` in one batch, each read as a thought (one
    cut off at max_tokens, or with no answer, is traced and does not vote)."""
    question, depth = node.question, node.depth
    reqs = infer_requests(ctx, question, texts, demos, hints, n=cfg.samples,
                          temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                          thought_format=cfg.thought_format, cap=cfg.thought_cap)
    completions = await ctx.lm.generate(reqs)
    # a thought cut off at max_tokens is read as no thought: it does not vote (traced as truncated)
    whole = [finished(ctx, c, "hgot_thought", depth=depth, index=i, node=node.id) for i, c in enumerate(completions)]
    thoughts = [parse_thought(c.text if ok else "", len(texts), i) for i, (c, ok) in enumerate(zip(completions, whole))]
    for t, c in zip(thoughts, completions):
        if t.answer is None and not c.truncated:
            malformed(ctx.trace, "hgot_thought", "no_answer", t.text, depth=depth, question=question,
                      index=t.index, node=node.id)
    return thoughts


async def judge_thoughts(ctx: Context, cfg: HGOTConfig, thoughts: Sequence[Thought],
                         texts: Sequence[str]) -> tuple[list[CitationScores | None], list[float]]:
    """Judging: each thought's citation scores (None without a judge) and its quality (1 without one)."""
    scores = await _score_thoughts(ctx, cfg, thoughts, texts)
    qualities = [thought_quality(s.recall, s.precision, cfg.alpha, cfg.beta, cfg.gamma)
                 if s is not None else 1.0 for s in scores]
    return scores, qualities


@dataclass(frozen=True)
class PoolUpdate:
    """Rescoring after an Infer: the pool re-ranked, and each passage's change (shown, and not shown)."""

    pool: list[ScoredPassage]
    shown: list[dict[str, Any]]
    unshown: list[dict[str, Any]]


def update_pool(cfg: HGOTConfig, top: Sequence[ScoredPassage], pool: Sequence[ScoredPassage],
                freq: Sequence[float], confidence: float) -> PoolUpdate:
    """Rescoring: every passage of ``pool`` after an Infer whose vote had ``confidence``, the shown
    ones (``top``) with their citation frequencies ``freq``, the others with 0 (:func:`rescore`)."""
    shown = {s.passage.id for s in top}
    unshown = [s for s in pool if s.passage.id not in shown]
    zeros = [0.0] * len(unshown)
    new_top, new_unshown = rescore(top, freq, confidence, cfg), rescore(unshown, zeros, confidence, cfg)
    return PoolUpdate(ranked([(s.passage, s.score) for s in new_top + new_unshown]),
                      _changes(top, freq, new_top), _changes(unshown, zeros, new_unshown))


def trace_pool_update(ctx: Context, node: QuestionNode, update: PoolUpdate) -> None:
    ctx.trace.emit("passage_scores", node=node.id, depth=node.depth, question=node.question,
                   passages=update.shown, unshown=update.unshown)


async def infer(ctx: Context, cfg: HGOTConfig, node: QuestionNode, pool: Sequence[ScoredPassage], demos: str,
                hints: str = "") -> InferOutcome:
    """The paper's Infer: sampled thoughts over ``pool`` for ``node``'s question, weighed and voted; the
    node holds their plain vote while they are judged (:meth:`QuestionNode.hold`)."""
    question, depth = node.question, node.depth
    top, texts = top_passages(cfg, pool)
    thoughts = await sample_thoughts(ctx, cfg, node, texts, demos, hints)
    plain = select_answer(ctx.task, thoughts, [1.0] * len(thoughts))
    node.hold(plain, _rationale(ctx, thoughts, plain))
    scores, qualities = await judge_thoughts(ctx, cfg, thoughts, texts)
    vote = select_answer(ctx.task, thoughts, qualities)
    voting = [i for i, t in enumerate(thoughts) if thought_answer(ctx.task, t)]
    freq = citation_frequency([_cited_by(thoughts[i], scores[i]) for i in voting],
                              [qualities[i] for i in voting], len(top))
    update = update_pool(cfg, top, pool, freq, vote.confidence)
    records = [{"index": t.index, "answer": t.answer, "rationale": t.rationale,
                "citations": [[st.text, [c + 1 for c in st.cites]] for st in t.statements],
                "recall": None if s is None else round(s.recall, 4),
                "precision": None if s is None else round(s.precision, 4),
                "quality": round(q, 4)} for t, s, q in zip(thoughts, scores, qualities)]
    ctx.trace.emit("hgot_infer", node=node.id, depth=depth, question=question, thoughts=records,
                   tally=vote.tally, answer=vote.winner, confidence=vote.confidence)
    trace_pool_update(ctx, node, update)
    return InferOutcome(vote.winner or "", vote.confidence, update.pool, records, _rationale(ctx, thoughts, vote),
                        tuple(texts))


def rescore(pool: Sequence[ScoredPassage], freq: Sequence[float], confidence: float,
            cfg: HGOTConfig) -> list[ScoredPassage]:
    """Passage quality after an Infer (:func:`.quality.passage_quality`), for EVERY passage of
    the pool: one the prompt did not show (beyond the top K) could not be cited, so its
    citation frequency is 0 and it gets ``w1 * s + w3 * conf``. Ranking the pool then never
    compares an updated score with a stale one (a stale score keeps the w2 and w3 terms of an
    earlier Infer and would outrank passages that were shown and not cited)."""
    return [ScoredPassage(s.passage, passage_quality(s.score, f, confidence, cfg.w1, cfg.w2, cfg.w3), s.rank)
            for s, f in zip(pool, freq)]


def _changes(old: Sequence[ScoredPassage], freq: Sequence[float],
             new: Sequence[ScoredPassage]) -> list[dict[str, Any]]:
    return [{"id": o.passage.id, "old": round(o.score, 4), "cite_freq": round(f, 4), "new": round(n.score, 4)}
            for o, f, n in zip(old, freq, new)]


def _rationale(ctx: Context, thoughts: Sequence[Thought], vote: Vote) -> str:
    """The rationale of the first thought whose answer won ``vote``."""
    return next((t.rationale for t in thoughts if vote.key is not None
                 and ctx.task.normalize(thought_answer(ctx.task, t) or "") == vote.key), "")


def _cited_by(thought: Thought, scores: CitationScores | None) -> dict[int, int]:
    if scores is not None:
        return dict(scores.cited_by)
    counts: dict[int, int] = {}
    for st in thought.statements:
        for c in st.cites:
            counts[c] = counts.get(c, 0) + 1
    return counts


async def _score_thoughts(ctx: Context, cfg: HGOTConfig, thoughts: Sequence[Thought],
                          texts: Sequence[str]) -> list[CitationScores | None]:
    """Citation recall/precision of every thought, all entailment pairs in one call.

    Without a judge (``ctx.entail is None``) thought quality is not defined:
    every weight is 1 (plain self-consistency) and citation frequency counts
    the explicit markers; a ``no_entailment_judge`` event says so.
    """
    if ctx.entail is None or not texts:
        ctx.trace.emit("no_entailment_judge", note="thought quality = 1 (plain self-consistency)")
        return [None] * len(thoughts)
    pairs: set[tuple[str, str]] = set()
    for t in thoughts:
        pairs |= entailment_pairs(t.statements, texts, expand=cfg.expand_citations)
    verdicts = await judge_pairs(ctx.entail, pairs, threshold=cfg.entail_threshold, trace=ctx.trace)
    return [citation_scores(t.statements, texts, verdicts, expand=cfg.expand_citations)
            for t in thoughts]


def infer_requests(ctx: Context, question: str, passages: Sequence[str], demos: str, hints: str, *,
                   n: int, temperature: float, max_tokens: int, thought_format: str = "json",
                   cap: int = 3) -> list[Request]:
    """n samples of one prompt, distinct sample indices (one cache entry each); ``cap``: the
    most statements (and citations per statement) a thought may hold, 0 for no cap."""
    as_json = thought_format == "json"
    prompt = ctx.prompt("hgot_infer_json" if as_json else "hgot_infer", instruction=ctx.task.instruction,
                        demos=demos, context=numbered(passages),
                        hints=hints, question=question, how_many=how_many(cap))
    temp = temperature if n > 1 else 0.0
    schema = thought_schema(len(passages), cap) if as_json else None
    stop = () if as_json else ("\nQuestion:", "\n\n\n")
    return [Request.of(prompt, max_tokens=max_tokens, temperature=temp, seed=ctx.seed,
                       sample_index=i, stop=stop, json_schema=schema) for i in range(n)]

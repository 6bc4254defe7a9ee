"""One level of the hierarchy: Infer, Plan, Search the steps, Infer again.

``solve(ctx, cfg, node, pool, demos)`` (``first_answer`` is step 1,
``refine`` the rest):

1. **Infer** over the question's pool (its probed passages): sampled cited
   thoughts, thought quality, weighted vote, passage-quality update.
2. Stop when ``depth + 1 >= max_depth`` (the depth limit).
3. **Plan** the question; stop when the plan is a single step that closely
   resembles the question (:func:`plan.closely_resembles`).
4. **Search**: visit the plan's DAG level by level (topological
   generations). Dependent steps of a level are rewritten into standalone
   questions in ONE batch, from their parents' answers only; all steps of
   the level are probed in ONE retrieval call and solved concurrently
   (each recursing at ``depth + 1``).
5. Merge the children's passages into the pool and **Infer** again, with the
   steps' answers as hints.

A spent budget ends the whole run (siblings still searching are
cancelled); the strategy answers with the root's answer so far
(:func:`budget_stop`). Each Infer holds its thoughts' plain vote on the
node before the judge weighs them (:meth:`Node.hold`), so a budget that
runs out while the root's thoughts are being judged still answers with them.

Trace events (``hgot_infer``, ``passage_scores``, ``plan``,
``plan_fallback``, ``rewrite``, ``rewrite_skipped``, ``hgot_stop``,
``malformed`` with ``what`` hgot_plan / hgot_thought / hgot_rewrite) and
their fields: :mod:`thoughtloom.core.events`. ``phase`` events name the
steps for live progress: "first answer", "planning", "plan level 2/3",
"final answer", each with the node's depth.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Sequence

from ...core.events import malformed, phase
from ..base import Context, finished
from . import plan as planmod
from .config import HGOTConfig
from .demos import Demos
from .infer import Thought, infer_requests, parse_thought
from .probe import Scored, merge_pools, probe
from .quality import (CitationScores, citation_frequency, citation_scores, entailment_pairs,
                      judge_pairs, passage_quality, thought_quality)
from .stages import ask_plan, plan_notes
from .vote import Vote, select_answer, thought_answer


@dataclass
class Node:
    question: str
    depth: int
    answer: str = ""
    confidence: float = 0.0
    pool: list[Scored] = field(default_factory=list)
    plan: planmod.Plan | None = None
    children: list["Node"] = field(default_factory=list)
    stop: str = ""
    original: str | None = None  # the step text before it was rewritten
    rationale: str = ""  # a rationale behind the selected answer
    unweighted: bool = False  # the answer is a plain vote of thoughts not yet weighed (see hold)
    id: str = "1"  # its place in the hierarchy: "1" the root, "1.2" step 2 of the root's plan

    def step(self, number: int) -> str:
        """The id of the question that step ``number`` of this node's plan becomes."""
        return f"{self.id}.{number}"

    def hold(self, vote: Vote, rationale: str) -> None:
        """Until the node has an answer: its thoughts' plain vote, before the judge weighs them
        by citation quality, so a budget stop during the judging still answers with them."""
        if not self.answer and vote.winner:
            self.answer, self.confidence, self.rationale = vote.winner, vote.confidence, rationale
            self.unweighted = True

    def settle(self, answer: str, confidence: float, rationale: str) -> None:
        """The node's answer after an Infer finished (weighed, voted)."""
        self.answer, self.confidence, self.rationale, self.unweighted = answer, confidence, rationale, False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "question": self.question, "original": self.original, "depth": self.depth,
            "answer": self.answer, "rationale": self.rationale, "confidence": round(self.confidence, 4), "stop": self.stop,
            "plan": None if self.plan is None else {"steps": list(self.plan.steps),
                                                    "edges": [list(e) for e in self.plan.edges]},
            "passages": [{"id": s.passage.id, "title": s.passage.title, "score": round(s.score, 4)}
                         for s in self.pool],
            "children": [c.to_dict() for c in self.children],
        }


@dataclass(frozen=True)
class InferOutcome:
    answer: str
    confidence: float
    pool: list[Scored]
    thoughts: list[dict[str, Any]]
    rationale: str = ""


async def infer(ctx: Context, cfg: HGOTConfig, node: Node, pool: Sequence[Scored], demos: str,
                hints: str = "") -> InferOutcome:
    """Sampled thoughts over ``pool`` for ``node``'s question, weighed and voted; the node holds
    their plain vote while they are judged (:meth:`Node.hold`)."""
    question, depth = node.question, node.depth
    top = sorted(pool, key=lambda s: s.score, reverse=True)[: cfg.top_k]
    texts = [s.text(cfg.passage_words) for s in top]
    reqs = infer_requests(ctx, question, texts, demos, hints, n=cfg.samples,
                          temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                          thought_format=cfg.thought_format)
    completions = await ctx.lm.generate(reqs)
    # a thought cut off at max_tokens is read as no thought: it does not vote (traced as truncated)
    whole = [finished(ctx, c, "hgot_thought", depth=depth, index=i, node=node.id) for i, c in enumerate(completions)]
    thoughts = [parse_thought(c.text if ok else "", len(texts), i) for i, (c, ok) in enumerate(zip(completions, whole))]
    for t, c in zip(thoughts, completions):
        if t.answer is None and not c.truncated:
            malformed(ctx.trace, "hgot_thought", "no_answer", t.text, depth=depth, question=question,
                      index=t.index, node=node.id)
    plain = select_answer(ctx.task, thoughts, [1.0] * len(thoughts))
    node.hold(plain, _rationale(ctx, thoughts, plain))
    scores = await _score_thoughts(ctx, cfg, thoughts, texts)
    qualities = [thought_quality(s.recall, s.precision, cfg.alpha, cfg.beta, cfg.gamma)
                 if s is not None else 1.0 for s in scores]
    vote = select_answer(ctx.task, thoughts, qualities)
    voting = [i for i, t in enumerate(thoughts) if thought_answer(ctx.task, t)]
    freq = citation_frequency([_cited_by(thoughts[i], scores[i]) for i in voting],
                              [qualities[i] for i in voting], len(top))
    new_top = [Scored(s.passage, passage_quality(s.score, f, vote.confidence, cfg.w1, cfg.w2, cfg.w3))
               for s, f in zip(top, freq)]
    shown = {s.passage.id for s in top}
    new_pool = new_top + [s for s in pool if s.passage.id not in shown]
    new_pool.sort(key=lambda s: s.score, reverse=True)
    records = [{"index": t.index, "answer": t.answer, "rationale": t.rationale,
                "citations": [[st.text, [c + 1 for c in st.cites]] for st in t.statements],
                "recall": None if s is None else round(s.recall, 4),
                "precision": None if s is None else round(s.precision, 4),
                "quality": round(q, 4)} for t, s, q in zip(thoughts, scores, qualities)]
    ctx.trace.emit("hgot_infer", node=node.id, depth=depth, question=question, thoughts=records,
                   tally=vote.tally, answer=vote.winner, confidence=vote.confidence)
    ctx.trace.emit("passage_scores", node=node.id, depth=depth, question=question,
                   passages=[{"id": o.passage.id, "old": round(o.score, 4), "cite_freq": round(f, 4),
                              "new": round(n.score, 4)} for o, f, n in zip(top, freq, new_top)])
    return InferOutcome(vote.winner or "", vote.confidence, new_pool, records, _rationale(ctx, thoughts, vote))


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


async def make_plan(ctx: Context, cfg: HGOTConfig, node: Node, demos: str) -> planmod.Plan:
    """Plan with at most ``plan_retries`` re-asks; then the single-step fallback."""
    question, depth = node.question, node.depth
    texts = [s.text(cfg.passage_words) for s in node.pool[: cfg.plan_context]]
    feedback = ""
    for attempt in range(cfg.plan_retries + 1):
        replies = await ask_plan(ctx, cfg, question, texts, demos, feedback)
        reply = replies.plan
        try:
            if reply.truncated:
                raise planmod.PlanError("it was cut off at the token limit; write a shorter plan")
            plan = replies.parse(cfg.max_steps)
        except planmod.PlanError as exc:
            malformed(ctx.trace, "hgot_plan", "truncated" if reply.truncated else "invalid_plan", reply.text,
                      error=str(exc), depth=depth, question=question, attempt=attempt, node=node.id)
            feedback = (f"Your previous plan could not be used: {exc}. "
                        "Write it again in the format shown.")
            continue
        ctx.trace.emit("plan", node=node.id, depth=depth, question=question, steps=list(plan.steps),
                       edges=[list(e) for e in plan.edges], levels=plan.levels(), **plan_notes(plan, replies))
        return plan
    ctx.trace.emit("plan_fallback", node=node.id, depth=depth, question=question, note="single-step plan")
    return planmod.single_step(question)


async def solve(ctx: Context, cfg: HGOTConfig, node: Node, pool: list[Scored], demos: Demos) -> Node:
    """``node``'s first answer over its pool, then the search below it."""
    await first_answer(ctx, cfg, node, pool, demos)
    return await refine(ctx, cfg, node, demos)


async def first_answer(ctx: Context, cfg: HGOTConfig, node: Node, pool: list[Scored], demos: Demos) -> None:
    """Step 1: Infer over the node's probed passages."""
    phase(ctx.trace, "first answer", depth=node.depth)
    first = await infer(ctx, cfg, node, pool, demos.infer)
    node.settle(first.answer, first.confidence, first.rationale)
    node.pool = first.pool


async def refine(ctx: Context, cfg: HGOTConfig, node: Node, demos: Demos) -> Node:
    """Steps 2-5 for a node with its first answer: stop, or plan, search the steps and Infer again."""
    depth, question = node.depth, node.question
    if depth + 1 >= cfg.max_depth:
        return stop(ctx, node, "depth limit")
    phase(ctx.trace, "planning", depth=depth)
    node.plan = await make_plan(ctx, cfg, node, demos.plan)
    if planmod.closely_resembles(question, node.plan, cfg.stop_similarity):
        return stop(ctx, node, "single step resembles question")
    node.children = await search_steps(ctx, cfg, node, demos)
    merged = merge_pools(node.pool, [c.pool for c in node.children],
                         parent_weight=cfg.parent_weight, clip=cfg.clip)
    hints = "Answers to sub-questions:\n" + "\n".join(
        f"- {c.question} ANSWER: {c.answer}" for c in node.children if c.answer)
    phase(ctx.trace, "final answer", depth=depth)
    second = await infer(ctx, cfg, node, merged, demos.infer, hints)
    node.settle(second.answer or node.answer, second.confidence, second.rationale if second.answer else node.rationale)
    node.pool = second.pool
    node.stop = "searched"
    return node


def budget_stop(ctx: Context, node: Node) -> Node:
    """``node`` as a spent budget leaves it: its answer so far, said to be a plain vote when
    its thoughts were not weighed yet."""
    return stop(ctx, node, "budget exceeded" + (" (plain vote: its thoughts were not weighed yet)"
                                                if node.unweighted else ""))


def stop(ctx: Context, node: Node, reason: str) -> Node:
    node.stop = reason
    ctx.trace.emit("hgot_stop", node=node.id, depth=node.depth, question=node.question, reason=reason)
    return node


async def search_steps(ctx: Context, cfg: HGOTConfig, parent: Node, demos: Demos) -> list[Node]:
    """Visit the DAG of ``parent``'s plan generation by generation; one batch per kind of call."""
    plan, depth = parent.plan, parent.depth
    assert plan is not None
    solved: dict[int, Node] = {}
    levels = plan.levels()
    for number, level in enumerate(levels, 1):
        phase(ctx.trace, "plan level", number, len(levels), depth=depth)
        questions: dict[int, str] = {}
        dependent = [s for s in level if plan.parents(s)]
        for s in level:  # a step naming a step with no answer is searched without the mention
            questions[s] = planmod.resolve_references(plan.steps[s - 1], {})
        if dependent:
            known = {s: [(u, solved[u].question, solved[u].answer) for u in plan.parents(s) if solved[u].answer]
                     for s in dependent}
            # a step whose parents found no answer has nothing to be rewritten with
            asks = [s for s in dependent if known[s]]
            reqs = [planmod.rewrite_request(ctx, plan.steps[s - 1], known[s], demos.rewrite,
                                            max_tokens=cfg.rewrite_max_tokens) for s in asks]
            outs = dict(zip(asks, await ctx.lm.generate(reqs))) if reqs else {}
            for s in dependent:
                if s not in outs:
                    ctx.trace.emit("rewrite_skipped", node=parent.step(s), depth=depth + 1, step=s,
                                   reason="no parent answer")
                    continue
                out = outs[s]
                whole = finished(ctx, out, "hgot_rewrite", depth=depth + 1, step=s, node=parent.step(s))
                rewritten = planmod.parse_rewrite(out.text) if whole else None
                if rewritten is None:  # the step with its parents' answers appended
                    if whole:
                        malformed(ctx.trace, "hgot_rewrite", "no_question", out.text, depth=depth + 1, step=s,
                                  node=parent.step(s))
                    rewritten = planmod.fallback_rewrite(plan.steps[s - 1], known[s])
                # a rewrite that still says "Step 1" gets step 1's answer in its place
                rewritten = planmod.resolve_references(rewritten, {u: a for u, _, a in known[s]})
                ctx.trace.emit("rewrite", node=parent.step(s), depth=depth + 1, step=s, original=plan.steps[s - 1],
                               facts=[(q, a) for _, q, a in known[s]], question=rewritten)
                questions[s] = rewritten
        pools = await probe(ctx, [questions[s] for s in level], cfg.k)
        children = await _all([
            solve(ctx, cfg, Node(questions[s], depth + 1,
                                 original=plan.steps[s - 1] if questions[s] != plan.steps[s - 1] else None,
                                 id=parent.step(s)),
                  pool, demos)
            for s, pool in zip(level, pools)])
        solved.update(zip(level, children))
    return [solved[i] for i in range(1, len(plan.steps) + 1)]


async def _all(solving: Sequence[Awaitable[Node]]) -> list[Node]:
    """The sibling searches of one level, concurrently; the first to fail (a spent
    budget) cancels the others, so none runs on after the run has stopped."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one) for one in solving]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [t.result() for t in tasks]

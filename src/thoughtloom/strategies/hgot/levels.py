"""The levels of the hierarchy: at each, Infer, Plan, Search the steps, Infer again.

``solve(ctx, cfg, node, pool, demos)`` (``first_answer`` is step 1,
``refine`` the rest):

1. **Infer** over the question's pool (its probed passages): the step the
   ``infer`` option names (:mod:`.infer_steps`); the paper's (:mod:`.infer`):
   sampled cited thoughts, thought quality, weighted vote, passage-quality update.
2. Stop when ``depth + 1 >= max_depth`` (the depth limit).
3. **Plan** the question; stop when the plan is a single step that closely
   resembles the question (:func:`closely_resembles`, ``stop_rule``).
4. **Search**: visit the plan's DAG level by level (topological
   generations). Dependent steps of a level are rewritten into standalone
   questions in ONE batch, from their parents' answers only; all steps of
   the level are probed in ONE retrieval call and solved concurrently
   (each recursing at ``depth + 1``).
5. Merge the children's passages into the pool and **Infer** again over the
   passages only (§3.1; the steps' answers are shown as hints with ``hints=True``). When none of its thoughts answers, the node keeps
   its first answer AND that answer's confidence.

A spent budget ends the whole run (siblings still searching are
cancelled); the strategy answers with the root's answer so far
(:func:`budget_stop`). Each Infer holds its thoughts' plain vote on the
node before the judge weighs them (:meth:`QuestionNode.hold`), so a budget that
runs out while the root's thoughts are being judged still answers with them.

Trace events (``hgot_infer``, ``passage_scores``, ``plan``,
``plan_fallback``, ``rewrite``, ``rewrite_skipped``, ``hgot_stop``,
``malformed`` with ``what`` hgot_plan / hgot_thought / hgot_rewrite) and
their fields: :mod:`thoughtloom.core.events`. ``phase`` events name the
steps for live progress: "first answer", "planning", "plan level 2/3",
"final answer", each with the node's depth.
"""

from __future__ import annotations

from typing import Sequence

from ...core.events import malformed, phase
from ...core.types import ScoredPassage
from ..context import Context
from ..prompting import finished
from ..vote import is_refusal
from ..passages import passage_text
from ..steps import all_of
from . import plan as planmod
from .config import HGOTConfig
from .demos import Demos
from .infer_steps import infer_step
from .node import QuestionNode
from .probe import merge_pools, probe
from .similarity import resemblance
from .stages import ask_plan, plan_notes


async def usable_plan(ctx: Context, cfg: HGOTConfig, node: QuestionNode, demos: str) -> planmod.Plan:
    """Plan with at most ``plan_retries`` re-asks; then the single-step fallback."""
    question, depth = node.question, node.depth
    texts = [passage_text(s.passage, cfg.passage_words) for s in node.pool[: cfg.plan_context]]
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


async def solve(ctx: Context, cfg: HGOTConfig, node: QuestionNode, pool: list[ScoredPassage],
                demos: Demos) -> QuestionNode:
    """``node``'s first answer over its pool, then the search below it."""
    await first_answer(ctx, cfg, node, pool, demos)
    return await refine(ctx, cfg, node, demos)


async def first_answer(ctx: Context, cfg: HGOTConfig, node: QuestionNode, pool: list[ScoredPassage],
                       demos: Demos) -> None:
    """Step 1: Infer over the node's probed passages."""
    phase(ctx.trace, "first answer", depth=node.depth)
    first = await infer_step(cfg)(ctx, node, pool, demos.infer)
    node.settle(first.answer, first.confidence, first.rationale)
    node.pool, node.shown = first.pool, first.shown


async def refine(ctx: Context, cfg: HGOTConfig, node: QuestionNode, demos: Demos) -> QuestionNode:
    """Steps 2-5 for a node with its first answer: stop, or plan, search the steps and Infer again."""
    depth, question = node.depth, node.question
    if depth + 1 >= cfg.max_depth:
        return stop(ctx, node, "depth limit")
    phase(ctx.trace, "planning", depth=depth)
    node.plan = await usable_plan(ctx, cfg, node, demos.plan)
    if closely_resembles(question, node.plan, cfg.stop_similarity, cfg.stop_rule):
        return stop(ctx, node, "single step resembles question")
    node.children = await search_steps(ctx, cfg, node, demos)
    merged = merge_pools(node.pool, [c.pool for c in node.children],
                         parent_weight=cfg.parent_weight, clip=cfg.clip)
    hints = sub_answer_hints(node.children) if cfg.hints else ""
    phase(ctx.trace, "final answer", depth=depth)
    second = await infer_step(cfg)(ctx, node, merged, demos.infer, hints)
    if second.answer:
        node.settle(second.answer, second.confidence, second.rationale)
        node.shown = second.shown
    # else: no thought of the second Infer answered; the first answer stands with its own confidence
    node.pool = second.pool
    node.stop = "searched"
    return node


def sub_answer_hints(children: Sequence[QuestionNode]) -> str:
    """The steps' answers as prompt text for the second Infer (``hints=True`` only: §3.1's
    Infer sees the gathered passages, and the authors' ``predict`` runs with ``hints=False``)."""
    answered = [c for c in children if c.answer and not is_refusal(c.answer)]
    if not answered:
        return ""
    return "Answers to sub-questions:\n" + "\n".join(f"- {c.question} ANSWER: {c.answer}" for c in answered)


def closely_resembles(question: str, plan: planmod.Plan, threshold: float, rule: str = "f1") -> bool:
    """The recursion stop rule: a single-step plan whose step's resemblance to the question it
    was planned for (:func:`.similarity.resemblance` under ``rule``: ``cosine`` of sentence
    embeddings, the authors' measure and the paper preset's, or content-word ``f1``) is at
    least ``threshold`` (0.7, the authors' threshold) means planning found nothing to divide."""
    return len(plan.steps) == 1 and resemblance(question, plan.steps[0], rule) >= threshold


def budget_stop(ctx: Context, node: QuestionNode) -> QuestionNode:
    """``node`` as a spent budget leaves it: its answer so far, said to be a plain vote when
    its thoughts were not weighed yet."""
    return stop(ctx, node, "budget exceeded" + (" (plain vote: its thoughts were not weighed yet)"
                                                if node.unweighted else ""))


def stop(ctx: Context, node: QuestionNode, reason: str) -> QuestionNode:
    node.stop = reason
    ctx.trace.emit("hgot_stop", node=node.id, depth=node.depth, question=node.question, reason=reason)
    return node


async def search_steps(ctx: Context, cfg: HGOTConfig, parent: QuestionNode, demos: Demos) -> list[QuestionNode]:
    """Visit the DAG of ``parent``'s plan generation by generation; one batch per kind of call."""
    plan, depth = parent.plan, parent.depth
    assert plan is not None
    solved: dict[int, QuestionNode] = {}
    levels = plan.levels()
    for number, level in enumerate(levels, 1):
        phase(ctx.trace, "plan level", number, len(levels), depth=depth)
        questions: dict[int, str] = {}
        dependent = [s for s in level if plan.parents(s)]
        for s in level:  # a step naming a step with no answer is searched without the mention
            questions[s] = planmod.resolve_references(plan.steps[s - 1], {})
        if dependent:
            # each known answer is labelled with its step's number, as the step refers to it ("the
            # director from Step 1"); the authors' rewrite context is "Step 1: <question> ANSWER: <answer>."
            known = {s: [(u, solved[u].question, solved[u].answer) for u in plan.parents(s)
                         if solved[u].answer and not is_refusal(solved[u].answer)]
                     for s in dependent}
            # a step whose parents found no answer (or only a refusal, which the authors' hint
            # check drops by its wording) has nothing to be rewritten with
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
        children = await all_of([
            solve(ctx, cfg, QuestionNode(questions[s], depth + 1,
                                         original=plan.steps[s - 1] if questions[s] != plan.steps[s - 1] else None,
                                         id=parent.step(s)),
                  pool, demos)
            for s, pool in zip(level, pools)])
        solved.update(zip(level, children))
    return [solved[i] for i in range(1, len(plan.steps) + 1)]

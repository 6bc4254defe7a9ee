"""``dsp``: Demonstrate-Search-Predict for multi-hop QA (Khattab et al. 2022), as HGOT compares it.

The program of the DSP paper's multi-hop QA (and of HGOT's ``DSP_QA``):

1. **Demonstrate**: each of the 7 training demos (``demo_file``'s pool,
   :mod:`..demo_pool`, else the task's demos; question, gold answer) is run
   through the simple pipeline - one greedy search query per hop, ``demo_k``
   passages each, accumulated, then a greedy reading. A run
   whose passages contain the gold answer and whose reading predicts it is
   kept as an annotated demo (its hop replies and rationale), at most
   ``max_demos``; the others stay plain question/answer demos.
2. **Search**: per hop, ``queries`` search queries are sampled in one batch
   (temperature ``query_temperature``), the question is added, and the
   passages of all of them are fused: each query retrieves ``3k``, its
   passages' scores become probabilities (softmax over its results), a
   passage's fused score is the sum over queries, the best ``k`` are the
   hop's context (DSP's ``retrieveEnsemble``). From hop 2 on, the query
   prompt shows that context and the model first condenses what it learned;
   that rationale heads the context of the next hop and of the reading.
3. **Predict**: ``n`` cited chains over the last hop's context, majority
   vote (retrieve-then-read's reader), the annotated demos shown with their
   rationales.

A query reply with no query is a ``malformed`` event (``what: dsp_query``)
and that sample adds nothing (the question is always searched). Trace
events: ``dsp_demo`` per annotated demo attempt, ``dsp_hop`` per hop (its
fused queries), then the reader's ``sample`` / ``vote``; ``phase``
"demonstrate", "search hop 1/2", "sampling 5".
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass
from typing import Sequence

from ...core.events import malformed, phase
from ...core.options import Options, option
from ...core.types import Demo, Passage, Problem, Request
from ..context import Context
from ..interface import DEFAULT_MAX_CALLS, Strategy
from ..registry import register
from ..result import Result
from ..passages import dedupe, format_passages
from ..demo_pool import POOL_SIZE, pool_demos
from .retrieval import read_and_vote

_QUERY = re.compile(r"search\s+query\s*:\s*(.*)", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:search\s+)?query\s*:\s*", re.IGNORECASE)
_STOP = ("\n\n", "\nQuestion:", "\nContext:")


def parse_query(text: str) -> tuple[str, str]:
    """(rationale, query) of a query reply: the query after the last "Search Query:" label,
    whole ("Star Wars: A New Hope release" keeps its colon), else the reply's last line."""
    hits = list(_QUERY.finditer(text))
    if hits:
        last = hits[-1]
        return text[: last.start()].strip(), last.group(1).strip().strip('"')
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "", ""
    return "\n".join(lines[:-1]), _LABEL.sub("", lines[-1]).strip().strip('"')


def fuse(results: Sequence[Sequence[tuple[Passage, float]]], k: int) -> list[Passage]:
    """DSP's fused retrieval: each query's scores as probabilities (softmax over its own
    results), summed per passage over the queries; the ``k`` best, ties in first-seen order."""
    total: dict[str, float] = {}
    first: dict[str, Passage] = {}
    for hits in results:
        finite = [s for _, s in hits if math.isfinite(s)]
        top = max(finite, default=0.0)
        weights = [math.exp(s - top) if math.isfinite(s) else 0.0 for _, s in hits]
        z = sum(weights) or 1.0
        for (p, _), w in zip(hits, weights):
            first.setdefault(p.id, p)
            total[p.id] = total.get(p.id, 0.0) + w / z
    order = sorted(first, key=lambda pid: -total[pid])  # sorted is stable: ties keep first-seen order
    return [first[pid] for pid in order[:k]]


@dataclass(frozen=True)
class Annotated:
    """A demo the simple pipeline answered right: its hop replies, passages and reading."""

    question: str
    answer: str
    hops: tuple[tuple[str, str], ...]  # (context shown, reply) per hop
    rationale: str


@dataclass(frozen=True)
class DSPConfig(Options):
    hops: int = option(2, min=1)  # search hops
    queries: int = option(3, min=0)  # search queries sampled per hop, fused with the question
    query_temperature: float = option(0.7, min=0)  # sampling temperature of the queries
    k: int = option(5, min=0)  # passages a hop keeps after fusion (each query retrieves 3k)
    demonstrate: bool = True  # annotate the task's demos with the simple pipeline first
    demo_k: int = option(2, min=0)  # passages per hop of the simple pipeline that annotates demos
    max_demos: int = option(3, min=1)  # annotated demos kept
    n: int = option(5, min=1)  # reading chains sampled, then majority vote
    temperature: float = option(0.7, min=0)  # sampling temperature of the reading chains
    max_tokens: int = option(200, min=1)  # cap on each reading chain
    query_tokens: int = option(64, min=1)  # cap on each query reply (rationale and query)
    shots: int = option(2, min=0)  # plain demos in the reading prompt when none was annotated
    demo_file: str | None = None  # training demos (CSV Question, Answer): the pool of 7 Demonstrate starts from; None: the task's
    passage_words: int = option(0, min=0)  # clip passages in the prompt (0 = whole)
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question


def _passage_match(passages: Sequence[Passage], answer: str, normalize) -> bool:
    gold = normalize(answer)
    return bool(gold) and any(gold in normalize(p.text) for p in passages)


@register("dsp")
class DSP(Strategy):
    """Demonstrate-Search-Predict: annotated demos, fused queries per hop, then voted reading."""

    needs = "open_domain"
    Config = DSPConfig

    def _query_prompt(self, ctx: Context, question: str, hop: int, context: str,
                      demos: Sequence[Annotated]) -> str:
        name = "dsp_query" if hop == 0 else "dsp_hop"
        blocks = []
        for d in demos:
            if hop < len(d.hops):
                shown, reply = d.hops[hop]
                head = f"Context:\n{shown}\n" if hop else ""
                blocks.append(f"{head}Question: {d.question}\n{self._rationale_prefix(hop)}{reply}")
        return ctx.prompt(name, demos="".join(f"\n{b}\n" for b in blocks), question=question,
                          context=context)

    @staticmethod
    def _rationale_prefix(hop: int) -> str:
        return ("Rationale: Let's think step by step. To answer this question, we first need to find out"
                if hop == 0 else "Rationale: Let's think step by step. Based on the context, we have learned the following.")

    async def _attempt(self, ctx: Context, demo: Demo) -> Annotated | None:
        """The simple pipeline on one training demo; the annotation if it found and predicted the answer."""
        c = self.config
        found: list[Passage] = []
        hops = []
        for hop in range(c.hops):
            shown = format_passages(found, c.passage_words) if hop else ""
            prompt = self._query_prompt(ctx, demo.question, hop, shown, ())
            reply = (await ctx.lm.generate([Request.of(prompt, max_tokens=c.query_tokens, seed=ctx.seed,
                                                       stop=_STOP)]))[0].text
            query = parse_query(reply)[1] or demo.question
            found = dedupe(found + [h.passage for h in (await ctx.search([query], c.demo_k))[0]])
            hops.append((shown, " " + reply.strip()))
        ok = _passage_match(found, demo.answer, ctx.task.normalize)
        rationale, answer = "", None
        if ok:
            prompt = ctx.prompt("retrieve_read", instruction=ctx.task.instruction, demos="",
                                context=format_passages(found, c.passage_words), question=demo.question)
            text = (await ctx.lm.generate([Request.of(prompt, max_tokens=c.max_tokens, seed=ctx.seed,
                                                      stop=("\nQuestion:",))]))[0].text
            answer = ctx.task.extract_answer(text)
            rationale = re.sub(r"(?im)^\s*rationale\s*:\s*", "", text.split("Answer:")[0]).strip()
        kept = answer is not None and ctx.task.normalize(answer) == ctx.task.normalize(demo.answer)
        ctx.trace.emit("dsp_demo", question=demo.question, passage_match=ok, prediction=answer, kept=kept)
        return Annotated(demo.question, demo.answer, tuple(hops), rationale) if kept else None

    async def demonstrate(self, ctx: Context) -> list[Annotated]:
        """Annotated demos from the training pool (``demo_file``, else the task's demos), all
        attempted at once: the authors' ``train_sel_func(train, k=7)``."""
        train = list(pool_demos(ctx, self.config.demo_file))[:POOL_SIZE]
        if not (self.config.demonstrate and train):
            return []
        phase(ctx.trace, "demonstrate")
        done = await asyncio.gather(*(self._attempt(ctx, d) for d in train))
        return [a for a in done if a is not None][: self.config.max_demos]

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        c = self.config
        question = problem.question
        context: list[Passage] = []
        gathered: list[Passage] = []
        ctx.best_so_far(lambda: Result(answer="", details={"gathered": [p.id for p in dedupe(gathered)]}))
        demos = await self.demonstrate(ctx)
        rationale = ""
        for hop in range(c.hops):
            phase(ctx.trace, "search hop", hop + 1, c.hops)
            shown = format_passages(context, c.passage_words) if hop else ""
            if hop and rationale:
                shown = f"{rationale}\n{shown}"
            prompt = self._query_prompt(ctx, question, hop, shown, demos)
            temp = c.query_temperature if c.queries > 1 else 0.0
            replies = await ctx.lm.generate([Request.of(prompt, max_tokens=c.query_tokens, temperature=temp,
                                                        seed=ctx.seed, sample_index=i, stop=_STOP)
                                             for i in range(c.queries)])
            parsed = [parse_query(r.text) for r in replies]
            for r, (_, q) in zip(replies, parsed):
                if not q:
                    malformed(ctx.trace, "dsp_query", "empty", r.text)
            queries = list(dict.fromkeys([q for _, q in parsed if q] + [question]))
            results = await ctx.search(queries, 3 * c.k)
            context = fuse([[(h.passage, h.score) for h in hits] for hits in results], c.k)
            gathered.extend(context)
            rationale = parsed[0][0] if hop else ""
            ctx.trace.emit("dsp_hop", hop=hop, query=queries[0], queries=queries, passages=[p.id for p in context])
        shots = [Demo(d.question, d.answer, d.rationale) for d in demos] or list(pool_demos(ctx, c.demo_file))[: c.shots]
        read = context if not rationale else [Passage("dsp-rationale", rationale, "")] + context
        result = await read_and_vote(ctx, question, read, n=c.n, temperature=c.temperature,
                                     max_tokens=c.max_tokens, shots=len(shots), words=c.passage_words, demos=shots)
        result.details.update(passages=[p.id for p in context], gathered=[p.id for p in dedupe(gathered)],
                              gathered_titles=[p.title for p in dedupe(gathered)],
                              demos=[d.question for d in demos])
        return result

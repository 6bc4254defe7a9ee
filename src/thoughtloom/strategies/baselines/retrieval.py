"""Retrieval-augmented baselines of the HGOT paper, on the context's retriever.

- ``retrieve-then-read``: retrieve k passages for the question, sample n
  chains of thought over them in one batch, majority vote.
- ``self-ask`` (Press et al. 2022): the model asks follow-up questions; each
  is answered by a short reader call over passages retrieved for it.
``dsp`` (whose reader is :func:`read_and_vote`) lives in :mod:`.dsp`,
``react`` in :mod:`.react`. They search through ``ctx.search``:
without a retriever each of them sees no passages (its ``retrieval`` event
says ``note: no retriever``).

A reply off the format is a ``malformed`` event: self-ask's chain without
"So the final answer is" (then read for any answer). Trace events and their fields
(``retrieval``, ``sample``, ``vote``, ``self_ask_step``,
``malformed``; ``phase`` "hop 2/5", "sampling 5" for
live progress): :mod:`thoughtloom.core.events`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ...core.events import RAW_CHARS, malformed, phase
from ...core.options import Options, option
from ...core.types import Demo, Passage, Problem, Request
from ..context import Context
from ..interface import DEFAULT_MAX_CALLS, Strategy
from ..prompting import render_demos
from ..registry import register
from ..result import Result
from ..vote import vote_samples
from ..demo_pool import pool_demos
from ..passages import dedupe, format_passages


async def read_and_vote(ctx: Context, question: str, passages: Sequence[Passage], *, n: int,
                        temperature: float, max_tokens: int, shots: int, words: int = 0,
                        demos: Sequence[Demo] | None = None) -> Result:
    """n reader samples over the passages in one batch; plain majority vote. The demos are
    the first ``shots`` of ``demos`` (default: the task's)."""
    demos = render_demos(list(ctx.task.demos() if demos is None else demos)[:shots], with_rationale=True)
    prompt = ctx.prompt("retrieve_read", instruction=ctx.task.instruction, demos=demos,
                        context=format_passages(passages, words), question=question)
    temp = temperature if n > 1 else 0.0
    reqs = [Request.of(prompt, max_tokens=max_tokens, temperature=temp, seed=ctx.seed, sample_index=i,
                       stop=("\nQuestion:",)) for i in range(n)]
    phase(ctx.trace, "sampling", of=n)
    result, _ = vote_samples(ctx, await ctx.lm.generate(reqs))
    result.details.update(passages=[p.id for p in passages], gathered=[p.id for p in passages],
                          gathered_titles=[p.title for p in passages])
    return result


@dataclass(frozen=True)
class RetrieveReadConfig(Options):
    k: int = option(5, min=0)  # passages retrieved for the question
    n: int = option(5, min=1)  # cited chains sampled, then majority vote
    temperature: float = option(0.7, min=0)  # sampling temperature of the chains
    max_tokens: int = option(200, min=1)  # cap on each chain
    shots: int = option(2, min=0)  # demos in the reading prompt
    demo_file: str | None = None  # training demos (CSV Question, Answer): the pool of 7 (strategies.demo_pool); None: the task's
    passage_words: int = option(0, min=0)  # clip passages in the prompt (0 = whole)
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question


@register("retrieve-then-read")
class RetrieveThenRead(Strategy):
    """Retrieve k passages, sample n cited chains of thought, majority vote."""

    needs = "open_domain"
    Config = RetrieveReadConfig

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        c = self.config
        passages = [h.passage for h in (await ctx.search([problem.question], c.k))[0]]
        return await read_and_vote(ctx, problem.question, passages, n=c.n, temperature=c.temperature,
                                   max_tokens=c.max_tokens, shots=c.shots, words=c.passage_words,
                                   demos=pool_demos(ctx, c.demo_file))


_FOLLOW = re.compile(r"Follow up:\s*(.+)", re.IGNORECASE)
_FINAL = re.compile(r"So the final answer is:\s*(.+)", re.IGNORECASE)


@dataclass(frozen=True)
class SelfAskConfig(Options):
    k: int = option(3, min=0)  # passages retrieved per follow-up question
    max_hops: int = option(4, min=1)  # follow-up questions at most, then the final answer
    max_tokens: int = option(96, min=1)  # cap on each self-ask step
    answer_tokens: int = option(48, min=1)  # cap on each follow-up's answer
    passage_words: int = option(0, min=0)  # clip passages in the prompt (0 = whole)
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question


@register("self-ask")
class SelfAsk(Strategy):
    """Follow-up questions, each answered by a reader over retrieved passages."""

    needs = "open_domain"
    Config = SelfAskConfig

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        c = self.config
        scratch, cut = "", False
        gathered: list[Passage] = []
        # the chain so far: an unfinished chain lacks its final answer by design, not by a format slip
        ctx.best_so_far(lambda: _self_ask_result(ctx, scratch, cut, gathered, finished=False))
        for hop in range(c.max_hops + 1):
            phase(ctx.trace, "hop", hop + 1, c.max_hops + 1)
            prompt = ctx.prompt("self_ask", instruction=ctx.task.instruction,
                                question=problem.question, scratchpad=scratch)
            req = Request.of(prompt, max_tokens=c.max_tokens, seed=ctx.seed,
                             stop=("\nIntermediate answer:", "\nQuestion:"))
            reply = (await ctx.lm.generate([req]))[0]
            text, cut = reply.text, reply.truncated
            final = _FINAL.search(text)
            follow = _FOLLOW.findall(text)
            if final or not follow or hop == c.max_hops:
                scratch += text
                break
            sub_q = follow[-1].strip()
            passages = [h.passage for h in (await ctx.search([sub_q], c.k))[0]]
            gathered.extend(passages)
            ans_prompt = ctx.prompt("self_ask_answer", context=format_passages(passages, c.passage_words),
                                    question=sub_q)
            ans = (await ctx.lm.generate([Request.of(ans_prompt, max_tokens=c.answer_tokens, seed=ctx.seed,
                                                     stop=("\n",))]))[0].text.strip()
            ctx.trace.emit("self_ask_step", hop=hop, follow_up=sub_q, answer=ans)
            scratch += text.split("Follow up:")[0] + f"Follow up: {sub_q}\nIntermediate answer: {ans}\n"
        return _self_ask_result(ctx, scratch, cut, gathered)


def _self_ask_result(ctx: Context, scratch: str, cut: bool, gathered: Sequence[Passage], *,
                     finished: bool = True) -> Result:
    """The answer the scratchpad ends with (else whatever answer it holds); ``cut``: the
    last reply, where the answer is read, was cut off at max_tokens (not a finished answer).
    A ``finished`` chain without its final answer is a malformed reply; one stopped by the
    budget is not."""
    final = _FINAL.findall(scratch)
    answer = final[-1].strip().rstrip(".") if final else None
    if answer is None and finished:
        malformed(ctx.trace, "self_ask_answer", "no_final_answer", scratch[-RAW_CHARS:])
    if answer is None:
        answer = ctx.task.extract_answer(scratch)
    if answer is not None:
        answer = ctx.task.extract_answer(f"Answer: {answer}") or answer
    gathered = dedupe(gathered)
    return Result(answer=answer or "", text=scratch, truncated=cut,
                  details={"gathered": [p.id for p in gathered], "gathered_titles": [p.title for p in gathered]})

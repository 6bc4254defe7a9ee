"""``io``, ``cot`` and ``cot-sc``: answer directly, reason first, or sample and vote.

``cot-sc`` (self-consistency, Wang et al. 2022) draws ``n`` chain-of-thought
samples in one batch at temperature > 0 and returns the most frequent
normalized answer; its confidence is the winner's vote share.

How the few-shot demos are laid out was measured per role on the bench model
(docs/prompts.md): ``io`` sends them as chat turns (``layout=chat``: the
task's instruction as the system message, each demo as a user question and
an assistant answer, then the real question), because in one message a chat
model re-solves the demos instead of answering; ``cot`` and ``cot-sc`` send
one message (``layout=text``), where the model reasons at its own length
(as chat turns it copied the demos' terse rationales and was less accurate).
Either can be set with ``--set layout=...``.

A reply cut off at ``max_tokens`` is not an answer: ``io`` and ``cot`` mark
their result ``truncated`` (the runner scores it as no answer), and a
truncated ``cot-sc`` sample does not vote.

Trace events (``sample``, ``vote``; ``phase`` "sampling N" before
``cot-sc``'s batch, for live progress): :mod:`thoughtloom.core.events`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.events import phase
from ...core.options import Options, option
from ...core.types import Problem, Request
from ..context import Context
from ..interface import DEFAULT_MAX_CALLS, Strategy
from ..prompting import LAYOUTS, few_shot
from ..registry import register
from ..result import Result
from ..vote import vote_samples
from ..demo_pool import pool_demos


def _question(problem: Problem) -> str:
    if problem.context:
        return f"{problem.context}\n\n{problem.question}"
    return problem.question


@dataclass(frozen=True)
class IOConfig(Options):
    max_tokens: int = option(64, min=1)  # reply length cap
    shots: int = option(3, min=0)  # few-shot demos from the task (0 = none)
    demo_file: str | None = None  # training demos (CSV Question, Answer): the pool of 7 (strategies.demo_pool); None: the task's
    layout: str = option("chat", choices=LAYOUTS)  # chat: demos as chat turns; text: one message
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question


@register("io")
class Direct(Strategy):
    """The model answers at once, with few-shot demos but no reasoning."""

    Config = IOConfig

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        cfg = self.config
        messages = few_shot(ctx, "io", list(pool_demos(ctx, cfg.demo_file))[: cfg.shots], with_rationale=False,
                            layout=cfg.layout, instruction=ctx.task.instruction, question=_question(problem))
        req = Request.of(messages, max_tokens=cfg.max_tokens, stop=("\nQuestion:",), seed=ctx.seed)
        reply = (await ctx.lm.generate([req]))[0]
        answer = ctx.task.extract_answer(reply.text)
        return Result(answer=answer if answer is not None else reply.text.strip(), text=reply.text,
                      truncated=reply.truncated)


@dataclass(frozen=True)
class CoTConfig(Options):
    max_tokens: int = option(384, min=1)  # cap on each chain of thought
    shots: int = option(3, min=0)  # worked demos from the task (0 = none)
    layout: str = option("text", choices=LAYOUTS)  # text: one message; chat: demos as chat turns
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question


def cot_request(problem: Problem, ctx: Context, *, shots: int, max_tokens: int, layout: str = "text",
                temperature: float = 0.0, sample_index: int = 0) -> Request:
    messages = few_shot(ctx, "cot", list(ctx.task.demos())[:shots], with_rationale=True, layout=layout,
                        instruction=ctx.task.instruction, question=_question(problem),
                        answer_format=ctx.task.cot_answer_format)
    return Request.of(messages, max_tokens=max_tokens, temperature=temperature,
                      stop=("\nQuestion:",), seed=ctx.seed, sample_index=sample_index)


@register("cot")
class ChainOfThought(Strategy):
    """One greedy chain of thought; the answer is extracted from its end."""

    Config = CoTConfig

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        cfg = self.config
        req = cot_request(problem, ctx, shots=cfg.shots, max_tokens=cfg.max_tokens, layout=cfg.layout)
        reply = (await ctx.lm.generate([req]))[0]
        answer = ctx.task.extract_answer(reply.text)
        return Result(answer=answer or "", text=reply.text, truncated=reply.truncated)


@dataclass(frozen=True)
class SelfConsistencyConfig(Options):
    n: int = option(5, min=1)  # chains sampled (one batch), then majority vote
    temperature: float = option(0.7, min=0)  # sampling temperature of the chains
    max_tokens: int = option(384, min=1)  # cap on each chain of thought
    shots: int = option(3, min=0)  # worked demos from the task (0 = none)
    layout: str = option("text", choices=LAYOUTS)  # text: one message; chat: demos as chat turns
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question


@register("cot-sc")
class SelfConsistency(Strategy):
    """``n`` chain-of-thought samples sent as one batch; majority vote."""

    Config = SelfConsistencyConfig

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        cfg = self.config
        n = cfg.n
        remaining = ctx.remaining_calls()
        if remaining is not None and remaining < n:
            # spend what the budget allows rather than nothing; with no call
            # left, the one request stops the run (no answer, stopped="budget")
            n = max(1, remaining)
        requests = [
            cot_request(problem, ctx, shots=cfg.shots, max_tokens=cfg.max_tokens, layout=cfg.layout,
                        temperature=cfg.temperature, sample_index=i)
            for i in range(n)
        ]
        phase(ctx.trace, "sampling", of=n)
        completions = await ctx.lm.generate(requests)
        # a run capped at i calls sends the first i samples and votes them
        ctx.within_batch(completions, lambda first: vote_samples(ctx, first)[0])
        result, vote = vote_samples(ctx, completions)
        result.details.update(tally=vote.tally, truncated_samples=sum(c.truncated for c in completions))
        return result

"""``react`` (Yao et al. 2023): Thought / Action / Observation over our retriever.

Actions, as in the paper: ``search[query]`` returns the top passages as the
Observation (the paper's returns a Wikipedia page's first sentences; we
have passages, not pages); ``lookup[keyword]`` returns the next sentence of
the last search's passages that contains the keyword, as ``(Result 2 / 3)
...``, then "No more results."; ``finish[answer]`` ends. The prompt shows
six worked trajectories (the paper's HotpotQA prompt has six; ours are our
own). A turn without an action is asked once more for
the action alone (as the original ReAct code does); an action that still
fits neither form is a ``malformed`` event (``what: react_action``) and the Observation tells the
model the valid forms. Only ``finish[...]`` answers: after ``max_steps``
without it, or when the budget runs out first, the result has no answer
and its text is the steps so far.

Trace events (``react_step``, ``retrieval``, ``malformed``; ``phase`` "turn 2/6" for live progress):
:mod:`thoughtloom.core.events`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ...core.events import malformed, phase
from ...core.options import Options, option
from ...core.types import Passage, Problem, Request
from ..context import Context
from ..interface import DEFAULT_MAX_CALLS, Strategy
from ..registry import register
from ..result import Result
from ..passages import dedupe

# no two optional runs of the same characters side by side: they backtrack quadratically
_ACTION = re.compile(r"Action\s*(?:\d+\s*)?:\s*(search|lookup|finish)\s*\[(.*?)\]", re.IGNORECASE | re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_THOUGHT = re.compile(r"^\s*(?:Thought\s*(?:\d+\s*)?:\s*)?(.*?)(?:\n|$)", re.IGNORECASE)


def parse_step(text: str) -> tuple[str, str | None, str]:
    """(thought, action kind or None, action argument) of one model turn."""
    m = _ACTION.search(text)
    thought = _THOUGHT.match(text).group(1).strip() if _THOUGHT.match(text) else ""
    if not m:
        return thought, None, ""
    return thought, m.group(1).lower(), " ".join(m.group(2).split())


@dataclass(frozen=True)
class ReActConfig(Options):
    max_steps: int = option(6, min=1)  # Thought/Action turns before the last Thought is read for an answer
    k: int = option(2, min=0)  # passages per search[...] action
    max_tokens: int = option(96, min=1)  # cap on each turn
    observation_chars: int = option(400, min=0)  # an Observation is clipped to this many characters
    max_calls: int = option(DEFAULT_MAX_CALLS, min=1)  # finite bound on model calls per question


@register("react")
class ReAct(Strategy):
    """Interleaved Thought / Action search[...] / lookup[...] / finish[...] / Observation."""

    needs = "open_domain"
    Config = ReActConfig

    async def solve(self, problem: Problem, ctx: Context) -> Result:
        c = self.config
        scratch = ""
        answer: str | None = None
        gathered: list[Passage] = []
        page = Page([])
        ctx.best_so_far(lambda: _react_result(ctx, None, scratch, gathered))  # the steps so far, no answer
        for i in range(1, c.max_steps + 1):
            phase(ctx.trace, "turn", i, c.max_steps)
            prompt = ctx.prompt("react", instruction=ctx.task.instruction, question=problem.question,
                                scratchpad=scratch + f"Thought {i}:")
            text = (await ctx.lm.generate([Request.of(prompt, max_tokens=c.max_tokens, seed=ctx.seed,
                                                      stop=(f"\nObservation {i}:", "\nQuestion:"))]))[0].text
            thought, kind, arg = parse_step(text)
            if kind is None:  # as in the original ReAct: ask for the action on its own
                prompt = ctx.prompt("react", instruction=ctx.task.instruction, question=problem.question,
                                    scratchpad=scratch + f"Thought {i}: {thought}\nAction {i}:")
                again = (await ctx.lm.generate([Request.of(prompt, max_tokens=32, seed=ctx.seed,
                                                           stop=("\n",))]))[0].text
                _, kind, arg = parse_step(f"Action {i}: {again.strip()}")
            if kind == "finish":
                answer = arg
                obs = ""
            elif kind == "search" and arg:
                found = [h.passage for h in (await ctx.search([arg], c.k))[0]]
                gathered.extend(found)
                page = Page.of(found)
                obs = " ".join(p.text for p in found)[: c.observation_chars] or "No results."
            elif kind == "lookup" and arg:
                obs = page.lookup(arg)[: c.observation_chars]
            else:
                malformed(ctx.trace, "react_action", "no_action", text)
                obs = "Invalid action. Use search[query], lookup[keyword] or finish[answer]."
            ctx.trace.emit("react_step", step=i, thought=thought, action=kind, argument=arg, observation=obs)
            scratch += f"Thought {i}: {thought}\nAction {i}: {kind or 'invalid'}[{arg}]\n"
            if answer is not None:
                break
            scratch += f"Observation {i}: {obs}\n"
        return _react_result(ctx, answer, scratch, gathered)


@dataclass
class Page:
    """What ``lookup[...]`` reads: the sentences of the last search's passages, and where the
    current keyword's results stand."""

    sentences: list[str]
    keyword: str = ""
    hits: tuple[str, ...] = ()
    shown: int = 0

    @classmethod
    def of(cls, passages: Sequence[Passage]) -> "Page":
        return cls([s for p in passages for s in _SENTENCE.split(p.text) if s.strip()])

    def lookup(self, keyword: str) -> str:
        """The next sentence holding ``keyword`` (case-insensitive), numbered among all such."""
        if keyword.lower() != self.keyword:
            self.keyword, self.shown = keyword.lower(), 0
            self.hits = tuple(s for s in self.sentences if self.keyword in s.lower())
        if self.shown >= len(self.hits):
            return "No more results."
        self.shown += 1
        return f"(Result {self.shown} / {len(self.hits)}) {self.hits[self.shown - 1]}"


def _react_result(ctx: Context, answer: str | None, scratch: str, gathered: Sequence[Passage]) -> Result:
    """The finish[...] answer (none without one), the scratchpad and the passages seen."""
    if answer is not None:
        answer = ctx.task.extract_answer(f"Answer: {answer}") or answer
    gathered = dedupe(gathered)
    return Result(answer=answer or "", text=scratch,
                  details={"gathered": [p.id for p in gathered], "gathered_titles": [p.title for p in gathered]})

"""Infer: sample several cited thoughts over the top-K passages in ONE batch.

Each thought (prompt ``hgot_infer``) is a rationale whose statements cite
passages as [1], [2], ... and a short factoid answer (1-5 words)::

    Rationale: Jaws was directed by Steven Spielberg [1]. He was born in 1946 [2].
    Answer: 1946
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ...core.types import Request
from ..base import Context
from .quality import Statement, split_statements

_ANSWER = re.compile(r"^\s*\**\s*(?:final\s+)?answer\s*\**\s*:\s*(.*)$", re.IGNORECASE)
_RATIONALE = re.compile(r"^\s*\**\s*rationale\s*\**\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Thought:
    index: int
    answer: str | None  # None when no answer could be read (it then casts no vote)
    rationale: str
    statements: tuple[Statement, ...]
    text: str


def parse_thought(text: str, n_passages: int, index: int = 0) -> Thought:
    """Split a completion into rationale and answer; read the citations.

    The answer is the text after the last ``Answer:`` line (trailing period
    dropped); a reply that is one bare line of at most 5 words is taken as
    the answer with an empty rationale. Otherwise the thought has no answer
    and does not vote; the caller traces it as malformed.
    """
    lines = text.strip().splitlines()
    answer = None
    cut = len(lines)
    for i in range(len(lines) - 1, -1, -1):
        m = _ANSWER.match(lines[i])
        if m:
            answer = m.group(1).strip().rstrip(".").strip() or None
            cut = i
            break
    content = [ln for ln in lines if ln.strip()]
    if answer is None and len(content) == 1 and len(content[0].split()) <= 5 and "[" not in content[0]:
        answer, cut = content[0].strip().rstrip("."), 0  # a bare short answer, no rationale
    rationale = _RATIONALE.sub("", "\n".join(lines[:cut]).strip()).strip()
    return Thought(index, answer, rationale, tuple(split_statements(rationale, n_passages)), text)


def format_passages(passages: Sequence[str]) -> str:
    return "\n".join(f"[{i + 1}] {p}" for i, p in enumerate(passages))


def clip_words(text: str, n: int) -> str:
    """The first n words (all when n <= 0), to keep prompts small on slow models."""
    words = text.split()
    return text if n <= 0 or len(words) <= n else " ".join(words[:n]) + " ..."


def infer_requests(ctx: Context, question: str, passages: Sequence[str], demos: str, hints: str, *,
                   n: int, temperature: float, max_tokens: int) -> list[Request]:
    """n samples of one prompt, distinct sample indices (one cache entry each)."""
    prompt = ctx.prompt("hgot_infer", instruction=ctx.task.instruction, demos=demos,
                        context=format_passages(passages) or "(no passages)",
                        hints=hints, question=question)
    temp = temperature if n > 1 else 0.0
    return [Request.of(prompt, max_tokens=max_tokens, temperature=temp, seed=ctx.seed,
                       sample_index=i, stop=("\nQuestion:", "\n\n\n")) for i in range(n)]

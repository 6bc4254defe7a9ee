"""Prompt token counts before a call: exact where the backend has the model's tokenizer.

A completion's usage is always the backend's own count (llama.cpp counts the
tokens it decodes; a server or provider reports ``usage``). Before a call
there is no completion, and what a prompt costs must be counted or guessed:
the rate limiter's tokens-per-minute bucket and cost estimates ask here.

A backend that can count exactly offers ``count_tokens(requests)`` (a list
with one count per request, None where it cannot tell): the embedded
llama.cpp backend renders the chat template and tokenizes as its decoder
does. Through any stack of wrappers (``Cached``, ``Retrying``, ``Limited``,
``Metered``: each keeps its backend as ``inner``) the backend's counter is
found and used. Where there is none (an OpenAI-compatible server, a LiteLLM
provider), the count is an estimate, one token per four characters, and
:class:`PromptTokens` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence

from ..core.text import CHARS_PER_TOKEN
from ..core.types import Request

__all__ = ["CHARS_PER_TOKEN", "PromptTokens", "count_prompt_tokens", "estimated_prompt_tokens", "tokenizer_of"]


@dataclass(frozen=True)
class PromptTokens:
    """One count per request; ``exact`` is False where any of them is an estimate."""

    counts: list[int]
    exact: bool


def estimated_prompt_tokens(request: Request) -> int:
    """An estimate, not a count: characters / 4 over the messages' text."""
    return sum(len(m.content) for m in request.messages) // CHARS_PER_TOKEN


def tokenizer_of(lm: Any) -> Callable[[Sequence[Request]], Awaitable[list[int | None]]] | None:
    """The exact counter of the backend under ``lm``'s wrappers, or None if it has none."""
    seen: set[int] = set()
    while lm is not None and id(lm) not in seen:
        seen.add(id(lm))
        count = getattr(lm, "count_tokens", None)
        if callable(count):
            return count
        lm = getattr(lm, "inner", None)
    return None


async def count_prompt_tokens(lm: Any, requests: Sequence[Request]) -> PromptTokens:
    """Prompt tokens of each request: the model's own count where the backend has
    one, else (per request) the labelled characters/4 estimate."""
    requests = list(requests)
    count = tokenizer_of(lm)
    exact_counts: list[int | None] = list(await count(requests)) if count else [None] * len(requests)
    counts = [n if n is not None else estimated_prompt_tokens(r) for n, r in zip(exact_counts, requests)]
    return PromptTokens(counts, exact=all(n is not None for n in exact_counts))

"""How retrieved passages appear in prompts: one formatter for every strategy.

A passage reads ``Title | text`` (just the text when it has no title), its
text clipped to ``words`` words when ``words > 0`` (small models, long
passages). A list is numbered ``[1]``, ``[2]``, ... one per line, which is
what citation markers in HGOT's thoughts refer to. (DecomP's reader prompts
keep the paper's own ``Wikipedia Title:`` layout.)
"""

from __future__ import annotations

from typing import Sequence

from ..core.types import Passage


def clip_words(text: str, words: int) -> str:
    """The first ``words`` words and " ..." (all of ``text`` when ``words <= 0`` or it is shorter)."""
    split = text.split()
    return text if words <= 0 or len(split) <= words else " ".join(split[:words]) + " ..."


def passage_text(passage: Passage, words: int = 0) -> str:
    body = clip_words(passage.text, words)
    return f"{passage.title} | {body}" if passage.title else body


def numbered(texts: Sequence[str], empty: str = "(no passages)") -> str:
    """``[1] first``, ``[2] second``, ... one per line; ``empty`` for none."""
    return "\n".join(f"[{i + 1}] {t}" for i, t in enumerate(texts)) or empty


def format_passages(passages: Sequence[Passage], words: int = 0) -> str:
    """Numbered passages as prompts show them."""
    return numbered([passage_text(p, words) for p in passages])


def dedupe(passages: Sequence[Passage]) -> list[Passage]:
    """First occurrence of each passage id, in order."""
    seen: set[str] = set()
    return [p for p in passages if not (p.id in seen or seen.add(p.id))]

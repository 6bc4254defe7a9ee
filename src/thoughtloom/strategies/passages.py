"""How retrieved passages appear in prompts: one formatter for every strategy.

A passage reads ``Title | text`` (just the text when it has no title), its
text clipped to ``words`` words when ``words > 0`` (small models, long
passages). A list is numbered ``[1]``, ``[2]``, ... one per line, which is
what citation markers in HGOT's thoughts refer to. (DecomP's reader prompts
keep the paper's own ``Wikipedia Title:`` layout.)

A retrieved passage is untrusted text (a corpus may hold anything). Every
passage a strategy retrieves is bounded once, where it enters
(:meth:`~thoughtloom.strategies.context.Context.search` calls :func:`bounded`):
its text is cut at :data:`MAX_PASSAGE_CHARS` and its title at
:data:`MAX_TITLE_CHARS` (marked " ..."), control characters other than tab
and line breaks (NUL, escape sequences) are dropped, and lone surrogates
(invalid UTF-8 read with ``surrogateescape``) become U+FFFD. A passage
within those bounds is passed on as it is, byte for byte.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Sequence

from ..core.text import encodable
from ..core.types import Passage

#: Longest passage text a prompt shows (about 2,500 tokens; the longest paragraph
#: of the packaged QA data is 8,268 characters).
MAX_PASSAGE_CHARS = 10_000
MAX_TITLE_CHARS = 500
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _bound(text: str, limit: int) -> str:
    clean = _CONTROL.sub("", encodable(text[:limit]))  # cut first: a 10 MB passage costs no more than a short one
    return clean + " ..." if len(text) > limit else clean


def bounded(passage: Passage) -> Passage:
    """``passage`` within the bounds a prompt gives one passage (see the module doc); the
    same object when it already is."""
    text, title = _bound(passage.text, MAX_PASSAGE_CHARS), _bound(passage.title, MAX_TITLE_CHARS)
    if text == passage.text and title == passage.title:
        return passage
    return dataclasses.replace(passage, text=text, title=title)


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

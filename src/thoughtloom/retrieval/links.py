"""Title-link expansion: a second hop that follows the titles the first hop's passages name.

A multi-hop question names its first hop; the second hop is often a page whose
title the first hop's paragraph mentions (Wikipedia's links, written as text
in the corpus files). With ``links.seeds`` = s > 0, a search takes the top s
passages of the ordinary search, lists every passage whose title appears in
their text (seed by seed, in order of mention), and fuses that list with the
ordinary ranking by reciprocal-rank fusion (:func:`.hybrid.rrf`). No model
call: the query is rewritten per hop from the retrieved text alone.

Titles are matched as whole words, case-insensitively, up to
:data:`MAX_TITLE_WORDS` words. The title table is built from the passage
store on the first expanded search.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

from ..core.options import Options, make, option
from .hybrid import rrf

#: Titles longer than this many words are not looked for in passage text.
MAX_TITLE_WORDS = 8
_WORD = re.compile(r"\w+(?:[-'.]\w+)*")


@dataclass(frozen=True)
class LinkSettings(Options):
    seeds: int = option(0, min=0)  # first-hop passages whose named titles are followed; 0: off
    weight: float = option(1.0, min=0)  # the linked list's fusion weight (the ordinary ranking's is 1)
    rrf_k: float = option(60.0, min=0)
    depth: int = option(100, min=1)  # how deep the ordinary ranking is read before fusing

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "LinkSettings":
        return make(cls, d, owner="links")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _key(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


class TitleLinks:
    """Which passages a text names by title (longest title first at each word)."""

    def __init__(self, titles: Sequence[str]) -> None:
        self.rows: dict[str, list[int]] = {}
        for row, title in enumerate(titles):
            key = _key(title)
            if key and len(key.split()) <= MAX_TITLE_WORDS:
                self.rows.setdefault(key, []).append(row)

    def named(self, text: str) -> list[int]:
        words = _WORD.findall(text.lower())
        out: list[int] = []
        i = 0
        while i < len(words):
            for n in range(min(MAX_TITLE_WORDS, len(words) - i), 0, -1):
                rows = self.rows.get(" ".join(words[i:i + n]))
                if rows:
                    out.extend(rows)
                    i += n - 1
                    break
            i += 1
        return out


def expand(first: Sequence[Sequence[tuple[int, float]]], text_of: Callable[[int], str], links: TitleLinks,
           settings: LinkSettings, k: int) -> list[list[tuple[int, float]]]:
    """Each ordinary ranking fused with the passages its top ``seeds`` name, the top ``k``."""
    out = []
    for hits in first:
        ranked = [r for r, _ in hits]
        named: list[int] = []
        seen = set(ranked[:settings.seeds])
        for row in ranked[:settings.seeds]:
            for r in links.named(text_of(row)):
                if r not in seen:
                    seen.add(r)
                    named.append(r)
        out.append(rrf([ranked, named], [1.0, settings.weight], k, settings.rrf_k))
    return out

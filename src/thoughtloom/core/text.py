"""Making untrusted text safe to hash, store and print.

Model replies (and data files) may hold lone UTF-16 surrogates such as
``"\\ud83d"``: valid in a Python ``str`` but not encodable as UTF-8, so they
crash hashing, JSON writers and SQLite. Backends pass every reply through
:func:`encodable` once, where the text enters the library; nothing
downstream needs to care.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")

#: What a lone surrogate becomes (U+FFFD REPLACEMENT CHARACTER).
REPLACEMENT = "\ufffd"


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a no-op on clean text)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(REPLACEMENT, text)

"""Making untrusted text safe to hash, store and print.

It also holds the package's one estimate of text length in tokens where no
tokenizer counts (:data:`CHARS_PER_TOKEN`).

Model replies (and data files) may hold lone UTF-16 surrogates such as
``"\\ud83d"``: valid in a Python ``str`` but not encodable as UTF-8, so they
crash hashing, JSON writers and SQLite. Backends pass every reply through
:func:`encodable` once, where the text enters the library; nothing
downstream needs to care.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")

#: Characters per token of the estimate used where no tokenizer counts (English text, BPE tokenizers).
CHARS_PER_TOKEN = 4

#: What a lone surrogate becomes (U+FFFD REPLACEMENT CHARACTER).
REPLACEMENT = "\ufffd"


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a no-op on clean text)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(REPLACEMENT, text)

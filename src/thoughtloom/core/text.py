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
# the user-info of a URL (``scheme://user:password@``); the scheme is kept, the rest never shown
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]+@")

#: Characters per token of the estimate used where no tokenizer counts (English text, BPE tokenizers).
CHARS_PER_TOKEN = 4

#: What a lone surrogate becomes (U+FFFD REPLACEMENT CHARACTER).
REPLACEMENT = "\ufffd"


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a no-op on clean text)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(REPLACEMENT, text)


def redact_credentials(text: str) -> str:
    """``text`` with the user-info of every URL in it (``http://user:SECRET@host``) replaced by
    ``***``: what may be written to a file, a trace or a terminal."""
    return _USERINFO.sub(r"\1***@", text) if "@" in text else text


def split_userinfo(url: str) -> tuple[str, str]:
    """(``url`` without its user-info, the user-info as written: ``user:password`` or "")."""
    match = _USERINFO.match(url.strip())
    if match is None:
        return url, ""
    rest = url.strip()[match.end():]
    return match.group(1) + rest, url.strip()[len(match.group(1)):match.end() - 1]


# C0 controls but tab and newline, DEL, C1 controls: what makes a terminal act (ESC[2J clears it,
# ESC]0;...BEL retitles it, a NUL or CR hides what came before)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` safe to print to a terminal or a log line: each control character but newline and
    tab shown as its ``\\xNN`` escape (so ESC[2J prints as the text ``\\x1b[2J``), lone surrogates
    made encodable. For model replies, passages and anything else read from outside."""
    text = encodable(text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text) if not text.isprintable() else text

"""Did-you-mean for names a user types: strategies, tasks, programs, options, model specs.

Every registry raises its "unknown NAME" error through :func:`unknown`, so a
typo gets the same one-line answer everywhere::

    unknown strategy 'cot_sc' (did you mean 'cot-sc'? choose one of: cot, cot-sc, ...)
"""

from __future__ import annotations

import difflib
from typing import Iterable

from .errors import ConfigError


def suggestion(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``name`` (difflib's ratio >= 0.6), or None if none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def choices_hint(name: str, choices: Iterable[str], *, listing: str = "choose one of") -> str:
    """'did you mean X? choose one of: A, B, ...' (the first part only when a choice is close)."""
    ordered = sorted(choices)
    guess = suggestion(name, ordered)
    return (f"did you mean {guess!r}? " if guess else "") + f"{listing}: {', '.join(ordered) or '(none)'}"


def unknown(kind: str, name: str, choices: Iterable[str]) -> ConfigError:
    """``unknown KIND 'name'`` with the nearest choice, if any, and the full list."""
    return ConfigError(f"unknown {kind} {name!r}", hint=choices_hint(name, choices))

"""Range checks for option dataclasses (strategy configs), one rule set for all.

``--set max_tokens=0`` type-checks but makes every example fail; ``n=0``,
``rollouts=-3`` or ``temperature=nan`` do worse, silently. :func:`check_options`
walks a config dataclass and refuses such values before any model call,
naming the option. Bounds come from, in order:

1. the field's metadata, for a config that states them::

       rollouts: int = field(default=8, metadata={"min": 1, "max": 1000})

2. else the option's kind, by convention of name and value type:

   - every number must be finite and >= 0 (no option here is signed);
   - a whole number that counts work to do -- ``n``, ``samples``,
     ``rollouts``, ``beam``, ``iterations``, ``hops``, ``parallel``,
     ``top_k``, ``clip``, ``max_*`` (except ``max_retries``), any
     ``*tokens`` -- must be >= 1;
   - other whole numbers (``shots``, ``k``, ``passage_words``, retries, ...)
     may be 0, where 0 means none or the default.

Booleans, strings and ``None`` (unset optional) are not range-checked; the
strategies' own parsers say what strings they accept.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True)
class TaskSetting:
    """A search option's value that a task declares (``Task.search_settings``), and where it comes from
    (the paper's sentence, or why we chose it where the paper is silent)."""

    value: Any
    source: str

#: whole-number options that must be at least 1
_POSITIVE = re.compile(r"^(n|samples|rollouts|beam|iterations|hops|parallel|top_k|clip)$"
                       r"|^max_(?!retries$)|tokens$")


def bounds(field: dataclasses.Field, value: Any) -> tuple[float | None, float | None]:
    """(min, max) allowed for ``field`` holding ``value``; None where unbounded."""
    meta = field.metadata or {}
    if "min" in meta or "max" in meta:
        return meta.get("min"), meta.get("max")
    if isinstance(value, int) and _POSITIVE.search(field.name):
        return 1, None
    return 0, None


def check_options(config: Any, *, owner: str = "") -> None:
    """Raise :class:`ConfigError` naming the first option of ``config`` out of range."""
    if not dataclasses.is_dataclass(config):
        return
    where = f"{owner} option" if owner else "option"
    for field in dataclasses.fields(config):
        value = getattr(config, field.name, None)
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"bad value for {where} {field.name}: {value!r}", hint="must be a finite number")
        low, high = bounds(field, value)
        if low is not None and value < low:
            raise ConfigError(f"bad value for {where} {field.name}: {value!r}", hint=f"must be >= {low}")
        if high is not None and value > high:
            raise ConfigError(f"bad value for {where} {field.name}: {value!r}", hint=f"must be <= {high}")

"""Structured (JSON) output: ask, parse defensively, re-ask once, then fail typed.

Models wrap JSON in prose or code fences, truncate it, or ignore the schema.
:func:`parse_json` digs out the first balanced JSON value and validates it;
:func:`generate_json` asks for a batch of replies and re-asks each failed one
once, quoting the parse error; each unreadable reply is a ``malformed``
trace event (``what`` as the caller names it, ``reason: unparseable``,
``attempt`` 1 or 2). A reply that still fails raises
:class:`ParseError` carrying the raw text; callers that must not fail use
``return_errors=True`` and get the error in place of the value.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping, Sequence

import jsonschema

from ..core.bounded import clip, loads_json
from ..core.errors import ParseError
from ..core.events import malformed
from ..core.protocols import LM
from ..core.trace import Trace
from ..core.types import Request, assistant, user

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _balanced_spans(text: str) -> list[str]:
    """Every top-level ``{...}`` or ``[...]`` span, string-aware."""
    spans, depth, start, in_str, escape = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch in "{[":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "}]" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def parse_json(text: str, schema: Mapping[str, Any] | None = None) -> Any:
    """The first JSON value in ``text`` that parses (and fits ``schema``).

    Reads at most ``MAX_PARSE_CHARS`` of the reply; each candidate is decoded
    by :func:`thoughtloom.core.bounded.loads_json` (bounded depth and
    numbers, no NaN/Infinity), so any unusable reply is a :class:`ParseError`.
    """
    text = clip(text)
    spans = _FENCE.findall(text) + _balanced_spans(text)
    candidates = [text.strip()] + spans
    last_error = ""
    for candidate in candidates:
        try:
            value = loads_json(candidate)
        except ParseError as exc:
            last_error = str(exc)
            continue
        if schema is not None:
            try:
                jsonschema.validate(value, schema)
            except jsonschema.ValidationError as exc:
                last_error = f"JSON does not fit the schema: {exc.message}"
                continue
        return value
    if not spans and not text.strip().startswith(("{", "[")):
        last_error = "no JSON object found in the reply"
    raise ParseError(last_error, raw=text)


async def generate_json(
    lm: LM,
    requests: Sequence[Request],
    *,
    schema: Mapping[str, Any] | None = None,
    trace: Trace | None = None,
    what: str = "json",
    return_errors: bool = False,
) -> list[Any]:
    """One parsed JSON value per request; failed replies are re-asked once, as a batch."""
    requests = [replace(r, json_schema=schema) if schema is not None else r for r in requests]
    completions = await lm.generate(requests)
    results: list[Any] = [None] * len(requests)
    retry: list[int] = []
    errors: dict[int, ParseError] = {}
    for i, c in enumerate(completions):
        try:
            results[i] = parse_json(c.text, schema)
        except ParseError as exc:
            errors[i] = exc
            retry.append(i)
            if trace is not None:
                malformed(trace, what, "unparseable", c.text, error=str(exc), attempt=1)
    if retry:
        again = [
            replace(
                requests[i],
                messages=requests[i].messages
                + (assistant(completions[i].text),
                   user(f"That reply could not be used ({errors[i]}). "
                        "Reply again with only the JSON value, nothing else.")),
            )
            for i in retry
        ]
        for i, c in zip(retry, await lm.generate(again)):
            try:
                results[i] = parse_json(c.text, schema)
            except ParseError as exc:
                if trace is not None:
                    malformed(trace, what, "unparseable", c.text, error=str(exc), attempt=2)
                if not return_errors:
                    raise
                results[i] = exc
    return results

"""What a thought is and how a reply is read as one.

Each thought (sampled by :mod:`.infer`) is a rationale whose statements cite
passages as [1], [2], ... and a short factoid answer (1-5 words). Two formats
(``thought_format``):

``json`` (default; prompt ``hgot_infer_json``): the reply is a JSON object
under a schema, so backends with grammar-constrained decoding (the embedded
llama.cpp model, llama.cpp / vLLM servers) cannot break the format::

    {"statements": [{"text": "Jaws was directed by Steven Spielberg.", "cites": [1]},
                    {"text": "He was born in 1946.", "cites": [2]}],
     "answer": "1946"}

``lines`` (prompt ``hgot_infer``), the paper's free-text format::

    Rationale: Jaws was directed by Steven Spielberg [1]. He was born in 1946 [2].
    Answer: 1946

Small models follow ``lines`` badly (the bench model left 59 of its sampled
thoughts without an answer line on 6 HotpotQA questions; see docs/hgot.md).
:func:`parse_thought` reads either format from any reply, so a server that
ignores the schema still gets its lines-format answer read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.errors import ParseError
from ...lm.structured import parse_json
from .quality import Statement, split_statements

THOUGHT_FORMATS = ("json", "lines")

# [\s*]* rather than \s*\**\s*: adjacent optional runs backtrack quadratically on long blank lines
_ANSWER = re.compile(r"^[\s*]*(?:final\s+)?answer[\s*]*:\s*(.*)$", re.IGNORECASE)
_RATIONALE = re.compile(r"^[\s*]*rationale[\s*]*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Thought:
    index: int
    answer: str | None  # None when no answer could be read (it then casts no vote)
    rationale: str
    statements: tuple[Statement, ...]
    text: str


def thought_schema(n_passages: int, cap: int = 3) -> dict:
    """JSON schema of a ``json`` thought: at most ``cap`` cited statements of at most ``cap``
    citations each (0: no cap, as C.5 sets none), then the answer. The lengths of a
    statement's text and of the answer stay bounded (150 / 60 characters: a safety bound on
    model text, not a rule of the paper)."""
    cite = {"type": "integer", "minimum": 1, "maximum": max(1, n_passages)}
    most = {"maxItems": cap} if cap > 0 else {}
    statement = {"type": "object", "additionalProperties": False, "required": ["text", "cites"],
                 "properties": {"text": {"type": "string", "maxLength": 150},
                                "cites": {"type": "array", "items": cite, **most}}}
    return {"type": "object", "additionalProperties": False, "required": ["statements", "answer"],
            "properties": {"statements": {"type": "array", "items": statement, "minItems": 1, **most},
                           "answer": {"type": "string", "maxLength": 60}}}


def how_many(cap: int) -> str:
    """The prompt's words for how many statements a thought has ("one to three"; "one or more" uncapped)."""
    words = {1: "one", 2: "one or two", 3: "one to three", 4: "one to four", 5: "one to five"}
    return "one or more" if cap <= 0 else words.get(cap, f"one to {cap}")


def _json_thought(text: str, n_passages: int, index: int) -> Thought | None:
    """A ``json`` thought, or None when the reply is not one (then the lines parser runs).

    Read leniently: a missing ``cites`` is no citation, out-of-range
    citations are dropped, an empty answer is no answer. The rationale is
    rebuilt in the lines format (``text [1].``) for traces and reports.
    """
    try:
        value = parse_json(text)
    except ParseError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("statements"), list):
        return None
    statements, parts = [], []
    for item in value["statements"]:
        if not isinstance(item, dict) or not str(item.get("text", "")).strip():
            continue
        body = " ".join(str(item["text"]).split())
        end = body[-1] if body[-1] in ".!?" else "."
        body = body.rstrip(".!?")
        raw = item.get("cites") if isinstance(item.get("cites"), list) else []
        cites = tuple(dict.fromkeys(c - 1 for c in raw
                                    if isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= n_passages))
        statements.append(Statement(body + end, cites))
        parts.append(body + "".join(f" [{c + 1}]" for c in cites) + end)
    answer = str(value.get("answer") or "").strip().rstrip(".").strip() or None
    return Thought(index, answer, " ".join(parts), tuple(statements), text)


def parse_thought(text: str, n_passages: int, index: int = 0) -> Thought:
    """Split a completion into rationale and answer; read the citations.

    A reply holding a ``json`` thought object is read as one. Otherwise the
    lines format: the answer is the text after the last ``Answer:`` line (trailing period
    dropped); a reply that is one bare line of at most 5 words is taken as
    the answer with an empty rationale. Otherwise the thought has no answer
    and does not vote; the caller traces it as malformed.
    """
    as_json = _json_thought(text, n_passages, index)
    if as_json is not None:
        return as_json
    lines = text.strip().splitlines()
    answer = None
    cut = len(lines)
    for i in range(len(lines) - 1, -1, -1):
        m = _ANSWER.match(lines[i])
        if m:
            answer = m.group(1).strip().rstrip(".").strip() or None
            cut = i
            break
    content = [ln for ln in lines if ln.strip()]
    if answer is None and len(content) == 1 and len(content[0].split()) <= 5 and "[" not in content[0]:
        answer, cut = content[0].strip().rstrip("."), 0  # a bare short answer, no rationale
    rationale = _RATIONALE.sub("", "\n".join(lines[:cut]).strip()).strip()
    return Thought(index, answer, rationale, tuple(split_statements(rationale, n_passages)), text)

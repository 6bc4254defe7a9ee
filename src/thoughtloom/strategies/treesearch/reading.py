"""Reading the thought evaluator's reply: a score in [0, 1] and feedback.

Replies are JSON (see the ``*evaluate*`` prompts; the request carries
:func:`evaluation_schema`, which a backend that can constrains the reply
to) but small models bend the shape: scores as strings ("7/10", "8 out of
10"), percentages, a bare list of items, items without scores. A bare number
is read on the scale the request asked for (0-10), so ``1.0`` is 0.1. :func:`read_evaluation`
accepts what it can and returns None when nothing usable is there; the
search then records a malformed evaluation instead of failing. A score that
is not a finite number (``Infinity``, ``NaN``, ``1e400``, a 5,000-digit
integer) is not usable: it is malformed, never a perfect 1.0 or a silent 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ...core.bounded import clip, loads_json, to_float
from ...core.errors import ParseError

#: The scale the evaluator prompts ask for ("a score from 0 to 10"); a bare number is read on it.
SCALE = 10
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")  # "1e400" is read whole (and refused)
_OUT_OF = re.compile(r"(-?\d+(?:\.\d+)?)\s*\(?\s*(?:/|out of)\s*(\d+(?:\.\d+)?)", re.IGNORECASE)


@dataclass
class Reading:
    score: float
    feedback: str
    items: list[dict[str, Any]] = field(default_factory=list)
    salvaged: bool = False  # read in part from a malformed reply (salvage_items / salvage_holistic)


def read_score(value: Any, scale: float = SCALE) -> float | None:
    """A score as a fraction in [0, 1] of the scale the request asked for; None if there is no finite number.

    The request says the scale (``scale``: our evaluator prompts ask for 0 to
    10), so a bare number is read on it, however it is written: on a 0-10
    request ``7`` and ``"7.0"`` are 0.7, ``1`` and ``1.0`` are both 0.1 (never
    full marks), ``0.9`` is 0.09. A reply that names its own scale is read on
    that one: ``"N/M"`` or ``"N out of M"`` is N / M (``"7/10"`` 0.7,
    ``"0.9/1"`` 0.9), ``"N%"`` is N / 100. A bare number above the scale
    (``85`` on a 0-10 request) is read as a percentage, as models answering
    on 0-100 write it. The result is clamped to [0, 1]; ``True``/``False``
    are 1 and 0.
    """
    try:
        return _read_score(value, scale)
    except ParseError:  # not finite, or too many digits: malformed, not a score
        return None


def _read_score(value: Any, scale: float) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return _scaled(to_float(value), scale)
    if not isinstance(value, str):
        return None
    value = clip(value, 10_000)
    m = _OUT_OF.search(value)
    if m and to_float(m.group(2)) > 0:
        return _clamp(to_float(m.group(1)) / to_float(m.group(2)))
    m = _NUMBER.search(value)
    if not m:
        return None
    raw = to_float(m.group())
    if value[m.end():].lstrip().startswith("%"):
        return _clamp(raw / 100)
    return _scaled(raw, scale)


def _scaled(raw: float, scale: float) -> float:
    """``raw`` on the requested ``scale`` (above it and at most 100: a percentage)."""
    if raw > scale and raw <= 100:
        return _clamp(raw / 100)  # the model used a percentage scale
    return _clamp(raw / scale)


def _clamp(x: float) -> float:
    return min(1.0, max(0.0, x))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return str(value)


def _first(d: dict, *keys: str) -> Any:
    lowered = {str(k).lower(): v for k, v in d.items()}
    for k in keys:
        if k in lowered:
            return lowered[k]
    return None


_FLAT_OBJECT = re.compile(r"\{[^{}]*\}")


def salvage_items(raw: str) -> list[dict] | None:
    """The complete ``{...}`` item objects of a reply cut off mid-list (the
    model ran out of tokens): better part of the verdict than none."""
    items = []
    for m in _FLAT_OBJECT.finditer(clip(raw or "")):
        try:
            value = loads_json(m.group())
        except ParseError:
            continue
        if isinstance(value, dict) and any(str(k).lower() in ("score", "interesting") for k in value):
            items.append(value)
    return items or None


_SCORE_FIELD = re.compile(r'"score"\s*:\s*"?(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:\s*/\s*\d+)?)')
_FEEDBACK_FIELD = re.compile(r'"feedback"\s*:\s*"((?:[^"\\]|\\.)*)')


def salvage_holistic(raw: str, scale: float = SCALE) -> Reading | None:
    """Score (and whatever feedback was written) from a holistic reply cut
    off before its closing brace; the prompt asks for the score first."""
    raw = clip(raw or "")
    m = _SCORE_FIELD.search(raw)
    score = read_score(m.group(1), scale) if m else None
    if score is None:
        return None
    fb = _FEEDBACK_FIELD.search(raw)
    return Reading(score, fb.group(1).strip() if fb else "")


def read_evaluation(reply: Any, item_labels: list[str] | None = None, scale: float = SCALE) -> Reading | None:
    """Holistic ({"score", "feedback"}) or itemized ({"items": [...]}) replies.

    For itemized replies the node's score is the mean of the item scores
    (items without a readable score are left out of the mean) and the
    feedback lists every item's feedback under its label.
    """
    if isinstance(reply, list):
        reply = {"items": reply}
    if not isinstance(reply, dict):
        return None
    proposals = _first(reply, "proposals", "spans")
    items = _first(reply, "items", "parts", "clues")
    if isinstance(items, list) and items and all(isinstance(i, dict) and "start" in i for i in items):
        proposals = items  # salvaged span proposals come back as a bare list
    if isinstance(proposals, list) and proposals:
        return _spans(proposals, scale, len(item_labels or ()))
    if isinstance(items, list) and items:
        return _itemized(items, item_labels or [], reply, scale)
    score = read_score(_first(reply, "score", "rating", "value", "interestingness"), scale)
    if score is None:
        correct = _first(reply, "correct")
        if isinstance(correct, bool):
            score = 1.0 if correct else 0.0
    if score is None:
        score = read_verdict(_first(reply, "verdict"))
    if score is None:
        return None
    feedback = _text(_first(reply, "feedback", "reason", "explanation", "comment"))
    return Reading(score, feedback)


def read_verdict(value: Any) -> float | None:
    """ThoughtSculpt App. A.3's verdict as v(x): "no need to improve" is 1, "still need to improve"
    (or any other "need to improve") 0; None for anything else."""
    if not isinstance(value, str):
        return None
    text = " ".join(clip(value, 200).lower().split())
    if "no need to improve" in text:
        return 1.0
    return 0.0 if "need to improve" in text else None


def _itemized(items: list, labels: list[str], reply: dict, scale: float) -> Reading | None:
    parsed, scores = [], []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        label = _text(_first(item, "item", "label", "part", "clue")) or (labels[i] if i < len(labels) else str(i + 1))
        score = read_score(_first(item, "score", "rating", "value"), scale)
        feedback = _text(_first(item, "feedback", "reason", "comment"))
        parsed.append({"item": label, "score": score, "feedback": feedback})
        if score is not None:
            scores.append(score)
    if not scores:
        overall = read_score(_first(reply, "score"), scale)
        if overall is None:
            return None
        scores = [overall]
    return Reading(sum(scores) / len(scores), _item_lines(parsed), parsed)


def _spans(proposals: list, scale: float, count: int = 0) -> Reading | None:
    """ThoughtSculpt App. A.1's itemized outline evaluation: each proposal names a span of
    consecutive items ``[start]-[end]``, a reason and the span's interesting level (1-10). The
    items are the spans, least interesting first as the reply lists them, each with its level as
    its score and its reason (and thought) as its feedback, so child j rewrites span j
    (``ThoughtGenerator._feedback``); the node's score is the mean level. With the outline's
    ``count`` of items, a span past its end is dropped and an end past it cut to it. None
    without a readable span and level."""
    parsed = []
    for p in proposals[:MAX_PROPOSALS]:
        if not isinstance(p, dict):
            continue
        start, end = _index(_first(p, "start", "start_index")), _index(_first(p, "end", "end_index"))
        if start is None or count and start > count:
            continue
        end = end if end is not None and end >= start else start
        end = min(end, count) if count else end
        level = read_score(_first(p, "interesting", "interesting_level", "level", "score"), scale)
        words = [_text(_first(p, "reason")), _text(_first(p, "thought", "thought_process"))]
        parsed.append({"item": f"[{start}]-[{end}]", "score": level,
                       "feedback": "; ".join(w for w in words if w) or "make these items more interesting"})
    levels = [i["score"] for i in parsed if i["score"] is not None]
    if not levels:
        return None
    return Reading(sum(levels) / len(levels), _item_lines(parsed), parsed)


MAX_PROPOSALS = 20  # span proposals read from one reply (model text: bounded)


def _index(value: Any) -> int | None:
    """An outline item number, 1 to 1000 (a span's end); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        found = re.search(r"\d{1,4}", clip(value, 50))
        value = int(found.group()) if found else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and 1 <= value <= 1000 else None


def _item_lines(items: list[dict[str, Any]]) -> str:
    """The feedback the generator reads: each item's under its label, with its score."""
    return "\n".join(f"{i['item']}: {i['feedback']}" + ("" if i["score"] is None else f" (score {i['score'] * 10:.0f}/10)")
                     for i in items)


def _key(label: str) -> str:
    return label.strip().strip("[]().:").strip().lower()


def limit_reading(reading: Reading, labels: Sequence[str], limits: Sequence[float]) -> int:
    """Hold a reading to the task's own limits (``SearchTask.score_limits``), in place;
    returns how many scores were lowered.

    ``limits[i]`` is the most the task's rubric lets item ``labels[i]`` score
    (crosswords: a clue with blanks "scores at most 5"). A reply's item is
    matched to its limit by label (``h2``, ``[3]``), else by its position; the
    node's score is again the mean of its items' scores. A reading without
    item scores is held to the mean of the limits, the most its items could
    average. A symbolic check of the rubric the evaluator was given, never
    of the answer: it can only lower a score.
    """
    if not limits:
        return 0
    where = {_key(label): i for i, label in enumerate(labels)}
    lowered = 0
    scored = [item for item in reading.items if item.get("score") is not None]
    for pos, item in enumerate(reading.items):
        i = where.get(_key(str(item.get("item", ""))), pos)
        if item.get("score") is not None and i < len(limits) and item["score"] > limits[i]:
            item["score"], lowered = limits[i], lowered + 1
    if scored:
        if lowered:
            reading.score = sum(item["score"] for item in scored) / len(scored)
            reading.feedback = _item_lines(reading.items)
    elif reading.score > (most := sum(limits) / len(limits)):
        reading.score, lowered = most, 1
    return lowered


def judged_below(items: Sequence[dict[str, Any]], labels: Sequence[str], judged: Sequence[bool],
                 below: float) -> str | None:
    """The label of the first item of a reading that may judge its node (``judged[i]`` for the item
    labelled ``labels[i]``; an item matched by label, else by position) and scores below ``below``;
    None if there is none (a pruning rule: Yao et al. drop a state with any clue judged impossible)."""
    where = {_key(label): i for i, label in enumerate(labels)}
    for pos, item in enumerate(items):
        score = item.get("score")
        i = where.get(_key(str(item.get("item", ""))), pos)
        if score is not None and score < below and (i >= len(judged) or judged[i]):
            return str(item.get("item", ""))
    return None


def evaluation_schema(items: int, style: str = "score", proposals: int = 3) -> dict[str, Any]:
    """The JSON schema of an evaluation reply: on the prompts' 0-10 scale, holistic
    (``{"score", "feedback"}``, ``items`` = 0) or one entry per item; or the reply of a
    ``verdict`` or ``check`` prompt (:data:`~.evaluator.STYLES`). Backends that can (the
    embedded model's grammar, an OpenAI-compatible ``response_format``) hold the reply to
    it; the reader still reads a reply that ignores it."""
    if style == "verdict":
        return {"type": "object", "required": ["verdict", "reason"], "additionalProperties": False,
                "properties": {"verdict": {"enum": ["no need to improve", "still need to improve"]},
                               "reason": {"type": "string", "maxLength": 300}}}
    if style == "check":
        return {"type": "object", "required": ["calculation", "result", "feedback", "correct"],
                "additionalProperties": False,
                "properties": {"calculation": {"type": "string", "maxLength": 200}, "result": {"type": "number"},
                               "feedback": {"type": "string", "maxLength": 200}, "correct": {"type": "boolean"}}}
    if style == "spans":  # App. A.1: [reason] [start_index]-[end_index] [interesting level: 1-10]
        index = {"type": "integer", "minimum": 1, "maximum": max(items, 1)}
        span = {"type": "object", "required": ["thought", "reason", "start", "end", "interesting"],
                "additionalProperties": False,
                "properties": {"thought": {"type": "string", "maxLength": 200},
                               "reason": {"type": "string", "maxLength": 100},
                               "start": index, "end": index, "interesting": {"enum": list(range(1, SCALE + 1))}}}
        return {"type": "object", "required": ["proposals"], "additionalProperties": False,
                "properties": {"proposals": {"type": "array", "items": span, "minItems": 1,
                                             "maxItems": max(proposals, 1)}}}
    score = {"enum": list(range(SCALE + 1))}  # an enum, which every grammar converter honours (minimum/maximum not)
    if not items:
        return {"type": "object", "required": ["score", "feedback"], "additionalProperties": False,
                "properties": {"score": score, "feedback": {"type": "string", "maxLength": 300}}}
    item = {"type": "object", "required": ["item", "feedback", "score"], "additionalProperties": False,
            "properties": {"item": {"type": "string", "maxLength": 16},
                           "feedback": {"type": "string", "maxLength": 100}, "score": score}}
    return {"type": "object", "required": ["items"], "additionalProperties": False,
            "properties": {"items": {"type": "array", "items": item, "minItems": items, "maxItems": items}}}

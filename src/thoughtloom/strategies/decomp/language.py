"""The prompting-program language: step lines, answers, ``#k`` references, operators.

A decomposer writes one step per turn::

    QS: (split) "What are the words in "Augusta Ada King"?"
    QS: (str_position) [project_values] "What is the 3rd letter of "#1"?"
    QS: [EOQ]

A step names exactly one handler and, optionally, one operator; either may be
written in round or square brackets (the paper's ``(operator) [handler]`` and
our ``(handler) [operator]`` both parse). The sub-question may be quoted.

Operators (Khot et al. 2023, appendix G):

``select`` (default)
    replace each ``#k`` with the k-th earlier answer and ask once.
``project_values`` (alias ``foreach``)
    the first ``#k`` that names a list answer is replaced by each element in
    turn; the handler answers every item and the step's answer is the list.
``project_values_flat_unique`` (alias ``foreach_merge``)
    like ``project_values``, then flatten list answers and drop duplicates.

References. A ``#k`` is a step reference when it stands as its own token:
the ``#`` not glued to a letter, digit, ``&`` or another ``#`` before it,
the digits not followed by a letter or digit (so ``C#1``, ``&#39;``,
``#1st`` are text). A reference names the answer of step k, which must have
run (1 <= k <= steps so far); one that names no step is the decomposer's
error (``bad_reference``, re-asked) -- unless the run's own question holds
the same token, in which case it is that question's text ("Who sang the #1
hit of 1990?" at step 1 asks about the #1 hit). A fixed program's
``$question`` (:data:`QUESTION`) stands for the question itself, passed to
the handler as written, with no reference read in it.

Answers are strings or lists of strings; lists render as JSON arrays. A
handler reply that is one flat list, as JSON (``["a", "b"]``) or as a
Python literal (``['a', 'b']``), is read as a list.
Nothing here calls a model.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Collection, Sequence, Union

from ...core.bounded import MAX_PARSE_CHARS, check_depth, clip, loads_json
from ...core.errors import ParseError
from ...core.text import encodable
from ...tasks.answers import marked_answer

Answer = Union[str, list]

SELECT = "select"
PROJECT = "project_values"
PROJECT_FLAT = "project_values_flat_unique"
OPERATORS = {
    "select": SELECT,
    "project_values": PROJECT,
    "foreach": PROJECT,
    "project_values_flat_unique": PROJECT_FLAT,
    "foreach_merge": PROJECT_FLAT,
}
EOQ = "[EOQ]"
#: In a fixed program's step: the question itself, verbatim (no ``#k`` is read in it).
QUESTION = "$question"

_TAG = re.compile(r"^\s*[\(\[]\s*([A-Za-z_][\w\-]*)\s*[\)\]]")
_REF = re.compile(r"(?<![\w&#])#(\d++)(?!\w)")  # possessive: a long digit run does not backtrack
_NO_STEP = 10 ** 9  # what a reference longer than 9 digits reads as (it names no step; int() stays cheap)
_DECOR = re.compile(r"^[\s\*`>#-]*(?:\d+[\.\)]\s*)?")
_END = re.compile(r"^[\(\[]?\s*EOQ\s*[\)\]]?", re.IGNORECASE)
_WRAPPED = re.compile(r"^\(\s*QS:", re.IGNORECASE)


class StepError(ParseError, ValueError):
    """A decomposer line that cannot be run; ``kind`` says why."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "unparseable" | "unknown_handler" | "bad_reference"


@dataclass(frozen=True)
class Step:
    handler: str
    question: str
    operator: str = SELECT

    def render(self) -> str:
        op = "" if self.operator == SELECT else f" [{self.operator}]"
        return f'({self.handler}){op} "{self.question}"'


@dataclass(frozen=True)
class End:
    def render(self) -> str:
        return EOQ


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1].strip()
    return text


def parse_step(text: str, handlers: Collection[str], n_answers: int, own_question: str = "") -> Step | End:
    """One decomposer turn -> a :class:`Step` or :class:`End`.

    Raises :class:`StepError` for an empty or tag-less line, an unknown
    handler, or a ``#k`` reference that names no earlier answer and is not
    text of ``own_question`` (the run's question; see the module's
    "References").
    """
    # chat models sometimes echo the question, number or embolden lines
    lines = [_DECOR.sub("", ln).strip().strip("*`").strip() for ln in clip(text).strip().splitlines()]
    echoed = next((ln for ln in lines if ln.upper().startswith("QC:")), None)
    lines = [ln for ln in lines if ln and not ln.upper().startswith("QC:")]
    if not lines:
        raise StepError("unparseable", f"no QS: line, only the QC: line {echoed[:120]!r}" if echoed else "empty step")
    line = lines[0]
    if _WRAPPED.match(line):  # "(QS: (qa) "...")": the line in parentheses, as NEXT_STEP writes "(or QS: [EOQ] ...)"
        line = line[1:].strip()
        if line.endswith(")") and line.count(")") > line.count("("):
            line = line[:-1].strip()
    if line.upper().startswith("QS:"):
        line = line[3:].strip()
    if _END.match(line):
        if n_answers == 0:
            raise StepError("unparseable", "[EOQ] before any step")
        return End()
    tags: list[str] = []
    rest = line
    while len(tags) <= 2 and (m := _TAG.match(rest)) is not None:  # more than 2 is an error below
        tags.append(m.group(1))
        rest = rest[m.end():]
    if not tags:
        raise StepError("unparseable", f"no (handler) tag in {line[:120]!r}")
    ops = [t for t in tags if t.lower() in OPERATORS]
    names = [t for t in tags if t.lower() not in OPERATORS]
    question = _unquote(rest)
    if len(tags) > 2 or len(names) != 1 or len(ops) > 1 or not question:
        raise StepError("unparseable", f"expected one handler, at most one operator and a question: {line[:120]!r}")
    name = names[0] if names[0] in handlers else _casefold_match(names[0], handlers)
    if name is None:
        raise StepError("unknown_handler", f"unknown handler {names[0]!r}")
    own = {m.group(0) for m in _REF.finditer(own_question)} if "#" in own_question else set()
    for m in _REF.finditer(question):
        k = _step_number(m)
        if not 1 <= k <= n_answers and m.group(0) not in own:
            raise StepError("bad_reference", f"{m.group(0)[:12]} names no earlier answer ({n_answers} so far)")
    return Step(name, question, OPERATORS[ops[0].lower()] if ops else SELECT)


def _casefold_match(name: str, handlers: Collection[str]) -> str | None:
    """``Split_letters`` means ``split_letters`` when that is the only such handler."""
    found = [h for h in handlers if h.lower() == name.lower()]
    return found[0] if len(found) == 1 else None


def _step_number(m: re.Match) -> int:
    digits = m.group(1)
    return int(digits) if len(digits) <= 9 else _NO_STEP


def references(question: str) -> list[int]:
    """The step numbers of the ``#k`` tokens in ``question``, in order."""
    return [_step_number(m) for m in _REF.finditer(question)]


def render_value(value: Answer) -> str:
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return value


_LANG = re.compile(r"[\w-]*")


def strip_fence(text: str) -> str:
    """The body of a Markdown code fence (```json ... ```), else the text.

    Plain string operations: a lazy regex group before ``\\s*$`` backtracks
    quadratically on long runs of blanks.
    """
    t = text.strip()
    if not t.startswith("```"):
        return text
    body = t[3:]
    body = body[_LANG.match(body).end():].strip()  # type: ignore[union-attr]
    if body.endswith("```"):
        body = body[:-3].rstrip()
    return body


_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def strip_boxed(text: str) -> str:
    """The content of a LaTeX ``\\boxed{...}`` answer (a chat-model habit), else the text.

    "The final numeric answer is \\(\\boxed{86}\\)." reads as "86". Only the
    box is read: a reply without one is left as it is, so a model that does
    not answer is still scored as not answering.
    """
    m = _BOXED.search(text)
    return m.group(1).strip() if m else text


def read_reply(text: str) -> Answer:
    """A few-shot handler's reply as its answer: the answer line, or a JSON value written over lines.

    The examples answer on one line after ``A:``, so the answer is the first
    non-empty line (an echoed ``A:``, a ``\\boxed{}`` and an answer marker such as "The answer is:"
    dropped: :func:`~thoughtloom.tasks.answers.marked_answer`), read by
    :func:`parse_value`. Chat models often fence a JSON answer and spread it
    over lines (a fenced ``json`` block holding ``[``, ``"a, b",``, ``"c"``, ``]``); when
    the reply, fence removed, is one whole JSON array or object, that value is
    the answer: a flat array becomes a list, anything else stays its compact
    one-line JSON text (a nested array is not read as the flat one asked for).
    """
    text = strip_fence(text).strip()
    if text[:2].upper() == "A:":
        text = text[2:].strip()
    if "\n" in text and text[:1] in "[{" and text[-1:] in "]}":
        try:
            value = loads_json(text)
        except ParseError:
            value = None
        if value is not None:
            flat = isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value)
            return [str(v) for v in value] if flat else json.dumps(value, ensure_ascii=False)
    if not text:
        return ""
    line = strip_boxed(text.splitlines()[0].strip())
    return parse_value(marked_answer(line) or line)  # "The answer to the question is: H2O" reads "H2O"


def parse_value(text: str) -> Answer:
    """A handler's reply as an answer: a reply that is one JSON array of scalars becomes a list.

    The whole reply must be the array, so it is decoded as it stands (by the
    one bounded decoder, :func:`~thoughtloom.core.bounded.loads_json`), not
    searched for the first array as :func:`thoughtloom.lm.structured.parse_json`
    does: a citation-style answer such as ``[1] Paris [2]`` stays text.
    """
    text = strip_fence(text).strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            value = loads_json(text)
        except ParseError:  # not JSON, or too long, deep or large to read
            value = _python_list(text)
        if isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
            return [str(v) for v in value]
    return text


def _python_list(text: str) -> list | None:
    """A flat list written as a Python literal (``['a', 'b']``, what models trained on code
    write), read by ``ast.literal_eval`` (literals only, never code) within the same bounds
    as JSON; None for anything else, non-finite numbers included."""
    if "'" not in text or len(text) > MAX_PARSE_CHARS:
        return None
    try:
        check_depth(text)
        value = ast.literal_eval(text)
    except (ParseError, ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) or
                                              (isinstance(v, float) and v == v and abs(v) != float("inf"))
                                              for v in value):
        return None
    return [encodable(v) if isinstance(v, str) else v for v in value]  # '\ud800' escapes: no lone surrogate


def substitute(question: str, answers: Sequence[Answer], override: dict[int, str] | None = None) -> str:
    def repl(m: re.Match) -> str:
        k = _step_number(m)
        if override and k in override:
            return override[k]
        if not 1 <= k <= len(answers):  # the question's own text (parse_step let it through)
            return m.group(0)
        return render_value(answers[k - 1])

    return _REF.sub(repl, question)


def expand(step: Step, answers: Sequence[Answer]) -> list[str]:
    """The handler inputs of a step: one for select, one per item for foreach."""
    if step.operator == SELECT:
        return [substitute(step.question, answers)]
    for k in references(step.question):
        value = answers[k - 1] if 1 <= k <= len(answers) else None
        if isinstance(value, list):
            return [substitute(step.question, answers, {k: str(item)}) for item in value]
    # foreach over a scalar: a one-item list
    return [substitute(step.question, answers)]


def combine(step: Step, results: Sequence[Answer]) -> Answer:
    """The step's answer from its handler results."""
    if step.operator == SELECT:
        return results[0] if results else ""
    if step.operator == PROJECT:
        return [render_value(r) for r in results]
    seen: dict[str, None] = {}
    for r in results:
        for item in (r if isinstance(r, list) else [r]):
            if str(item).strip():
                seen.setdefault(str(item).strip(), None)
    return list(seen)

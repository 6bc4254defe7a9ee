"""One reader for the multi-hop QA record schemas: HotpotQA, 2WikiMultihopQA, MuSiQue, IRCoT.

The field names of these schemas live here and nowhere else. Tasks load
questions and gold answers with :func:`read_qa_record`; the retrieval
package pools :func:`paragraphs` into corpora (:mod:`.formats`) and scores
indexes against :func:`supporting_titles`. It sits in ``retrieval`` because
tasks may import retrieval, never the other way round.

==========  ================================================================
hotpotqa    ``_id``, ``question``, ``answer``,
            ``supporting_facts: [[title, sentence index], ...]``,
            ``context: [[title, [sentence, ...]], ...]``
2wiki       the hotpotqa schema plus ``evidences``
musique     ``id``, ``question``, ``answer``, ``answer_aliases``,
            ``paragraphs: [{title, paragraph_text, is_supporting}, ...]``
ircot       ``question_id``, ``question_text``, ``answers_objects: [{spans}, ...]``,
            ``contexts: [{title, paragraph_text, is_supporting}, ...]`` (IRCoT / DecomP)
==========  ================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

from ..core.errors import DataError
from ..core.files import require

SCHEMAS = ("hotpotqa", "2wiki", "musique", "ircot")
#: where each schema keeps its paragraphs (and, but for hotpotqa/2wiki, its supporting flags)
PARAGRAPH_FIELD = {"hotpotqa": "context", "2wiki": "context", "musique": "paragraphs", "ircot": "contexts"}
#: where each schema names its supporting paragraphs
SUPPORT_FIELD = {"hotpotqa": "supporting_facts", "2wiki": "supporting_facts", "musique": "paragraphs",
                 "ircot": "contexts"}

#: told why a paragraph cannot be read; raises to stop, returns to skip it
OnBad = Callable[[str], None]


@dataclass(frozen=True)
class QARecord:
    """A question with its gold answers and paragraphs, whatever the file's schema."""

    schema: str
    id: str | None  # the record's own id; None when it has none
    question: str
    answers: tuple[str, ...]  # the answer, then its aliases
    paragraphs: tuple[tuple[str, str], ...]  # (title, text); empty when the record carries none
    supporting: tuple[str, ...] | None  # supporting titles as written; None when not given


def schema_of(record: Mapping[str, Any]) -> str:
    """The schema a QA record follows, told by its fields (hotpotqa when none is specific)."""
    if "question_text" in record or "contexts" in record:
        return "ircot"
    if "paragraphs" in record:
        return "musique"
    return "2wiki" if "evidences" in record else "hotpotqa"


def paragraphs(record: Mapping[str, Any], schema: str, bad: OnBad) -> Iterator[tuple[Any, Any]]:
    """(title, text) of each paragraph; a sentence list is joined with spaces.

    A missing field or an unreadable item is reported to ``bad`` and skipped.
    Titles and texts are yielded as found: the caller checks they are strings.
    """
    key = PARAGRAPH_FIELD[schema]
    items = record.get(key)
    if key == "context":
        if not isinstance(items, list):
            bad("missing or non-list field 'context' (expected [[title, [sentences]], ...])")
            return
        for i, item in enumerate(items):
            if (not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[1], list)
                    or not all(isinstance(s, str) for s in item[1])):
                bad(f"context[{i}] is not [title, [sentences]]")
                continue
            yield item[0], " ".join(s.strip() for s in item[1])
        return
    if not isinstance(items, list):
        bad(f"missing or non-list field {key!r}")
        return
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "paragraph_text" not in item:
            bad(f"{key}[{i}] has no 'paragraph_text'")
            continue
        yield item.get("title", ""), item["paragraph_text"]


def supporting_titles(record: Mapping[str, Any], schema: str) -> list[Any] | None:
    """Titles of the supporting paragraphs in record order (repeats kept); None when not given.

    ``supporting_facts`` may also be a plain list of titles (HippoRAG question files).
    """
    items = record.get(SUPPORT_FIELD[schema])
    if not isinstance(items, list):
        return None
    if schema in ("hotpotqa", "2wiki"):
        return [f[0] if isinstance(f, (list, tuple)) and f else f for f in items]
    return [p.get("title", "") for p in items if isinstance(p, dict) and p.get("is_supporting")]


def record_id(record: Mapping[str, Any]) -> str | None:
    """The record's own id (``question_id``, ``_id`` or ``id``), or None."""
    for key in ("question_id", "_id", "id"):
        value = record.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def question_of(record: Mapping[str, Any], schema: str, where: str) -> str:
    """The question text (IRCoT's ``question_text``; ``question`` elsewhere)."""
    return require(record, "question_text" if schema == "ircot" and "question_text" in record else "question",
                   where)


def answers_of(record: Mapping[str, Any], schema: str, where: str) -> list[str]:
    """Gold answers: IRCoT's answer spans, or ``answer`` followed by ``answer_aliases``."""
    if schema == "ircot":
        objects = require(record, "answers_objects", where, list)
        if not all(isinstance(o, dict) for o in objects):
            raise DataError(f"{where}: field 'answers_objects' should be a list of objects")
        return [str(s) for o in objects for s in o.get("spans", []) or []]
    answer = require(record, "answer", where, (str, int, float))
    return [str(answer)] + [str(a) for a in record.get("answer_aliases", []) or []]


def read_qa_record(record: Mapping[str, Any], where: str) -> QARecord:
    """One record as a :class:`QARecord`; anything unreadable is a DataError naming ``where``.

    Paragraphs are read only when the record has its schema's paragraph
    field (question files without passages are fine); once there, a bad
    paragraph is an error.
    """
    schema = schema_of(record)
    question = question_of(record, schema, where)
    answers = answers_of(record, schema, where)
    if not answers:
        raise DataError(f"{where}: no gold answer")

    def bad(why: str) -> None:
        raise DataError(f"{where}: {why}")

    paras = tuple(paragraphs(record, schema, bad)) if PARAGRAPH_FIELD[schema] in record else ()
    support = supporting_titles(record, schema)
    return QARecord(schema, record_id(record), question, tuple(answers), paras,
                    None if support is None else tuple(str(t) for t in support))

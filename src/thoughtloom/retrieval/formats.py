"""Corpus readers for the multi-hop QA and fact-checking formats the tasks read.

Each QA corpus reader pools the paragraphs of every question into the corpus;
:func:`read_questions` reads the same files as (question, supporting titles)
pairs for retrieval evaluation. The record schemas themselves are read by
:mod:`.qa_records`, which the tasks use too.

==========  ===============================================================
hotpotqa    ``context: [[title, [sentence, ...]], ...]`` (also 2WikiMultihopQA)
2wiki       same schema as hotpotqa
ircot       ``contexts: [{title, paragraph_text, is_supporting}]`` (IRCoT / DecomP)
musique     ``paragraphs: [{title, paragraph_text, is_supporting}]``
hipporag    a JSON list of ``{title, text}`` (the HippoRAG 2Wiki corpus file)
fever       FEVER-Symmetric: ``{id, claim, evidence}`` -> one passage per evidence sentence
==========  ===============================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..core.errors import ConfigError, DataError
from . import qa_records
from .sources import CorpusBuilder, detect_format, iter_records


def _pooled_reader(schema: str):
    def read(path: Path, builder: CorpusBuilder) -> None:
        for where, record in iter_records(path, builder):
            if not isinstance(record, dict):
                builder.corpus.read += 1
                builder.bad(where, "expected a JSON object")
                continue

            def bad(why: str, where: str = where) -> None:
                builder.corpus.read += 1
                builder.bad(where, why)

            for title, text in qa_records.paragraphs(record, schema, bad):
                builder.add(where, title, text)
    return read


def read_fever(path: Path, builder: CorpusBuilder) -> None:
    """FEVER-Symmetric: each record's evidence sentence is a passage (title = claim id)."""
    for where, record in iter_records(path, builder):
        if not isinstance(record, dict) or not isinstance(record.get("evidence"), str):
            builder.corpus.read += 1
            builder.bad(where, "expected an object with a string 'evidence' field")
            continue
        builder.add(where, "", record["evidence"], None, {"claim_id": str(record.get("id", ""))})


READERS = {**{schema: _pooled_reader(schema) for schema in qa_records.SCHEMAS}, "fever": read_fever}


# -- questions with gold supporting titles, for retrieval evaluation ----------

@dataclass(frozen=True)
class GoldQuestion:
    id: str
    question: str
    titles: tuple[str, ...]  # supporting paragraph titles (whitespace-normalized)


def _titles(values: Any) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for v in values:
        seen[" ".join(str(v).split())] = None
    return tuple(seen)


def _gold(where: str, record: dict, kind: str) -> GoldQuestion:
    if kind not in qa_records.SCHEMAS:
        raise ConfigError(f"no supporting titles in format {kind!r}",
                          hint="index eval reads hotpotqa, 2wiki, ircot, musique or HippoRAG question files")
    titles = qa_records.supporting_titles(record, kind)
    if titles is None:
        raise DataError(f"{where}: missing field {qa_records.SUPPORT_FIELD[kind]!r} (read as {kind})")
    qid = qa_records.record_id(record)
    return GoldQuestion(where if qid is None else qid, qa_records.question_of(record, kind, where),
                        _titles(titles))


def read_questions(paths: str | Path | Iterable[str | Path], fmt: str = "auto") -> list[GoldQuestion]:
    """Questions and supporting titles from one or more QA files, pooled.

    Questions without gold titles are left out; a question id seen in an
    earlier file counts once (the HotpotQA and IRCoT dev files overlap).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[GoldQuestion] = []
    seen: set[str] = set()
    for raw in paths:
        for gold in _read_question_file(Path(raw).expanduser(), fmt):
            if gold.id not in seen:
                seen.add(gold.id)
                out.append(gold)
    return out


def _read_question_file(path: Path, fmt: str) -> Iterator[GoldQuestion]:
    if not path.is_file():
        raise ConfigError(f"question file not found: {path}", hint="check --data")
    kind = detect_format(path) if fmt == "auto" else fmt
    builder = CorpusBuilder(skip_bad=False)
    for where, record in iter_records(path, builder):
        if not isinstance(record, dict):
            raise DataError(f"{where}: expected a JSON object")
        # HippoRAG question files: supporting_facts is a plain list of titles.
        k = kind
        if kind in ("json", "jsonl", "hipporag") and "supporting_facts" in record:
            k = "hotpotqa"
        gold = _gold(where, record, k)
        if gold.titles:
            yield gold

"""Converters for the multi-hop QA and fact-checking formats in ``../shared/data``.

Each corpus reader pools the paragraphs of every question into the corpus;
:func:`read_questions` reads the same files as (question, supporting titles)
pairs for retrieval evaluation.

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
from .corpus import CorpusBuilder, detect_format, iter_records


def _paragraphs_hotpot(where: str, record: dict, builder: CorpusBuilder) -> Iterator[tuple[str, str]]:
    context = record.get("context")
    if not isinstance(context, list):
        builder.corpus.read += 1
        builder.bad(where, "missing or non-list field 'context' (expected [[title, [sentences]], ...])")
        return
    for i, item in enumerate(context):
        if (not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[1], list)
                or not all(isinstance(s, str) for s in item[1])):
            builder.corpus.read += 1
            builder.bad(where, f"context[{i}] is not [title, [sentences]]")
            continue
        yield item[0], " ".join(s.strip() for s in item[1])


def _paragraphs_list(key: str):
    def paragraphs(where: str, record: dict, builder: CorpusBuilder) -> Iterator[tuple[str, str]]:
        items = record.get(key)
        if not isinstance(items, list):
            builder.corpus.read += 1
            builder.bad(where, f"missing or non-list field {key!r}")
            return
        for i, item in enumerate(items):
            if not isinstance(item, dict) or "paragraph_text" not in item:
                builder.corpus.read += 1
                builder.bad(where, f"{key}[{i}] has no 'paragraph_text'")
                continue
            yield item.get("title", ""), item["paragraph_text"]
    return paragraphs


def _pooled_reader(paragraphs):
    def read(path: Path, builder: CorpusBuilder) -> None:
        for where, record in iter_records(path, builder):
            if not isinstance(record, dict):
                builder.corpus.read += 1
                builder.bad(where, "expected a JSON object")
                continue
            for title, text in paragraphs(where, record, builder):
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


READERS = {
    "hotpotqa": _pooled_reader(_paragraphs_hotpot),
    "2wiki": _pooled_reader(_paragraphs_hotpot),
    "ircot": _pooled_reader(_paragraphs_list("contexts")),
    "musique": _pooled_reader(_paragraphs_list("paragraphs")),
    "fever": read_fever,
}


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
    def need(key: str) -> Any:
        if key not in record:
            raise DataError(f"{where}: missing field {key!r} (read as {kind})")
        return record[key]

    if kind in ("hotpotqa", "2wiki"):
        facts = need("supporting_facts")
        titles = _titles(f[0] if isinstance(f, (list, tuple)) else f for f in facts)
        qid = record.get("_id", record.get("id", where))
        return GoldQuestion(str(qid), need("question"), titles)
    if kind in ("ircot", "musique"):
        key = "contexts" if kind == "ircot" else "paragraphs"
        titles = _titles(p.get("title", "") for p in need(key) if p.get("is_supporting"))
        question = record.get("question_text", record.get("question"))
        if not isinstance(question, str):
            raise DataError(f"{where}: missing field 'question_text' or 'question'")
        return GoldQuestion(str(record.get("question_id", record.get("id", where))), question, titles)
    raise ConfigError(f"no supporting titles in format {kind!r}",
                      hint="index eval reads hotpotqa, 2wiki, ircot, musique or HippoRAG question files")


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

"""Corpora: read passages from files into one pooled, deduplicated, fingerprinted corpus.

A corpus is an ordered list of :class:`~thoughtloom.core.types.Passage`.
:func:`read_corpus` is the entry point: it picks a reader per file (by
``--format`` or by sniffing, :func:`.sources.detect_format`) and pools
every file's passages in one :class:`.sources.CorpusBuilder`. This module
holds the generic formats (JSONL / JSON / CSV records with a text field, a
folder of text files); the benchmark formats are in :mod:`.formats`.
Passages read from benchmark files are pooled across every question, which
is how the Decomposed Prompting paper builds its open-domain corpora.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..core.errors import ConfigError, DataError
from ..core.files import csv_rows
from . import formats
from .sources import Corpus, CorpusBuilder, detect_format, iter_records

#: formats with a reader; "auto" picks one from the file name and contents.
FORMATS = ("auto", "jsonl", "json", "csv", "dir", "hotpotqa", "2wiki", "ircot", "musique",
           "hipporag", "fever")

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst")


def _must_exist(path: Path) -> None:
    if not path.exists():
        raise ConfigError(f"corpus not found: {path}", hint="check --corpus")


# -- generic formats ----------------------------------------------------------

TEXT_FIELDS = ("text", "paragraph_text", "contents", "content", "body", "passage")
TITLE_FIELDS = ("title", "wikipedia_title", "name")


def add_generic(where: str, record: Any, builder: CorpusBuilder) -> None:
    """A flat record: text under one of TEXT_FIELDS, optional title and id."""
    if not isinstance(record, dict):
        builder.corpus.read += 1
        builder.bad(where, "expected a JSON object with a 'text' field")
        return
    text_key = next((k for k in TEXT_FIELDS if k in record), None)
    if text_key is None:
        builder.corpus.read += 1
        builder.bad(where, f"no text field (expected one of {', '.join(TEXT_FIELDS)})")
        return
    title = next((record[k] for k in TITLE_FIELDS if k in record), "")
    pid = record.get("id", record.get("_id"))
    meta = {k: v for k, v in record.items()
            if k not in (text_key, "id", "_id", *TITLE_FIELDS) and isinstance(v, (str, int, float, bool))}
    builder.add(where, title, record[text_key], pid, meta)


def read_generic_records(path: Path, builder: CorpusBuilder) -> None:
    for where, record in iter_records(path, builder):
        add_generic(where, record, builder)


def read_csv(path: Path, builder: CorpusBuilder) -> None:
    rows = csv_rows(path)
    first = next(rows, None)
    if first is not None and not any(k.lower() in TEXT_FIELDS for k in first[1]):
        raise DataError(f"{path}:1: CSV header has no text column (expected one of {', '.join(TEXT_FIELDS)})")
    for line, row in itertools.chain([first] if first else [], rows):
        add_generic(f"{path}:{line}", {k.lower(): v for k, v in row.items() if k}, builder)


def read_dir(path: Path, builder: CorpusBuilder, max_words: int = 200) -> None:
    """Every .txt/.md/.rst file under ``path``, split into passages of about ``max_words``.

    Paragraphs (blank-line separated) are packed into chunks; a passage's id
    is ``relative/path#chunk`` and its title the first Markdown heading or
    the file name.
    """
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    if not files:
        raise ConfigError(f"no {'/'.join(TEXT_SUFFIXES)} files under {path}", hint="check --corpus")
    for file in files:
        rel = file.relative_to(path).as_posix()
        try:
            content = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            builder.corpus.read += 1
            builder.bad(f"{file}:1", f"not UTF-8 text ({exc.reason})")
            continue
        title = _title_of(content) or file.stem.replace("_", " ")
        for n, (line, chunk) in enumerate(chunk_paragraphs(content, max_words)):
            builder.add(f"{file}:{line}", title, chunk, f"{rel}#{n}", {"path": rel, "line": line})


def _title_of(content: str) -> str:
    for line in content.splitlines():
        if line.strip():
            return line.lstrip("#").strip() if line.startswith("#") else ""
    return ""


def chunk_paragraphs(content: str, max_words: int) -> Iterator[tuple[int, str]]:
    """(first line number, text) of chunks packing whole paragraphs up to ``max_words`` words.

    A paragraph longer than ``max_words`` is cut into pieces of that size. Linear in the
    text: each word is copied once (a 10 MB paragraph cut by re-slicing the rest after
    every piece took minutes; ``benchmarks/chunking.py``).
    """
    chunk: list[str] = []  # the words of the chunk being packed
    chunk_start = 0
    current: list[str] = []  # the words of the paragraph being read
    start = 0
    for lineno, line in enumerate(content.splitlines() + [""], 1):
        line = line.lstrip("#").strip() if line.startswith("#") else line  # Markdown heading marks
        if line.strip():
            if not current:
                start = lineno
            current.extend(line.split())
            continue
        if not current:
            continue
        if chunk and len(chunk) + len(current) > max_words:
            yield chunk_start, " ".join(chunk)
            chunk = []
        if not chunk:
            chunk_start = start
        words = chunk + current if chunk else current
        cut = 0
        while len(words) - cut > max_words:
            yield chunk_start, " ".join(words[cut:cut + max_words])
            cut += max_words
        chunk = words[cut:]
        current = []
    if chunk:
        yield chunk_start, " ".join(chunk)


Reader = Callable[[Path, CorpusBuilder], None]


# -- entry point --------------------------------------------------------------

def readers() -> dict[str, Reader]:
    return {
        "jsonl": read_generic_records, "json": read_generic_records, "csv": read_csv, "dir": read_dir,
        "hipporag": read_generic_records, **formats.READERS,
    }


def read_corpus(paths: str | Path | Iterable[str | Path], fmt: str = "auto", *,
                skip_bad: bool = False) -> Corpus:
    """Read and pool one or more corpus files or folders into one deduplicated corpus."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if fmt not in FORMATS:
        raise ConfigError(f"unknown corpus format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")
    builder = CorpusBuilder(skip_bad=skip_bad)
    table = readers()
    for raw in paths:
        path = Path(raw).expanduser()
        _must_exist(path)
        kind = detect_format(path) if fmt == "auto" else fmt
        if kind == "dir" and not path.is_dir():
            raise ConfigError(f"--format dir needs a folder, got a file: {path}")
        if kind != "dir" and path.is_dir():
            raise ConfigError(f"{path} is a folder", hint="use --format dir (or auto) for a folder of .txt/.md files")
        table[kind](path, builder)
        builder.corpus.sources.append(str(path))
    if not builder.corpus.passages:
        raise DataError(f"no passages read from {', '.join(builder.corpus.sources)}",
                        hint="check --format; every record was empty, duplicate or skipped")
    return builder.corpus

"""Reading user files as UTF-8 text, with errors that name ``file:line``.

A data file or corpus with a byte that is not UTF-8 used to surface as a
bare ``UnicodeDecodeError`` traceback. These helpers raise
:class:`DataError` instead, naming the file, the line and the byte;
:func:`require` does the same for a record's missing or mistyped field.

:func:`jsonl_lines` is the one JSON-lines reader (data files, corpora, a
run's results and trace, the inspector), each caller naming its policy for a
line that is not a JSON object (:data:`JSONL_POLICIES`); :func:`csv_rows` is the one CSV
reader (a UTF-8 BOM dropped, a short row or an empty required cell one line at ``file:line``).

Both read line by line and never hold a line longer than their limit
(:data:`MAX_LINE_BYTES` for a data file): a longer one is one error naming
``file:line`` and the limit (or, under ``skip``, that line's error), read past
in small pieces.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import json
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator, Mapping, Sequence

from .errors import ConfigError, DataError


@contextlib.contextmanager
def no_space_names(what: str, note: str = "") -> Iterator[None]:
    """Inside, a full disk or quota (ENOSPC, EDQUOT) is one :class:`ConfigError` naming ``what``
    (``"the index /data/idx"``), not a bare ``[Errno 28] No space left on device``."""
    try:
        yield
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            raise ConfigError(f"no space left on device writing {what}",
                              hint="free space on that disk or choose another --out" + (f"; {note}" if note else "")
                              ) from exc
        raise


def _bad_utf8(where: str, exc: UnicodeDecodeError, raw: bytes, column: int | None = None) -> DataError:
    byte = raw[exc.start:exc.start + 1].hex()
    col = f", column {column}" if column is not None else ""
    return DataError(f"{where}: not valid UTF-8 (byte 0x{byte}{col})",
                     hint="re-encode the file as UTF-8")


def decode_line(raw: bytes, where: str) -> str:
    """One line's bytes as text, or :class:`DataError` naming ``where`` (``file:line``)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad_utf8(where, exc, raw, exc.start + 1) from None


def read_utf8(path: str | Path) -> str:
    """The whole file as text; invalid UTF-8 is a :class:`DataError` at ``file:line``."""
    path = Path(path)
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise _bad_utf8(f"{path}:{line}", exc, raw) from None


#: Longest line of a data file (one JSON-lines record, one CSV row) a reader takes: 4 MiB. The
#: benchmarks' longest is about 22 KB (a MuSiQue record with its 20 paragraphs).
MAX_LINE_BYTES = 4 << 20


def bounded_lines(fh: IO[bytes], limit: int | None) -> Iterator[tuple[int, bytes | None]]:
    """(line number, raw bytes) of each line of ``fh``; None for a line longer than ``limit``
    bytes (its newline not counted), which is read past in pieces and never held whole."""
    number = 0
    while True:
        raw = fh.readline() if limit is None else fh.readline(limit + 1)
        if not raw:
            return
        number += 1
        if limit is not None and len(raw) > limit and not (len(raw) == limit + 1 and raw.endswith(b"\n")):
            while raw and not raw.endswith(b"\n"):
                raw = fh.readline(1 << 16)
            yield number, None
            continue
        yield number, raw


#: Longest text in one field of a data record (a JSON string, a CSV cell): a million characters.
MAX_FIELD_CHARS = 1_000_000


def long_field(value: Any, limit: int = MAX_FIELD_CHARS, depth: int = 0) -> tuple[str, int] | None:
    """(where, length) of the first string in ``value`` (a decoded JSON value) longer than ``limit``
    characters: a key, a ``[index]`` or a path of them; None when every string is within it."""
    if isinstance(value, str):
        return ("", len(value)) if len(value) > limit else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if depth < 32:  # deeper nesting is bounded by the line's own limit
            found = long_field(item, limit, depth + 1)
            if found is not None:
                step = f"[{key}]" if isinstance(key, int) else (key if depth == 0 else f".{key}")
                return step + found[0], found[1]
    return None


def field_too_long(where: str, found: tuple[str, int], limit: int = MAX_FIELD_CHARS) -> DataError:
    return DataError(f"{where}: field {found[0]!r} is {found[1]:,} characters, over the limit of {limit:,}",
                     hint="shorten the field (or split the record)")


def too_long(limit: int) -> str:
    return f"line longer than {limit:,} bytes (the limit of one record)"


def utf8_lines(path: str | Path, limit: int | None = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of each line; decode each with :func:`decode_line`. A line
    longer than ``limit`` bytes is a :class:`DataError` naming ``file:line``."""
    with Path(path).open("rb") as fh:
        for number, raw in bounded_lines(fh, limit):
            if raw is None:
                raise DataError(f"{path}:{number}: {too_long(limit or 0)}",
                                hint="split the record, or shorten its fields")
            yield number, raw


#: What :func:`jsonl_lines` does with a line that is not a JSON object: ``strict`` raises a
#: :class:`DataError` at ``file:line`` (a data file the user gave); ``skip`` yields it with its
#: ``error``, for the caller to count or report (a corpus, a run being inspected); ``torn`` is
#: ``skip`` for a file this package appends to, where a last line without its newline is a write
#: cut short (a killed process): yielded as ``torn``, never parsed.
JSONL_POLICIES = ("strict", "skip", "torn")


@dataclass(frozen=True)
class JsonLine:
    """One line of a JSON-lines file: a record (``value``), a blank line, or why it is neither."""

    number: int
    raw: bytes
    value: dict[str, Any] | None = None
    error: str | None = None  # why the line is not a record; None for a record, a blank or a torn line
    torn: bool = False  # policy ``torn``: the last line, without its newline

    @property
    def blank(self) -> bool:
        return not self.torn and not self.raw.strip()


def jsonl_lines(path: str | Path, policy: str = "strict", *,
                max_line_bytes: int | None = MAX_LINE_BYTES) -> Iterator[JsonLine]:
    """Every line of ``path`` as a :class:`JsonLine`, blank lines included, under ``policy``.

    A line longer than ``max_line_bytes`` (None: no limit, for the files this package writes)
    is never held: under ``strict`` a :class:`DataError` naming ``file:line`` and the limit,
    else a line with that ``error`` and no ``raw`` bytes.
    """
    if policy not in JSONL_POLICIES:
        raise ValueError(f"unknown JSONL policy {policy!r}")
    path = Path(path)
    with path.open("rb") as fh:
        for number, raw in bounded_lines(fh, max_line_bytes):
            if raw is None:
                if policy == "strict":
                    raise DataError(f"{path}:{number}: {too_long(max_line_bytes or 0)}",
                                    hint="split the record, or shorten its fields")
                yield JsonLine(number, b"", error=too_long(max_line_bytes or 0))
                continue
            if policy == "torn" and not raw.endswith(b"\n"):
                yield JsonLine(number, raw, torn=True)
                return
            if not raw.strip():
                yield JsonLine(number, raw)
                continue
            value, error = _json_object(raw)
            if error is not None and policy == "strict":
                raise DataError(f"{path}:{number}: {error}",
                                hint="re-encode the file as UTF-8" if "UTF-8" in error else "")
            yield JsonLine(number, raw, value, error)


def _json_object(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte 0x{raw[exc.start:exc.start + 1].hex()}, column {exc.start + 1})"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg})"
    except RecursionError:
        return None, "invalid JSON (nested too deep)"
    if not isinstance(value, dict):
        return None, "expected a JSON object"
    return value, None


def csv_rows(path: str | Path, required: Sequence[str] = (), *, delimiter: str = ",",
             max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row by column name) of each row of a CSV file with a header line.

    A UTF-8 BOM before the header is dropped; a header without each of ``required``, a row
    with fewer cells than the header, a required cell that is empty, a cell left over past the
    header, bytes that are not UTF-8 and a line over ``max_line_bytes`` are each a
    :class:`DataError` naming ``file:line``. Blank lines are skipped. Streamed: the file is
    never read whole.
    """
    path = Path(path)

    def lines() -> Iterator[str]:
        with path.open("rb") as fh:
            for number, raw in bounded_lines(fh, max_line_bytes):
                if raw is None:
                    raise DataError(f"{path}:{number}: {too_long(max_line_bytes)}",
                                    hint="split the record, or shorten its fields")
                text = decode_line(raw, f"{path}:{number}")
                yield text.removeprefix("\ufeff") if number == 1 else text

    reader = csv.reader(lines(), delimiter=delimiter)
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            named = f" ({', '.join(required)})" if required else ""
            raise DataError(f"{path}:1: expected a CSV header line naming the columns{named}",
                            hint=f"e.g. {delimiter.join(required) or 'question,answer'}")
        header = [h.strip() for h in header]
        missing = [c for c in required if c not in header]
        if missing:
            raise DataError(f"{path}:1: expected a CSV header with columns {', '.join(required)} (missing {', '.join(missing)}; "
                            f"the header has {', '.join(map(repr, header[:12]))})")
        last = reader.line_num
        for cells in reader:
            start, last = last + 1, reader.line_num
            if not cells or not any(c.strip() for c in cells):
                continue
            where = f"{path}:{start}"
            if len(cells) < len(header):
                short = ", ".join(header[len(cells):])
                raise DataError(f"{where}: {len(cells)} of {len(header)} columns (no {short})",
                                hint=f"give every row the header's {len(header)} columns, quoting any comma")
            if any(c.strip() for c in cells[len(header):]):
                raise DataError(f"{where}: {len(cells)} cells but the header names {len(header)} columns",
                                hint="quote a value that holds the delimiter")
            row = dict(zip(header, cells))
            found = long_field(row)
            if found is not None:
                raise field_too_long(where, found)
            empty = [c for c in required if not row[c].strip()]
            if empty:
                raise DataError(f"{where}: empty {', '.join(empty)}")
            yield start, row
    except csv.Error as exc:
        raise DataError(f"{path}:{reader.line_num}: unreadable CSV ({exc})") from None


def require(record: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    """``record[key]`` of the expected type, or a DataError naming ``where`` (file:line)."""
    if key not in record:
        raise DataError(f"{where}: missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        raise DataError(f"{where}: field {key!r} should be {getattr(kind, '__name__', kind)}")
    return value

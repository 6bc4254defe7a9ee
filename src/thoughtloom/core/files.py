"""Reading user files as UTF-8 text, with errors that name ``file:line``.

A data file or corpus with a byte that is not UTF-8 used to surface as a
bare ``UnicodeDecodeError`` traceback. These helpers raise
:class:`DataError` instead, naming the file, the line and the byte;
:func:`require` does the same for a record's missing or mistyped field.

:func:`jsonl_lines` is the one JSON-lines reader (data files, corpora, a
run's results and trace, the inspector), each caller naming its policy for a
line that is not a JSON object (:data:`JSONL_POLICIES`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from .errors import DataError


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


def utf8_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of each line; decode each with :func:`decode_line`."""
    with Path(path).open("rb") as fh:
        yield from enumerate(fh, 1)


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


def jsonl_lines(path: str | Path, policy: str = "strict") -> Iterator[JsonLine]:
    """Every line of ``path`` as a :class:`JsonLine`, blank lines included, under ``policy``."""
    if policy not in JSONL_POLICIES:
        raise ValueError(f"unknown JSONL policy {policy!r}")
    path = Path(path)
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
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


def require(record: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    """``record[key]`` of the expected type, or a DataError naming ``where`` (file:line)."""
    if key not in record:
        raise DataError(f"{where}: missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        raise DataError(f"{where}: field {key!r} should be {getattr(kind, '__name__', kind)}")
    return value

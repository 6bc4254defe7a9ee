"""Reading user files as UTF-8 text, with errors that name ``file:line``.

A data file or corpus with a byte that is not UTF-8 used to surface as a
bare ``UnicodeDecodeError`` traceback. These helpers raise
:class:`DataError` instead, naming the file, the line and the byte;
:func:`require` does the same for a record's missing or mistyped field.
"""

from __future__ import annotations

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


def require(record: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...] = str) -> Any:
    """``record[key]`` of the expected type, or a DataError naming ``where`` (file:line)."""
    if key not in record:
        raise DataError(f"{where}: missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind):
        raise DataError(f"{where}: field {key!r} should be {getattr(kind, '__name__', kind)}")
    return value

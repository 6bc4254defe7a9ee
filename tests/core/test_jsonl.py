"""The one JSON-lines reader (core/files.jsonl_lines) and its three policies."""

import pytest

from thoughtloom.core.errors import DataError
from thoughtloom.core.files import jsonl_lines

LINES = b'{"a": 1}\n\n[1, 2]\n{"b":\n\xff\n{"c": 3}'  # record, blank, not an object, bad JSON, bad UTF-8, no newline


def _read(tmp_path, policy):
    path = tmp_path / "f.jsonl"
    path.write_bytes(LINES)
    return [(line.number, line.value, line.error, line.blank, line.torn) for line in jsonl_lines(path, policy)]


def test_skip_yields_every_line_with_why_it_is_not_a_record(tmp_path):
    assert _read(tmp_path, "skip") == [
        (1, {"a": 1}, None, False, False), (2, None, None, True, False),
        (3, None, "expected a JSON object", False, False),
        (4, None, "invalid JSON (Expecting value)", False, False),
        (5, None, "not valid UTF-8 (byte 0xff, column 1)", False, False),
        (6, {"c": 3}, None, False, False)]  # a data file's last line needs no newline


def test_torn_drops_a_last_line_without_its_newline_unparsed(tmp_path):
    assert _read(tmp_path, "torn")[-1] == (6, None, None, False, True)


def test_strict_names_the_file_and_line_of_the_first_bad_line(tmp_path):
    with pytest.raises(DataError, match=r"f\.jsonl:3: expected a JSON object"):
        _read(tmp_path, "strict")


def test_an_unknown_policy_is_refused(tmp_path):
    with pytest.raises(ValueError, match="policy"):
        _read(tmp_path, "lenient")

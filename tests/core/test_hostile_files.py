"""Hostile data files (issue 40): oversized lines and fields, short CSV rows, BOMs, missing cells.

Each is one line naming ``file:line`` (and the limit), never a traceback, and a huge line is
never held whole in memory.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from thoughtloom.core.errors import DataError
from thoughtloom.core.files import MAX_FIELD_CHARS, csv_rows, jsonl_lines
from thoughtloom.tasks import get
from thoughtloom.tasks.base import MAX_GOLD_CHARS, MAX_QUESTION_CHARS
from thoughtloom.tasks.datasets import load_examples


def _gsm8k(path, question, answer="#### 4", n_before=1):
    rows = [json.dumps({"question": "What is 2 plus 2?", "answer": "#### 4"})] * n_before
    rows.append(json.dumps({"question": question, "answer": answer}))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_an_oversized_question_line_is_one_error_at_its_line_and_never_held(tmp_path):
    """Issue 40: a gsm8k question of one valid 1 GB line was accepted (6.1 GB RSS). Here a
    40 MB line (ten times the limit) is refused at file:line, reading no more than the limit."""
    path = _gsm8k(tmp_path / "big.jsonl", "x" * (40 << 20))
    tracemalloc.start()
    try:
        with pytest.raises(DataError, match=r"big\.jsonl:2: line longer than 4,194,304 bytes") as err:
            load_examples(get("gsm8k"), path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "\n" not in str(err.value)
    assert peak < 16 << 20, f"the reader held {peak:,} bytes"


def test_a_long_field_within_the_line_limit_is_refused_by_name(tmp_path):
    path = _gsm8k(tmp_path / "q.jsonl", "y" * (MAX_FIELD_CHARS + 1))
    with pytest.raises(DataError, match=r"q\.jsonl:2: field 'question' is 1,000,001 characters, "
                                        r"over the limit of 1,000,000"):
        load_examples(get("gsm8k"), path)


def test_question_and_gold_limits_name_the_file_the_example_and_the_limit(tmp_path):
    path = _gsm8k(tmp_path / "q.jsonl", "What is " + "9" * MAX_QUESTION_CHARS + "?")
    with pytest.raises(DataError, match=r"q\.jsonl: example .*record 2.*its question is 100,009 characters, "
                                        r"over the limit of 100,000"):
        load_examples(get("gsm8k"), path)
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"question": "q?", "answer": ["a" * 1000] * (MAX_GOLD_CHARS // 1000 + 1)}) + "\n")
    with pytest.raises(DataError, match=r"qa\.jsonl: example .*its gold answer is .* over the limit of 100,000"):
        load_examples(get("qa"), qa)


def test_a_corpus_line_over_the_limit_is_skipped_under_skip(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "' + b"z" * (5 << 20) + b'"}\n{"text": "ok"}\n')
    lines = list(jsonl_lines(path, "skip"))
    assert [(line.number, line.error, line.raw) for line in lines][0] == (
        1, "line longer than 4,194,304 bytes (the limit of one record)", b"")
    assert lines[1].value == {"text": "ok"}


def _csv(tmp_path, text, name="hgot_test_short.csv"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_a_short_csv_row_is_one_line_at_its_line(tmp_path):
    """Issue 40: `Question,Answer` with a row `Who wrote Faust?` ended in parse_gold's TypeError."""
    path = _csv(tmp_path, "Question,Answer\nWho wrote Faust?,Goethe\nWho wrote Faust?\n")
    with pytest.raises(DataError, match=r"hgot_test_short\.csv:3: 1 of 2 columns \(no Answer\)"):
        get("hotpotqa").load(path)


def test_a_utf8_bom_before_the_header_is_read(tmp_path):
    """Issue 40: a CSV saved with a BOM got `expected columns Question, Answer`."""
    path = _csv(tmp_path, b"\xef\xbb\xbfQuestion,Answer\r\nWho wrote Faust?,Goethe\r\n")
    [example] = get("hotpotqa").load(path)
    assert example.problem.question == "Who wrote Faust?" and example.gold == "Goethe"


def test_missing_values_and_extra_cells_name_their_line(tmp_path):
    with pytest.raises(DataError, match=r"\.csv:3: empty Answer"):
        list(csv_rows(_csv(tmp_path, 'Question,Answer\n"a, b",c\n"multi\nline?",\n'), ("Question", "Answer")))
    with pytest.raises(DataError, match=r"\.csv:2: 3 cells but the header names 2 columns"):
        list(csv_rows(_csv(tmp_path, "Question,Answer\nWho?,x,y\n"), ("Question", "Answer")))
    with pytest.raises(DataError, match=r"\.csv:1: expected a CSV header with columns Question, Answer \(missing Answer"):
        list(csv_rows(_csv(tmp_path, "Question,Gold\nWho?,x\n"), ("Question", "Answer")))
    with pytest.raises(DataError, match=r"\.csv:2: not valid UTF-8"):
        list(csv_rows(_csv(tmp_path, b"Question,Answer\n\xff,x\n")))
    rows = list(csv_rows(_csv(tmp_path, 'Question,Answer\n\n"multi\nline",x\nnext,y\n'), ("Question",)))
    assert rows == [(3, {"Question": "multi\nline", "Answer": "x"}), (5, {"Question": "next", "Answer": "y"})]


def test_game24_and_qa_csvs_share_the_reader(tmp_path):
    with pytest.raises(DataError, match=r"24\.csv:2: empty Puzzles"):
        get("game24").load(_csv(tmp_path, "Rank,Puzzles\n1,\n", "24.csv"))
    with pytest.raises(DataError, match=r"own\.csv:2: 1 of 2 columns"):
        get("qa").load(_csv(tmp_path, "\ufeffquestion,answer\nWho?\n", "own.csv"))
    [ex] = get("qa").load(_csv(tmp_path, "\ufeffquestion,answer\nWho?,me\n", "own.csv"))
    assert ex.problem.question == "Who?"

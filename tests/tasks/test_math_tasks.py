import json

import pytest

from conftest import data_file
from thoughtloom import tasks
from thoughtloom.core import ConfigError, DataError
from thoughtloom.tasks.metrics import exact_match, numbers_equal, token_f1


@pytest.mark.parametrize("text,expected", [
    ("so 3 + 4 = 7. The answer is: 7", "7"),
    ("The answer is $1,234.50.", "1234.5"),
    ("I think 12 then 15. The answer is 15 apples. Check: 3 * 5 = 15", "15"),
    ("The answer is 18.00", "18"),
    ("The answer is -4", "-4"),
    ("The answer is 1/2", "0.5"),
    ("#### 42", None),  # no answer statement: no answer (no fallback to the last number)
    ("\\boxed{ 9 }", None),
    ("first 3 then -4", None),
    ("no digits here", None),
])
def test_extract_answer_is_the_number_after_answer_is(text, expected):
    assert tasks.get("gsm8k").extract_answer(text) == expected
    assert tasks.get("multiarith").extract_answer(text) == expected


def test_numbers_equal():
    assert numbers_equal("18.0", "18") == 1.0
    assert numbers_equal("18.5", "18") == 0.0
    assert numbers_equal(None, "1") == 0.0 and numbers_equal("x", "1") == 0.0


def test_squad_metrics():
    assert exact_match("The  Eiffel Tower!", "eiffel tower") == 1.0
    assert exact_match("Paris", ["London", "paris"]) == 1.0
    assert token_f1("the big red barn", "red barn") == pytest.approx(0.8)
    assert token_f1("", "x") == 0.0 and token_f1(None, "") == 1.0


def test_load_gsm8k_and_multiarith():
    g = tasks.get("gsm8k").load(data_file("gsm8k", "test.jsonl"))
    assert len(g) == 1000 and g[0].gold == "18" and g[0].problem.id == "gsm8k-0"
    m = tasks.get("multiarith").load(data_file("multiarith", "MultiArith.json"))
    assert len(m) == 600 and m[0].gold == "39" and m[0].problem.id == "multiarith-0"
    assert len({e.problem.id for e in m}) == 600


def test_bad_records_name_file_and_line(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps({"question": "q", "answer": "#### 3"}) + "\n\n{not json\n")
    with pytest.raises(DataError, match=r"bad.jsonl:3: invalid JSON"):
        tasks.get("gsm8k").load(f)
    f.write_text(json.dumps({"question": "q", "answer": "no marker"}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl:1: answer has no '#### N'"):
        tasks.get("gsm8k").load(f)
    f.write_text(json.dumps({"answer": "#### 1"}) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl:1: missing field 'question'"):
        tasks.get("gsm8k").load(f)
    with pytest.raises(ConfigError, match="not found"):
        tasks.get("gsm8k").load(tmp_path / "absent.jsonl")


def test_freeform_task_reads_answer_lines():
    t = tasks.get("freeform")
    assert t.extract_answer("reasoning...\nThe answer is: Paris.") == "Paris"
    assert t.extract_answer("\n  Lyon \nmore") == "Lyon"
    assert t.score("the Paris", "Paris") == {"em": 1.0, "f1": 1.0}
    with pytest.raises(ConfigError, match="unknown task"):
        tasks.get("nope")

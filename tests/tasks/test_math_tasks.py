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


# -- exact values the mutation run found unchecked (tasks/metrics.py) -------------------------------

def test_token_f1_is_the_harmonic_mean_when_neither_precision_nor_recall_is_one():
    """SQuAD's evaluate-v1.1.py: ``f1 = (2 * precision * recall) / (precision + recall)``. "big red barn
    door" against "red barn house" shares 2 tokens: precision 2/4, recall 2/3, F1 = (2/3) / (7/6) = 4/7."""
    assert token_f1("big red barn door", "red barn house") == pytest.approx(4 / 7)
    assert token_f1("red barn house", "big red barn door") == pytest.approx(4 / 7)  # symmetric


@pytest.mark.parametrize("prediction,gold,tol,equal", [
    ("1.5", "1", 0.5, 1.0),              # |p - g| = 0.5 = tol * max(1, 1): the bound itself is equal
    ("1.5", "1", 0.25, 0.0),
    ("1025", "1024", 2 ** -10, 1.0),     # relative for |g| > 1: 2^-10 * 1024 = 1
    ("1026", "1024", 2 ** -10, 0.0),
    ("0.5", "0.25", 0.25, 1.0),          # absolute below 1: 0.25 * max(1, 0.25) = 0.25
])
def test_numbers_equal_tolerance_is_relative_above_one_and_absolute_below(prediction, gold, tol, equal):
    """numbers_equal accepts |p - g| <= tol * max(1, |g|): a relative tolerance for large golds, an
    absolute one (tol itself) for golds under 1. The tolerances here are exact binary fractions, so the
    boundary cases are exact too."""
    assert numbers_equal(prediction, gold, tol=tol) == equal


def test_format_number_writes_integers_whole_and_huge_fractions_exactly():
    """An integer is written in full (not as 1.23457e+06); a fraction is %.6g, unless it is beyond
    float range, where it stays an exact numerator/denominator instead of raising OverflowError."""
    from fractions import Fraction

    from thoughtloom.tasks.metrics import format_number

    assert format_number(Fraction(1234567)) == "1234567"
    assert format_number(Fraction(1, 3)) == "0.333333"
    assert format_number(Fraction(10 ** 400, 3)) == "1" + "0" * 400 + "/3"


def test_every_scorer_given_no_answer_scores_zero():
    """A prediction of None ("no answer": an error, a cut-off reply, nothing the reader found) scores 0
    against a real gold answer under every metric, including HotpotQA's yes/no rule and numbers."""
    from thoughtloom.tasks.metrics import hotpot_f1, squad_f1

    for gold in ("Paris", "yes", "no", "18"):
        assert (exact_match(None, gold), token_f1(None, gold), squad_f1(None, gold), hotpot_f1(None, gold),
                numbers_equal(None, gold)) == (0.0, 0.0, 0.0, 0.0, 0.0)

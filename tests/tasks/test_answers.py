"""Answer extraction on the forms chat models use, and on a corpus of real replies."""

import json
import time
from pathlib import Path

import pytest

from thoughtloom import tasks
from thoughtloom.tasks.answers import answer_statement, marked_answer, read_number

CORPUS = Path(__file__).parent / "data" / "replies.jsonl"


@pytest.mark.parametrize("text,expected", [
    ("The answer is: Paris", "Paris"),
    ("The answer is Paris.", "Paris"),
    ("**Answer:** Paris", "Paris"),
    ("**Answer**: Paris", "Paris"),
    ("The final answer is **Paris**.", "Paris"),
    ("Answer:\nParis", "Paris"),
    ("Reasoning first.\n[[ ## answer ## ]]\nParis\n\n[[ ## completed ## ]]", "Paris"),
    ("So it is $\\boxed{Paris}$.", "Paris"),
    ("Answer: London. Wait, the answer is: Paris", "Paris"),  # the last marker wins
    ("I answered the phone.", None),  # 'answered' is not a marker
    ("no marker at all", None),
])
def test_marked_answer(text, expected):
    assert marked_answer(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("The answer is: 70000. (Check: 80000 + 50000 = 130000)", "70000"),  # the first number after it
    ("So the answer is **$18**.", "18"),
    ("The final answer is 18 dollars.", "18"),
    ("THE ANSWER IS\n18", "18"),  # a bare statement: the next line
    ("The answer is 5. No wait, the answer is 7.", "7"),  # the last statement
    # no "answer is": no answer, whatever numbers the chain holds (no fallback)
    ("She makes 9 * 2 = 18 dollars.\n**Answer:** $18", None),
    ("Total: 16 - 3 - 4 = 9 eggs, so she earns **$18** a day.", None),
    ("The final answer is $\\boxed{18}$.", "18"),  # a box after "answer is" is still after it
    ("Therefore it takes \\boxed{5} hours.", None),
    ("The answer is: eighteen.\nWork: 16 - 7 = 9, 9 * 2 = 18", None),  # a statement without a number
    ("", None),
])
def test_math_reads_the_number_after_answer_is(text, expected):
    assert read_number(answer_statement(text)) == expected
    assert tasks.get("gsm8k").extract_answer(text) == expected


def test_read_number_takes_the_first_number():
    assert read_number("10 dollars") == "10"
    assert read_number("$1,234.50 in all, then 7") == "1234.5"
    assert read_number("-3 degrees") == "-3" and read_number("3/4 of it") == "0.75"
    assert read_number("no digits") is None and read_number(None) is None and read_number("") is None


@pytest.mark.parametrize("text", ["answer is" + " " * 100_000, "Answer" + "*" * 100_000 + ":",
                                  "[[ ## answer ## ]]" + " \t" * 50_000, "**" + "1" * 150 + " " * 100_000])
def test_markers_are_linear_on_long_blanks(text):
    t0 = time.perf_counter()
    marked_answer(text), answer_statement(text), read_number(text)
    assert time.perf_counter() - t0 < 5


def _corpus():
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("case", _corpus() if CORPUS.exists() else [],
                         ids=lambda c: f"{c['model']}-{c['id']}")
def test_real_replies(case):
    """Replies captured from the bench and embedded models; ``expected`` is the
    answer a reader takes from the reply (not the gold answer)."""
    assert tasks.get(case["task"]).extract_answer(case["text"]) == case["expected"]


def test_the_corpus_is_there():
    assert len(_corpus()) >= 20


@pytest.mark.parametrize("text,expected", [
    ("The answer to the question is: H2O", "H2O"),  # issue 39: cot kept the whole line, so em scored 0
    ("The answer to this question is mars.", "mars"),
    ("Sure! Here is the answer:\nH2O.", "H2O"),  # "X." after a preamble
    ("Okay.\nTokyo", "Tokyo"),
    ("Let me think about it.\nParis", "Paris"),
    ("Paris is the capital of France.\nIt lies on the Seine.", "Paris is the capital of France"),  # no lead-in
    ("Yes.\nIt is.", "Yes"),  # a yes/no answer is no lead-in
    ("Here is Paris.", "Here is Paris"),  # one line: nothing follows a lead-in
])
def test_short_answer_reads_chatty_replies(text, expected):
    from thoughtloom.tasks.answers import short_answer

    assert short_answer(text) == expected
    assert tasks.get("qa").extract_answer(text) == expected  # the reader every strategy's reply gets


@pytest.mark.parametrize("text", ["Sure" + "!" * 100_000, ":" * 100_000 + "\nx", ("ok\n" * 50_000) + "x"])
def test_the_lead_in_reading_is_linear(text):
    from thoughtloom.tasks.answers import short_answer

    t0 = time.perf_counter()
    short_answer(text)
    assert time.perf_counter() - t0 < 5

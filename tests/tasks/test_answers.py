"""Answer extraction on the forms chat models use, and on a corpus of real replies."""

import json
import time
from pathlib import Path

import pytest

from thoughtloom import tasks
from thoughtloom.tasks.answers import extract_number, marked_answer

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
    ("She makes 9 * 2 = 18 dollars.\n**Answer:** $18", "18"),
    ("Total: 16 - 3 - 4 = 9 eggs, so she earns **$18** a day at the market, 7 days a week.", "18"),
    ("The final answer is $\\boxed{18}$.", "18"),
    ("[[ ## reasoning ## ]]\n16 - 7 = 9; 9 * 2 = 18\n\n[[ ## answer ## ]]\n18\n\n[[ ## completed ## ]]", "18"),
    ("**Answer**: 3 bolts", "3"),
    ("The answer is: 70000. (Check: 80000 + 50000 = 130000)", "70000"),  # first number after the marker
    ("The answer is: eighteen.\nWork: 16 - 7 = 9, 9 * 2 = 18", "18"),  # a marker without a number: fall back
])
def test_extract_number_reads_chat_forms(text, expected):
    assert extract_number(text) == expected


@pytest.mark.parametrize("text", ["answer is" + " " * 100_000, "Answer" + "*" * 100_000 + ":",
                                  "[[ ## answer ## ]]" + " \t" * 50_000, "**" + "1" * 150 + " " * 100_000])
def test_markers_are_linear_on_long_blanks(text):
    t0 = time.perf_counter()
    marked_answer(text), extract_number(text)
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

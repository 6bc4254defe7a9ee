"""The qa task: the user's records read by declared fields, scored by the metric they chose."""

import math

import pytest

from thoughtloom import tasks
from thoughtloom.core.errors import ConfigError, DataError
from thoughtloom.tasks.checks import against_gold, check_answer
from thoughtloom.tasks.qa import QA, choice_letter
from thoughtloom.core.types import Problem


@pytest.mark.parametrize("metric,prediction,gold,want", [
    ("em", "The Paris.", ["Paris", "paris, france"], 1.0),
    ("em", "Lyon", "Paris", 0.0),
    ("contains", "it is paris, of course", "Paris", 1.0),
    ("contains", "parisian", "Paris", 0.0),  # whole words only
    ("numeric", "1,200.50", "1200.5", 1.0),
    ("numeric", "3/4", 0.75, 1.0),
    ("numeric", None, "4", 0.0),
    ("choice", "(B) Paris", "B", 1.0),
    ("choice", "b", "(B)", 1.0),
    ("choice", "A cat", "A", 0.0),  # prose, not an option letter
])
def test_builtin_metrics(metric, prediction, gold, want):
    assert QA(metric=metric).score(prediction, gold) == {metric: want}


def test_the_default_reports_em_and_f1():
    assert QA().score("Paris France", "Paris") == {"em": 0.0, "f1": pytest.approx(2 / 3)}


@pytest.mark.parametrize("text,letter", [("B", "B"), ("Answer: c.", "C"), ("(d) four", "D"), ("B) x", "B"),
                                         ("Paris", None), ("", None), ("x" * 100_000, None), ("\udcff", None)])
def test_choice_letter_reads_hostile_replies(text, letter):
    assert choice_letter(text) == letter


def test_numeric_and_choice_read_the_answer_from_a_reply():
    assert QA(metric="numeric").extract_answer("6 * 7 = 42.\nThe answer is: 42 apples") == "42"
    assert QA(metric="choice").extract_answer("Thinking...\nAnswer: (C)") == "C"


def test_a_user_metric_returns_a_bool_or_a_number_and_is_the_one_declared_metric():
    task = QA(metric=lambda p, g: p == g)
    assert task.score("x", "x") == {"<lambda>": 1.0} and task.metrics == ("<lambda>",)
    assert QA().metrics == ("em", "f1") and QA(metric="contains").metrics == ("contains",)
    for bad in (math.nan, "yes", {"hit": 1.0}):
        with pytest.raises(TypeError, match="finite number or a bool"):
            QA(metric=lambda p, g, bad=bad: bad).score("x", "y")


def test_unknown_metric_names_the_choices():
    with pytest.raises(ConfigError, match="unknown metric 'exact'.*em"):
        QA(metric="exact")


def test_records_by_declared_fields_with_ids(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_text('{"q": " Why? ", "a": 4}\n\n{"id": 7, "q": "How?", "a": ["x", "y"]}\n')
    examples = QA("q", "a").load(f)
    assert [(e.problem.id, e.problem.question, e.gold) for e in examples] == [("qa-1", "Why?", 4),
                                                                              ("7", "How?", ["x", "y"])]


@pytest.mark.parametrize("body,says", [
    ('{"question": "q"}\n', "d.jsonl:1: no field 'answer' (fields: 'question')"),
    ('{"question": "", "answer": "a"}\n', "d.jsonl:1: field 'question' should be a non-empty string"),
    ('{"question": "q", "answer": null}\n', "d.jsonl:1: field 'answer' should be a string"),
    ('{"question": "q", "answer": []}\n', "d.jsonl:1: field 'answer' should be a string"),
    ('{"id": 1, "question": "q", "answer": "a"}\n{"id": 1, "question": "r", "answer": "b"}\n', "names two"),
    ('[1, 2]\n', "d.jsonl:1: expected a JSON object"),
])
def test_bad_records_name_file_and_line(tmp_path, body, says):
    f = tmp_path / "d.jsonl"
    f.write_text(body)
    with pytest.raises(DataError, match=says.replace("(", r"\(").replace(")", r"\)")):
        QA().load(f)


def test_csv_json_and_tsv(tmp_path):
    (tmp_path / "d.csv").write_text("question,answer\nA?,1\nB?,2\n")
    (tmp_path / "d.tsv").write_text("question\tanswer\nA?\t1\n")
    (tmp_path / "d.json").write_text('[{"question": "A?", "answer": "1"}]')
    assert [len(QA().load(tmp_path / n)) for n in ("d.csv", "d.tsv", "d.json")] == [2, 1, 1]
    assert QA().load(tmp_path / "d.csv")[1].problem.id == "qa-3"  # the CSV line


def test_resolve_keeps_fields_and_metric_to_qa():
    assert tasks.resolve("qa", metric="f1").primary_metric == "f1"
    with pytest.raises(ConfigError, match="applies to the task qa"):
        tasks.resolve("gsm8k", metric="f1")


def test_game24_checks_an_answer_by_its_rule_and_crosswords_count_letters():
    game = tasks.get("game24")
    assert check_answer(game, Problem("p", "4 9 10 13"), "(13 - 9) * (10 - 4)").ok is True
    wrong = check_answer(game, Problem("p", "4 9 10 13"), "The expression is 24.")
    assert wrong.ok is False and "not a solution" in wrong.message
    board = check_answer(tasks.get("crosswords"), Problem("p", ""), "AB___" + "_" * 20)
    assert board.ok is None and board.message.startswith("2 of 25 letters filled")
    assert check_answer(tasks.get("gsm8k"), Problem("p", "q"), "4") is None


def test_against_gold_uses_the_task_scorer():
    assert against_gold(tasks.get("gsm8k"), "16", "16") == (True, {"accuracy": 1.0})
    assert against_gold(tasks.get("freeform"), "Paris", "Lyon")[0] is False

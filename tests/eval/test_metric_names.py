"""A metric the task does not emit is an error wherever it is named or read, never a column of zeros.

(The sculpt-crosswords suite asked for ``games``; the task emits ``game``; the
card's "games" column read 0 for every method, as issue 23 found.)
"""

import asyncio
from pathlib import Path

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core.errors import ConfigError
from thoughtloom.core.types import Problem
from thoughtloom.eval.reproduce import suites
from thoughtloom.eval.results import read_records, score
from thoughtloom.eval.runner import EvalResources, EvalSettings, checked_metrics, evaluate
from thoughtloom.eval.summary import summarize
from thoughtloom.tasks import Example, Task
from thoughtloom.tasks.datasets import load_examples
from thoughtloom.testing import ScriptedLM


@pytest.mark.parametrize("name", [n for n in tasks.available() if n not in ("freeform", "qa", "multiarith")])  # qa: test_qa.py
def test_each_task_declares_exactly_the_metrics_it_emits(name):
    task = tasks.get(name)
    gold = load_examples(task).examples[0].gold
    scored = set(task.metrics) - set(task.judged_metrics)  # a model judge gives the rest (eval.judge)
    assert set(task.score(None, gold)) == scored
    assert set(task.score("some answer", gold)) == scored
    assert task.primary_metric in task.metrics and set(task.judged_metrics) <= set(task.metrics)


def test_crosswords_metrics_are_letters_words_game():
    assert tasks.get("crosswords").metrics == ("letters", "words", "game")


def test_a_suite_naming_a_metric_its_task_does_not_emit_is_refused_at_load(tmp_path):
    text = (Path(suites.__file__).parent / "suites" / "sculpt-crosswords.toml").read_text()
    assert 'metrics = ["letters", "words", "game"]' in text
    path = tmp_path / "sculpt-crosswords.toml"
    path.write_text(text.replace('"words", "game"]', '"words", "games"]', 1))
    with pytest.raises(ConfigError) as info:
        suites.load(path)
    message = str(info.value)
    assert "\n" not in message
    assert "datasets[0].metrics" in message and "'games'" in message and "letters, words, game" in message


def test_the_packaged_crosswords_suite_reads_the_game_metric():
    suite = suites.load("sculpt-crosswords")
    assert suite.datasets[0].metrics == ("letters", "words", "game")


def test_reading_a_metric_a_scored_record_lacks_names_it_and_the_real_ones():
    record = {"id": "mini-1", "metrics": {"letters": 0.4, "words": 0.2, "game": 0.0}}
    assert score(record, "words") == 0.2
    with pytest.raises(ConfigError, match=r"no metric 'games'.*mini-1.*game, letters, words"):
        score(record, "games")
    assert score({"id": "e", "metrics": {}, "error": "boom"}, "games") == 0.0  # unscored: counts 0


def test_summary_refuses_records_with_different_metrics():
    records = [{"id": "a", "metrics": {"em": 1.0}}, {"id": "b", "metrics": {"accuracy": 1.0}}]
    with pytest.raises(ConfigError, match="no metric"):
        summarize(records, total=2, stats=None, wall_s=0.0, meta={}, finished=True)


class Mislabelled(Task):
    name = "mislabelled"
    primary_metric = "accuracy"

    def score(self, prediction, gold):
        return {"acc": 1.0}  # not the metric it declares


def test_a_task_emitting_undeclared_metrics_is_an_example_error(tmp_path):
    with pytest.raises(ValueError, match=r"scored metrics \['acc'\], but declares \['accuracy'\]"):
        checked_metrics({"acc": 1.0}, Mislabelled())
    summary = asyncio.run(evaluate(strategies.build("io"), Mislabelled(), [Example(Problem("q", "2+2?"), "4")],
                                   EvalResources(ScriptedLM(lambda r: "4")), tmp_path,
                                   settings=EvalSettings()))
    record = read_records(tmp_path)["q"]
    assert "declares ['accuracy']" in record.error and record.metrics == {}
    assert summary["n_errors"] == 1


def test_compare_and_view_refuse_a_run_whose_records_disagree_on_metrics(tmp_path):
    import json

    from thoughtloom.view import write_report
    from thoughtloom.view.compare import compare_runs

    examples = [Example(Problem(f"q{i}", f"{i}+1?"), str(i + 1)) for i in range(2)]
    asyncio.run(evaluate(strategies.build("io"), tasks.get("freeform"), examples,
                         EvalResources(ScriptedLM(lambda r: "1")), tmp_path, settings=EvalSettings()))
    compare_runs([str(tmp_path)])  # a consistent run reads fine
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["metrics"] = {"em": first["metrics"]["em"]}  # as if written by a task without f1
    (tmp_path / "results.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(ConfigError, match="no metric 'f1' in the record of example 'q0'"):
        compare_runs([str(tmp_path)])
    with pytest.raises(ConfigError, match="no metric 'f1'"):
        write_report(tmp_path)

"""The typed eval record (``thoughtloom.eval.record``): one writer's line, one reader, one tolerance policy."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from support.record_runs import GOLDEN, RUNS, make_run
from thoughtloom import tasks
from thoughtloom.core.types import Problem
from thoughtloom.eval.record import EvalRecord, NotARecord, record_lines
from thoughtloom.eval.results import ResultsFile, read_records, writable
from thoughtloom.eval.runner import ExampleJob, EvalSettings
from thoughtloom.strategies import build
from thoughtloom.tasks import Example
from thoughtloom.view.rundir import RunFolder

FULL = EvalRecord(id="q1", input="What is 2 + 4?", prediction="6", gold=["6", "six"], metrics={"accuracy": 1.0},
                  confidence=0.75, truncated=False, stopped="budget",
                  anytime={"points": [{"calls": 0, "tokens": 0, "answer": None, "metrics": {"accuracy": 0.0}},
                                      {"calls": 2, "tokens": 31, "answer": "6", "metrics": {"accuracy": 1.0}}],
                           "exact": "every budget"},
                  usage={"calls": 2, "cached_calls": 0, "prompt_tokens": 20, "completion_tokens": 11,
                         "total_tokens": 31, "latency_s": 0.015625, "truncated_calls": 0},
                  latency_s=0.03125, error=None, step_problems={"unparsed": {"json": 1}},
                  meta={"stratum": "short"}, details={"votes": {"6": 2}, "surrogate": "\udc80"})


def test_a_record_written_then_read_is_the_same_record():
    """to_json then from_json gives back an equal record and the same line, for a full record, a bare one
    and one with keys this version does not know."""
    clean = dataclasses.replace(FULL, details={"votes": {"6": 2}})
    unknown = dataclasses.replace(clean, extra={"reviewer": "ann", "score_v2": 3})
    for record in (clean, EvalRecord(id="bare"), unknown):
        line = record.to_json()
        assert line.endswith("\n") and line.count("\n") == 1
        again = EvalRecord.from_json(line)
        assert again == record and again.to_json() == line
    assert list(json.loads(unknown.to_json()))[-2:] == ["reviewer", "score_v2"]  # unknown keys after the known


def test_the_line_has_today_s_keys_in_today_s_order_and_is_encodable():
    """The fields in the order the runner has always written them; a lone surrogate becomes U+FFFD as the
    line is written (so the line encodes as UTF-8), and reads back as that."""
    line = FULL.to_json()
    assert list(json.loads(line)) == ["id", "input", "prediction", "gold", "metrics", "confidence", "truncated",
                                      "stopped", "anytime", "usage", "latency_s", "error", "step_problems", "meta",
                                      "details", "example_sha256"]
    line.encode("utf-8")
    assert EvalRecord.from_json(line).details["surrogate"] == "\ufffd"


def test_numbers_are_written_as_they_were_given():
    """No conversion on reading: an int stays an int and a float keeps its digits, so a line read and written
    again is byte-identical."""
    line = '{"id": "n", "metrics": {"em": 1, "f1": 0.3333333333333333}, "confidence": 1, "latency_s": 2}\n'
    record = EvalRecord.from_json(line)
    assert record.metrics == {"em": 1, "f1": 0.3333333333333333} and type(record.metrics["em"]) is int
    assert record.confidence == 1 and record.latency_s == 2
    assert json.loads(record.to_json())["metrics"] == {"em": 1, "f1": 0.3333333333333333}
    assert '"metrics": {"em": 1, "f1": 0.3333333333333333}' in record.to_json()


def test_an_old_record_without_the_newer_keys_reads_with_their_defaults():
    """A record from before truncated / stopped / step_problems / anytime existed (the first runner's
    fields, in its order) reads as not truncated, not stopped, no problems, no trajectory."""
    old = {"id": "gsm8k-0", "input": "q", "prediction": "6", "gold": "6", "metrics": {"accuracy": 1.0},
           "confidence": None, "usage": {"calls": 1, "prompt_tokens": 5, "completion_tokens": 2},
           "latency_s": 0.5, "error": None, "meta": {}, "details": {}}
    record = EvalRecord.from_json(json.dumps(old))
    assert (record.truncated, record.stopped, record.step_problems, record.anytime) == (False, None, {}, None)
    assert record.extra == {} and record.score("accuracy") == 1.0 and record.used("total_tokens") == 7.0
    assert {k: v for k, v in record.to_dict().items() if k in old} == old


@pytest.mark.parametrize("line, why", [
    ('["id", "x"]', "a record is a JSON object, not list"),
    ('{"input": "no id"}', "a record needs a string id"),
    ('{"id": 7}', "a record needs a string id, not int"),
    ('{"id": "x", ', "invalid JSON"),
    ("[" * 100_000, "invalid JSON"),
])
def test_what_is_not_a_record_says_why(line, why):
    """A JSON value that is no record (not an object, no string id, not JSON, nested past the parser) is
    NotARecord, a ValueError, with the reason."""
    with pytest.raises(NotARecord, match=re.escape(why)):
        EvalRecord.from_json(line)


def test_a_field_of_the_wrong_type_reads_as_its_default():
    """The tolerance policy of the module docstring, field by field; anytime is kept as read for its own
    reader (eval.curves), as are input, prediction and gold."""
    record = EvalRecord.from_dict({
        "id": "h", "input": ["q"], "prediction": 6, "metrics": [1.0], "confidence": "high", "truncated": "yes",
        "stopped": 3, "anytime": "every budget", "usage": "garbage", "latency_s": True, "error": 404,
        "step_problems": None, "meta": "m", "details": ["d"]})
    assert (record.input, record.prediction, record.anytime) == (["q"], 6, "every budget")
    assert (record.metrics, record.confidence, record.truncated, record.stopped) == ({}, None, False, None)
    assert (record.usage, record.latency_s, record.error) == ({}, 0.0, "404")
    assert (record.step_problems, record.meta, record.details) == ({}, {}, {})
    assert EvalRecord.from_dict({"id": "e", "error": False}).error is None
    assert EvalRecord.from_dict({"id": "e", "error": ""}).failed is False


def test_reading_by_key_still_works_with_a_deprecation_warning():
    """Callers written when records were dicts (record["error"], record.get("usage")) keep working, warned."""
    with pytest.warns(DeprecationWarning, match="record.error"):
        assert FULL["error"] is None
    with pytest.warns(DeprecationWarning):
        assert FULL.get("meta") == {"stratum": "short"} and FULL.get("nope", 1) == 1


def test_the_results_file_keeps_records_and_sets_aside_what_is_not_one(tmp_path):
    """ResultsFile reads through the one reader under the torn policy: a corrupt line is set aside, an object
    without an id and a partial last line are dropped, the last record of an id wins in first-seen order,
    and the compacted file holds each kept record's own line."""
    a, b = EvalRecord(id="a", prediction="1"), EvalRecord(id="b", error="boom")
    a2 = dataclasses.replace(a, prediction="2")
    (tmp_path / "results.jsonl").write_text(a.to_json() + "not json\n" + b.to_json() + '{"no": "id"}\n'
                                            + a2.to_json() + '{"id": "c", "pred', encoding="utf-8")
    store = ResultsFile(tmp_path)
    store.close()
    assert list(store.records.values()) == [a2, b]
    assert (tmp_path / "results.jsonl").read_text(encoding="utf-8") == a2.to_json() + b.to_json()
    assert (tmp_path / "results.jsonl.bad").read_bytes() == b"2\tnot json\n"
    assert read_records(tmp_path) == {"a": a2, "b": b}
    retried = ResultsFile(tmp_path, retry_errors=True)
    retried.close()
    assert list(retried.records) == ["a"]


def test_the_inspector_reads_records_with_the_eval_s_reader(tmp_path):
    """RunFolder's records are EvalRecords from the same reader; under its skip policy a damaged line (the
    partial last line of a run still writing too) is counted, an object without an id is not."""
    a = EvalRecord(id="a", metrics={"em": 1.0})
    (tmp_path / "results.jsonl").write_text(a.to_json() + "{oops\n" + '{"no": "id"}\n' + '{"id": "b", "pr',
                                            encoding="utf-8")
    run = RunFolder.open(tmp_path)
    assert run.records == {"a": a} and run.skipped_lines == 2
    assert [r is not None for _line, r in record_lines(tmp_path / "results.jsonl", "skip")] == [
        True, False, False, False]


def test_an_unwritable_record_and_a_dead_worker_s_record():
    """writable() drops what JSON cannot hold and says why in the error; ExampleJob.failed makes the same
    fields as any record, scored as no answer."""
    huge = dataclasses.replace(FULL, details={"n": 10 ** 5000})
    record, events = writable(huge, [])
    assert record.prediction is None and record.details == {} and record.error.startswith("unwritable record:")
    assert events[-1]["example"] == "q1" and EvalRecord.from_json(record.to_json()) == record
    task = tasks.get("gsm8k")
    job = ExampleJob(build("io"), task, EvalSettings())
    dead, events = job.failed(Example(Problem("q9", "What is 1 + 1?", meta={"n": 1}), "2"), "WorkerDied: twice")
    assert dead.error == "WorkerDied: twice" and dead.metrics == {"accuracy": 0.0} and dead.meta == {"n": 1}
    assert list(json.loads(dead.to_json())) == list(EvalRecord.KEYS)
    assert events == [{"type": "error", "t": 0.0, "example": "q9", "error": "WorkerDied: twice"}]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_results_files_are_byte_identical_to_the_dict_built_ones(name, tmp_path):
    """A scripted eval's results.jsonl, on a steady clock, is byte for byte the file the runner wrote when
    it assembled records as dicts (tests/eval/data/records/, made before EvalRecord); each of its lines
    reads back as a record whose line is the same bytes."""
    produced = make_run(name, tmp_path).read_bytes()
    expected = (GOLDEN / f"{name}.jsonl").read_bytes()
    assert produced == expected
    for raw in expected.splitlines(keepends=True):
        assert EvalRecord.from_json(raw).to_json().encode("utf-8") == raw


def test_the_committed_files_read_back_unchanged(tmp_path):
    """Opening a folder that holds one of the committed results files leaves it as it was (nothing to
    compact), and every record reads with its own id."""
    for path in sorted(GOLDEN.glob("*.jsonl")):
        folder = tmp_path / path.stem
        folder.mkdir()
        (folder / "results.jsonl").write_bytes(path.read_bytes())
        store = ResultsFile(folder)
        store.close()
        assert (folder / "results.jsonl").read_bytes() == path.read_bytes()
        assert list(store.records) == [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_record_is_not_iterable_like_a_dict():
    """The deprecated key access must not make a record look iterable (iter() would index it 0, 1, ...)."""
    with pytest.raises(TypeError):
        iter(FULL)

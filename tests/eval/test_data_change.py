"""Issue 38: a run folder resumes when its data file changed but the examples it has finished did not.

The run identity hashes the whole data file; when that hash is the only difference, the finished records
are compared with this run's examples of the same id (``eval.data_change``): unchanged, the run resumes
without ``force`` and ``run.json`` keeps the change in ``data_changes``; changed or gone, it is refused
naming the first such example.
"""

import json
import logging

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import Problem
from thoughtloom.eval import EvalResources, EvalSettings, evaluate
from thoughtloom.eval.data_change import BY_DIGEST, BY_INPUT_AND_GOLD, check_finished, example_sha256
from thoughtloom.eval.identity import ConfigMismatch, DataSource
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

TASK = tasks.get("gsm8k")


def example(i, question=None, context="", gold=None):
    return Example(Problem(f"q{i}", question or f"What is {i} plus 1?", context), gold or str(i + 1))


def write_data(path, n, changed=None):
    """A data file of ``n`` examples (its bytes are what run.json hashes); ``changed``: examples to write
    otherwise, by index."""
    exs = [(changed or {}).get(i, example(i)) for i in range(n)]
    path.write_text("".join(json.dumps({"id": e.problem.id, "question": e.problem.question,
                                        "context": e.problem.context, "answer": e.gold}) + "\n" for e in exs))
    return exs


async def run(out, exs, data, lm=None, **kw):
    lm = lm or ScriptedLM(lambda req: "The answer is: 1")
    summary = await evaluate(strategies.build("cot", {}, TASK), TASK, exs, EvalResources(lm), out,
                             source=DataSource(data, limit=len(exs)), **kw)
    return summary, lm


def records(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def identity(out):
    return json.loads((out / "run.json").read_text())


@pytest.mark.parametrize("grown", [True, False], ids=["records appended", "records removed past n"])
async def test_a_file_changed_after_the_finished_examples_resumes_and_runs_only_the_new_ones(tmp_path, caplog, grown):
    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    exs = write_data(data, 10)
    await run(out, exs[:3], data)
    old_sha = identity(out)["config"]["data"]["sha256"]
    exs = write_data(data, 20 if grown else 5)  # the first 10 (or 5) as they were
    with caplog.at_level(logging.WARNING, logger="thoughtloom.eval.identity"):
        summary, lm = await run(out, exs[:5], data)
    assert lm.calls == 2 and summary["n"] == 5 and summary["this_run"]["examples"] == 2
    assert [r["id"] for r in records(out)] == ["q0", "q1", "q2", "q3", "q4"]
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and "the data file changed" in warned[0] and "the 3 finished examples are unchanged" in warned[0]
    run_json = identity(out)
    new_sha = run_json["config"]["data"]["sha256"]
    assert new_sha != old_sha and run_json["forced"] == []
    [change] = run_json["data_changes"]
    assert (change["old"], change["new"], change["finished_unchanged"]) == (old_sha, new_sha, 3)
    assert change["compared_by"] == {BY_DIGEST: 3} and change["at"]


async def test_the_record_of_a_data_change_is_kept_by_later_resumes(tmp_path):
    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    exs = write_data(data, 10)
    await run(out, exs[:2], data)
    exs = write_data(data, 6)
    await run(out, exs[:3], data)
    first = identity(out)["data_changes"]
    await run(out, exs[:4], data)  # the same file again: nothing new to record
    assert identity(out)["data_changes"] == first and len(first) == 1
    exs = write_data(data, 5)
    await run(out, exs[:5], data)
    assert [c["finished_unchanged"] for c in identity(out)["data_changes"]] == [2, 4]


@pytest.mark.parametrize("what, changed", [
    ("question", example(1, question="What is 1 plus 2?")),
    ("context", example(1, context="Count in base 3.")),
    ("gold", example(1, gold="3")),
])
async def test_a_finished_example_that_changed_is_refused_naming_it(tmp_path, what, changed):
    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    exs = write_data(data, 10)
    await run(out, exs[:3], data)
    before = (out / "results.jsonl").read_bytes()
    exs = write_data(data, 10, changed={1: changed})  # the same length: only the text of q1 moved on
    with pytest.raises(ConfigMismatch) as caught:
        await run(out, exs[:5], data)
    line = str(caught.value)
    assert "was made with data sha256 " in line and "finished example 'q1' changed (its question, context or gold)" in line
    assert (out / "results.jsonl").read_bytes() == before and identity(out)["data_changes"] == []


async def test_a_finished_example_missing_from_the_new_data_is_refused_naming_it(tmp_path):
    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    exs = write_data(data, 10)
    await run(out, exs[:3], data)
    survivors = [e for e in exs if e.problem.id != "q1"]
    data.write_text("".join(json.dumps({"id": e.problem.id, "question": e.problem.question}) + "\n" for e in survivors))
    with pytest.raises(ConfigMismatch, match="finished example 'q1' is not among this run's examples"):
        await run(out, survivors[:5], data)


async def test_force_still_resumes_a_changed_example_and_records_it_as_forced(tmp_path):
    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    exs = write_data(data, 10)
    await run(out, exs[:2], data)
    exs = write_data(data, 10, changed={0: example(0, gold="7")})
    summary, _ = await run(out, exs[:3], data, force=True)
    run_json = identity(out)
    assert summary["n"] == 3 and run_json["data_changes"] == []
    assert [d["key"] for d in run_json["forced"][0]["differences"]] == ["data.sha256"]


async def test_another_difference_beside_the_data_file_is_refused_as_before(tmp_path):
    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    exs = write_data(data, 10)
    await run(out, exs[:2], data)
    exs = write_data(data, 5)
    with pytest.raises(ConfigMismatch, match=r"was made with data sha256 \w+, seed 0, this run asks for .*seed 3"):
        await run(out, exs[:3], data, settings=EvalSettings(seed=3))


async def test_records_without_a_digest_are_compared_by_input_and_gold(tmp_path):
    """Records written before ``example_sha256`` hold the question (``input``) and the gold, not the
    context: those two are compared, and a change of context alone is not seen (said in compared_by)."""
    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    exs = write_data(data, 10)
    await run(out, exs[:3], data)
    old = [{k: v for k, v in r.items() if k != "example_sha256"} for r in records(out)]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    exs = write_data(data, 10, changed={2: example(2, gold="4")})
    with pytest.raises(ConfigMismatch, match=r"finished example 'q2' changed \(its gold\)"):
        await run(out, exs[:3], data)
    exs = write_data(data, 10, changed={2: example(2, question="What is 2 plus 2?")})
    with pytest.raises(ConfigMismatch, match=r"finished example 'q2' changed \(its question\)"):
        await run(out, exs[:3], data)
    exs = write_data(data, 7, changed={1: example(1, context="unchecked")})
    summary, lm = await run(out, exs[:4], data)
    assert lm.calls == 1 and identity(out)["data_changes"][0]["compared_by"] == {BY_INPUT_AND_GOLD: 3}


def test_the_digest_covers_question_context_and_gold_not_meta_or_key_order():
    base = example_sha256(Problem("q", "Q?", "C"), {"a": 1, "b": [1, 2]})
    assert base == example_sha256(Problem("q", "Q?", "C", meta={"strata_sizes": {"short": 9}}), {"b": (1, 2), "a": 1})
    assert base == example_sha256(Problem("other id", "Q?", "C"), {"a": 1, "b": [1, 2]})
    for changed in (Problem("q", "Q!", "C"), Problem("q", "Q?", "C ")):
        assert example_sha256(changed, {"a": 1, "b": [1, 2]}) != base
    assert example_sha256(Problem("q", "Q?", "C"), {"a": 1, "b": [1, 3]}) != base
    assert len(base) == 64


def test_a_gold_json_rounds_is_compared_as_the_record_holds_it(tmp_path):
    """An older record's gold was written as JSON: a tuple reads back as a list, a lone surrogate as
    U+FFFD. The example's gold is compared as the record would hold it, so these are the same."""
    (tmp_path / "results.jsonl").write_text(json.dumps(
        {"id": "q0", "input": "What is \ufffd?", "gold": ["1", "one"]}, ensure_ascii=False) + "\n", encoding="utf-8")
    same = Example(Problem("q0", "What is \udc80?"), ("1", "one"))
    found = check_finished(tmp_path, [same])
    assert found.changed is None and found.compared_by == {BY_INPUT_AND_GOLD: 1}
    found = check_finished(tmp_path, [Example(Problem("q0", "What is \udc80?"), ("1",))])
    assert (found.changed, found.why) == ("q0", "changed (its gold)")

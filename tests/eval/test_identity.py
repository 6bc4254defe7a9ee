"""Run identity (issue 13 item 4): OUT/run.json and summary.json say what the results were made with,
and a resume with another config is refused in one line naming the differences (force to override)."""

import json
import logging
from dataclasses import dataclass

import pytest

from thoughtloom import strategies, tasks, __version__
from thoughtloom.core import Problem
from thoughtloom.eval import EvalResources, EvalSettings, evaluate
from thoughtloom.eval.identity import (NOT_COMPARED, ConfigMismatch, DataSource, Difference,
                                       identity_differences, mismatch_line)
from thoughtloom.lm import Budget, Limited, Retrying
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM

TASK = tasks.get("gsm8k")


def examples(n):
    return [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(n)]


def answer(req):
    return "The answer is: 1"


def strategy(name="cot-sc", **options):
    cls = strategies.get(name)
    return cls(cls.Config(**options))


def data_file(tmp_path, text="some data\n", name="data.jsonl"):
    path = tmp_path / name
    path.write_text(text)
    return path


def read_json(path):
    return json.loads(path.read_text())


async def run(out, strat=None, *, n=2, lm=None, source=None, settings=EvalSettings(), res=None, **kw):
    res = res or EvalResources(lm or ScriptedLM(answer))
    return await evaluate(strat or strategy(n=2), TASK, examples(n), res, out, settings=settings,
                          source=source, **kw)


async def test_run_json_is_written_before_the_first_model_call_and_repeated_in_the_summary(tmp_path):
    data = data_file(tmp_path)
    out = tmp_path / "out"
    seen = []

    def first(req):
        seen.append(read_json(out / "run.json"))
        return "The answer is: 1"

    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "cot.txt").write_text("{instruction}\n{demos}\nQuestion: {question}\n{answer_format}")
    summary = await run(out, strategy(n=2, temperature=0.5), lm=ScriptedLM(first), command=["thoughtloom", "eval"],
                        source=DataSource(data, offset=3, limit=2), meta={"cache_mode": "use"},
                        settings=EvalSettings(concurrency=2, seed=7, budget=Budget(max_calls=50)),
                        res=EvalResources(ScriptedLM(first), prompt_dir=prompts))
    identity = seen[0]
    assert identity["command"] == ["thoughtloom", "eval"]
    config = identity["config"]
    assert config["strategy"] == "cot-sc" and config["task"] == "gsm8k"
    # every resolved option value, defaults included
    assert config["options"] == {"n": 2, "temperature": 0.5, "max_tokens": 384, "shots": 3, "layout": "text",
                                 "max_calls": 1000}
    assert config["data"]["path"] == str(data) and len(config["data"]["sha256"]) == 64
    assert (config["data"]["offset"], config["data"]["limit"]) == (3, 2)
    assert config["seed"] == 7 and config["budget"] == {"max_calls": 50, "max_tokens": None}
    assert config["model"] == {"id": "scripted", "backend": "ScriptedLM", "n_ctx": None}
    assert config["prompts"]["dir"] == str(prompts) and len(config["prompts"]["sha256"]) == 64
    assert config["retriever"] is None and config["entail"] is None
    assert identity["settings"]["concurrency"] == 2 and identity["settings"]["notes"] == {"cache_mode": "use"}
    assert identity["versions"]["thoughtloom"] == __version__ and identity["versions"]["python"]
    assert identity["started"] == identity["updated"] and identity["forced"] == []
    final = read_json(out / "run.json")
    assert summary["identity"] == final == read_json(out / "summary.json")["identity"]
    assert final["config"] == config and final["updated"] >= final["started"]


async def test_resuming_with_another_strategy_is_refused_before_anything_runs(tmp_path):
    await run(tmp_path, strategy("cot-sc"), n=1)
    before = (tmp_path / "results.jsonl").read_bytes()
    lm = ScriptedLM(answer)
    with pytest.raises(ConfigMismatch) as caught:
        await run(tmp_path, strategy("cot"), n=3, lm=lm)
    assert str(caught.value) == (f"{tmp_path} was made with strategy cot-sc, this run asks for cot "
                                 "(pass force=True to resume anyway, or choose another output folder)")
    assert lm.calls == 0 and (tmp_path / "results.jsonl").read_bytes() == before
    assert read_json(tmp_path / "run.json")["config"]["strategy"] == "cot-sc"


async def test_a_changed_option_data_file_seed_or_model_is_named(tmp_path):
    data = data_file(tmp_path)
    await run(tmp_path / "o", strategy(n=2), n=1, source=DataSource(data))
    data.write_text("other data\n")
    with pytest.raises(ConfigMismatch) as caught:
        await run(tmp_path / "o", strategy(n=3), n=1, source=DataSource(data), settings=EvalSettings(seed=1),
                  lm=ScriptedLM(answer, model_id="other"))
    keys = [d.key for d in caught.value.differences]
    assert keys == ["options.n", "data.sha256", "seed", "model.id"]
    line = str(caught.value)
    assert "was made with n=2, data sha256 " in line and ", seed 0, model id scripted, this run asks for n=3, " in line
    assert line.count("\n") == 0


@pytest.mark.parametrize("change", ["concurrency", "limit", "timeouts", "retry_errors", "moved files", "notes"])
async def test_what_does_not_change_results_is_not_refused(tmp_path, change):
    data = data_file(tmp_path)
    prompts = tmp_path / "p"
    prompts.mkdir()
    (prompts / "cot.txt").write_text("{instruction}\n{demos}\nQuestion: {question}\n{answer_format}")
    res = EvalResources(ScriptedLM(answer), prompt_dir=prompts)
    await run(tmp_path / "o", n=2, source=DataSource(data, limit=2), res=res, meta={"cache_mode": "use"})
    source, settings, meta = DataSource(data, limit=4), EvalSettings(), {"cache_mode": "use"}
    if change == "concurrency":
        settings = EvalSettings(concurrency=8)
    elif change == "timeouts":
        settings = EvalSettings(example_timeout_s=30.0)
    elif change == "retry_errors":
        settings = EvalSettings(retry_errors=True)
    elif change == "moved files":  # the same content elsewhere
        moved = tmp_path / "moved"
        moved.mkdir()
        source = DataSource(data_file(moved), limit=4)
        (moved / "p").mkdir()
        (moved / "p" / "cot.txt").write_text((prompts / "cot.txt").read_text())
        res = EvalResources(ScriptedLM(answer), prompt_dir=moved / "p")
    elif change == "notes":
        meta = {"cache_mode": "replay", "timeout_s": 5}
    summary = await run(tmp_path / "o", n=4, source=source, settings=settings, res=res, meta=meta)
    assert summary["n"] == 4 and summary["this_run"]["examples"] == 2
    assert read_json(tmp_path / "o" / "run.json")["forced"] == []


async def test_changed_prompt_overrides_are_refused(tmp_path):
    prompts = tmp_path / "p"
    prompts.mkdir()
    (prompts / "cot.txt").write_text("{instruction}\n{demos}\nQuestion: {question}\n{answer_format}")
    await run(tmp_path / "o", n=1, res=EvalResources(ScriptedLM(answer), prompt_dir=prompts))
    (prompts / "cot.txt").write_text("Think hard.\n{instruction}\n{demos}\nQuestion: {question}\n{answer_format}")
    with pytest.raises(ConfigMismatch, match="was made with prompts sha256 "):
        await run(tmp_path / "o", n=1, res=EvalResources(ScriptedLM(answer), prompt_dir=prompts))


async def test_force_resumes_and_records_what_it_overrode(tmp_path):
    await run(tmp_path, strategy("cot-sc"), n=1)
    started = read_json(tmp_path / "run.json")["started"]
    summary = await run(tmp_path, strategy("cot"), n=2, force=True)
    identity = read_json(tmp_path / "run.json")
    assert summary["n"] == 2 and identity["config"]["strategy"] == "cot" and identity["started"] == started
    [forced] = identity["forced"]
    assert forced["differences"] == [{"key": "strategy", "old": "cot-sc", "new": "cot"}] and forced["at"]
    # the record of what was forced stays, and the next resume compares with the new config
    await run(tmp_path, strategy("cot"), n=3)
    assert read_json(tmp_path / "run.json")["forced"] == identity["forced"]


async def test_a_folder_made_before_run_json_resumes_with_a_warning(tmp_path, caplog):
    await run(tmp_path, n=1)
    (tmp_path / "run.json").unlink()
    with caplog.at_level(logging.WARNING, logger="thoughtloom.eval.identity"):
        summary = await run(tmp_path, strategy("cot"), n=2)
    assert summary["this_run"]["examples"] == 1
    assert "has results but no run.json" in caplog.text
    assert read_json(tmp_path / "run.json")["config"]["strategy"] == "cot"


async def test_a_folder_without_results_takes_any_config(tmp_path, caplog):
    # a run that wrote run.json and died before its first result has nothing to resume
    await run(tmp_path, strategy("cot-sc"), n=0)
    summary = await run(tmp_path, strategy("cot"), n=1)
    assert summary["n"] == 1 and read_json(tmp_path / "run.json")["config"]["strategy"] == "cot"
    assert "run.json" not in caplog.text


async def test_an_engine_setting_that_changes_outputs_counts(tmp_path):
    @dataclass
    class Engine:  # a backend under the usual wrappers: it answers itself (here by a script), wraps nothing
        script: object
        n_ctx: int

        @property
        def model_id(self):
            return self.script.model_id

        async def generate(self, requests):
            return await self.script.generate(requests)

        async def aclose(self):
            return None

    await run(tmp_path, n=1, lm=Retrying(Limited(Engine(ScriptedLM(answer), 4096))))
    assert read_json(tmp_path / "run.json")["config"]["model"] == {"id": "scripted", "backend": "Engine", "n_ctx": 4096}
    with pytest.raises(ConfigMismatch, match="was made with model n_ctx 4096, this run asks for 2048"):
        await run(tmp_path, n=1, lm=Retrying(Limited(Engine(ScriptedLM(answer), 2048))))


def test_options_are_compared_only_within_one_strategy():
    old = {"config": {"strategy": "cot-sc", "options": {"n": 5}, "data": {"path": "a", "limit": 5}}}
    new = {"config": {"strategy": "cot", "options": {"shots": 3}, "data": {"path": "b", "limit": 9}}}
    assert identity_differences(old, new) == [Difference("strategy", "cot-sc", "cot")]
    assert {"data.path", "data.limit", "prompts.dir"} == NOT_COMPARED
    same = {"config": {"strategy": "cot", "options": {"shots": 2}}}
    assert identity_differences(same, new) == [Difference("options.shots", 2, 3)]


def test_the_mismatch_line_shortens_hashes_and_says_none():
    line = mismatch_line("runs/x", [Difference("data.sha256", "a" * 64, None), Difference("options.n", 5, 10)])
    assert line == "runs/x was made with data sha256 aaaaaaaaaaaa, n=5, this run asks for data sha256 none, n=10"

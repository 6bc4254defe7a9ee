"""``thoughtloom data list|path`` and ``eval`` without ``--data`` (the task's packaged sample)."""

import json

from typer.testing import CliRunner

from thoughtloom import tasks
from thoughtloom.cli.main import app
from thoughtloom.tasks.datasets import sample_path

runner = CliRunner()


def test_data_list_describes_every_task():
    r = runner.invoke(app, ["data", "list"], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    for name in tasks.available():
        assert f"\n{name}\n" in f"\n{r.output}", name
    assert "30 examples (MIT), used when --data is omitted" in r.output  # gsm8k
    assert "curl -LO https://raw.githubusercontent.com/openai/grade-school-math/" in r.output
    assert "thoughtloom eval --task gsm8k --data test.jsonl" in r.output
    assert "context = [[title, [sentence, ...]], ...]" in r.output  # brackets printed, not taken as markup
    assert "shared/" not in r.output.replace(str(sample_path("gsm8k").parents[2]), "")


def test_data_list_json():
    r = runner.invoke(app, ["data", "list", "--json"])
    assert r.exit_code == 0, r.output
    entries = {e["task"]: e for e in json.loads(r.output)}
    assert sorted(entries) == tasks.available()
    gsm8k = entries["gsm8k"]
    assert gsm8k["sample"] == {"path": str(sample_path("gsm8k")), "examples": 30, "licence": "MIT"}
    assert gsm8k["format"].startswith("JSONL") and gsm8k["full_set"] and gsm8k["get"]
    assert entries["multiarith"]["sample"] is None and "licence" in entries["multiarith"]["note"]
    assert entries["fever"]["sample"]["examples"] == 30 and entries["outline"]["sample"]["examples"] == 8


def test_data_path():
    r = runner.invoke(app, ["data", "path", "hotpotqa"], env={"COLUMNS": "20"})  # never wrapped
    assert r.exit_code == 0 and r.output.strip() == str(sample_path("hotpotqa"))
    r = runner.invoke(app, ["data", "path", "nope"])
    assert r.exit_code != 0 and "unknown task 'nope'" in str(r.exception)


def test_eval_without_data_runs_the_packaged_sample_and_says_so(tmp_path, monkeypatch):
    from thoughtloom.eval import assembly
    from thoughtloom.testing import ScriptedLM

    monkeypatch.setattr(assembly, "open_model", lambda *args, **kw: ScriptedLM(lambda req: "The answer is: 18"))
    out = tmp_path / "o"
    r = runner.invoke(app, ["eval", "-S", "cot", "-t", "gsm8k", "--limit", "3", "--out", str(out), "--no-cache"],
                      env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "no --data: the packaged sample of gsm8k" in r.output
    assert "n=3/3 (the task's packaged sample)" in r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["data_sample"] is True and summary["data"] == str(sample_path("gsm8k"))
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [rec["id"] for rec in records] == ["gsm8k-0", "gsm8k-1", "gsm8k-2"]
    assert records[0]["metrics"] == {"accuracy": 1.0}  # the first GSM8K test answer is 18


def test_eval_of_a_task_without_a_sample_asks_for_data(tmp_path):
    r = runner.invoke(app, ["eval", "-S", "cot", "-t", "multiarith", "--out", str(tmp_path / "o")])
    assert r.exit_code != 0 and "no packaged sample" in str(r.exception) and "--data" in str(r.exception)

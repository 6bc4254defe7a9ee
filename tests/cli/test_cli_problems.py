"""``run`` and ``eval`` say what went wrong inside, one line per kind (issue 13 item 5)."""

import json

from typer.testing import CliRunner

from thoughtloom.cli.main import app
from thoughtloom.testing import ScriptedLM

runner = CliRunner()


def _no_action(monkeypatch):
    from thoughtloom.eval import assembly

    # every ReAct turn lacks an action, and so does the re-ask for it
    monkeypatch.setattr(assembly, "open_model", lambda *args, **kw: ScriptedLM(lambda req: " hmm"))


def test_run_prints_unparsed_replies_and_the_budget_stop(monkeypatch):
    _no_action(monkeypatch)
    # 3 calls: turn 1, its re-ask, turn 2; turn 2's re-ask is refused
    args = ["run", "react", "Who directed Jaws?", "--max-calls", "3", "--no-cache"]
    r = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert r.exit_code == 3, r.output  # stopped by its budget: exit 3
    assert "malformed (unparsed): 1 reply (react_action 1)" in r.output
    assert "budget-stopped: 1 refused call (calls 1)" in r.output
    r = runner.invoke(app, [*args, "--json"])
    assert json.loads(r.stdout)["step_problems"] == {"unparsed": {"react_action": 1}, "budget_stopped": {"calls": 1}}


def test_a_clean_run_prints_no_problem_lines(monkeypatch):
    from thoughtloom.eval import assembly

    monkeypatch.setattr(assembly, "open_model", lambda *args, **kw: ScriptedLM(lambda req: "The answer is: 4"))
    r = runner.invoke(app, ["run", "cot", "2+2?", "--no-cache"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "answer: 4" in r.output
    assert "malformed" not in r.output and "budget-stopped" not in r.output


def test_eval_summary_counts_them_per_example(monkeypatch, tmp_path):
    _no_action(monkeypatch)
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Who is {i}?", "answer": "x"}) + "\n"
                            for i in range(2)))
    out = tmp_path / "o"
    r = runner.invoke(app, ["eval", "-S", "react", "-t", "hotpotqa", "-d", str(data), "--out", str(out),
                            "--max-calls", "3", "--no-cache"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "malformed (unparsed): 2 replies in 2 of 2 examples (react_action 2)" in r.output
    assert "budget-stopped: 2 refused calls in 2 of 2 examples (calls 2)" in r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["step_problems"]["unparsed"] == {"total": 2, "examples": 2, "by": {"react_action": 2}}

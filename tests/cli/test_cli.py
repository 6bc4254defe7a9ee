import json
import subprocess
import sys

from typer.testing import CliRunner

from conftest import data_file
from thoughtloom import tasks
from thoughtloom.cli.main import app

runner = CliRunner()


def run_main(*args, **kw):
    """Through main(), the way the console script runs (error rendering included)."""
    return subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True,
                          text=True, timeout=120, **kw)


def test_strategies_and_models_list():
    r = runner.invoke(app, ["strategies"])
    assert r.exit_code == 0 and "cot-sc" in r.output and "gsm8k" in r.output
    r = runner.invoke(app, ["models"])
    assert r.exit_code == 0 and "openai:MODEL@URL" in r.output


def test_bad_model_spec_is_one_clear_line():
    r = run_main("run", "io", "hi", "--model", "gpt-4")
    assert r.returncode == 2
    assert "error: unknown model spec 'gpt-4'" in r.stderr and "Traceback" not in r.stderr


def test_bad_data_line_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answer": "#### 1"}\n{oops\n')
    r = run_main("eval", "-S", "io", "-t", "gsm8k", "-d", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and f"{bad}:2: invalid JSON" in r.stderr


def test_unreachable_server_says_so(tmp_path):
    r = run_main("run", "io", "hi", "--model", "openai:m@http://127.0.0.1:9/v1", "--no-cache")
    assert r.returncode == 2 and "cannot reach" in r.stderr and "server running" in r.stderr


def test_conflicting_cache_flags():
    r = run_main("run", "io", "hi", "--no-cache", "--replay")
    assert r.returncode == 2 and "cannot be used together" in r.stderr


def test_unknown_strategy_option(tmp_path):
    r = run_main("run", "cot-sc", "hi", "--set", "beams=3")
    assert r.returncode == 2 and "no option 'beams'" in r.stderr


def test_cache_stats_and_clear(tmp_path):
    cache = tmp_path / "c.sqlite"
    r = run_main("cache", "stats", "--cache", str(tmp_path / "nope" / "c.sqlite"))  # issue 26: not '0 entries'
    assert r.returncode == 2 and f"error: no cache file {tmp_path}/nope/c.sqlite" in r.stderr
    assert not (tmp_path / "nope").exists()  # and nothing made there
    from thoughtloom.lm import CompletionStore

    CompletionStore(cache).close()  # an empty cache
    r = runner.invoke(app, ["cache", "stats", "--cache", str(cache), "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["entries"] == 0
    r = runner.invoke(app, ["cache", "stats", "--cache", str(cache)])
    assert r.exit_code == 0 and f"{cache}: 0 entries" in " ".join(r.output.split())
    r = runner.invoke(app, ["cache", "clear", "--cache", str(cache), "--yes"])
    assert r.exit_code == 0 and "deleted 0" in r.output


def test_eval_offset_skips_examples_and_checks_range(tmp_path):
    # the DecomP controller check runs without any model call
    data = data_file("decomp_letter_cat", "n3_eg100_pos2_space.json")
    out = tmp_path / "o"
    r = run_main("eval", "-S", "decomp", "-t", "letter_cat", "-d", str(data), "--offset", "98", "--limit", "5",
                 "--set", "decomposer=reference", "--set", "handlers=symbolic", "--out", str(out), "--no-cache")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    last_two = [e.problem.id for e in tasks.get("letter_cat").load(data)[98:]]
    assert [rec["id"] for rec in records] == last_two
    r = run_main("eval", "-S", "io", "-t", "letter_cat", "-d", str(data), "--offset", "100", "--no-cache")
    assert r.returncode == 2 and "offset 100" in r.stderr and "only 100 examples" in r.stderr


def test_run_and_eval_share_one_option_group():
    import dataclasses

    import typer

    from thoughtloom.cli.options import RUN_OPTIONS_PANEL, RunOptions

    commands = typer.main.get_command(app).commands
    shared = {f.name for f in dataclasses.fields(RunOptions)}

    def spec(name):
        return {p.name: (tuple(p.opts), p.default, p.envvar, p.rich_help_panel)
                for p in commands[name].params if p.name in shared}

    assert set(spec("run")) == shared and spec("run") == spec("eval")
    assert {panel for *_, panel in spec("run").values()} == {RUN_OPTIONS_PANEL}


def test_run_stopped_by_its_budget_shows_the_best_answer_so_far(monkeypatch):
    from thoughtloom.eval import assembly
    from thoughtloom.testing import ScriptedLM

    def reply(req):
        if req.messages[-1].content.startswith("List the essential steps"):
            return ("Step 1: Who directed the film Jaws?\nStep 2: In what year was the director from Step 1 born?\n"
                    "Dependencies: Step 1 -> Step 2")
        return "Steven Spielberg was born in 1946 [1].\nAnswer: 1946"

    monkeypatch.setattr(assembly, "open_model", lambda *args, **kw: ScriptedLM(reply))
    # 3 calls: the root's two thoughts and its plan; the first sub-question's thoughts do not fit
    args = ["run", "hgot", "In what year was the director of Jaws born?", "--set", "samples=2",
            "--set", "max_depth=2", "--max-calls", "3", "--no-cache"]
    r = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert r.exit_code == 3, r.output  # stopped before its end: an answer, but not a finished one
    assert "answer: 1946 (the budget ran out first: the best answer so far" in r.output
    assert "->  1946 (100%; budget exceeded)" in r.output  # the report: the root, stopped
    assert "note: hgot runs closed book" in r.stderr  # no --index (issue 39)
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 3 and json.loads(r.stdout)["stopped"] == "budget"

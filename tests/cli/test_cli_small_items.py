"""The smaller stumbling blocks of a newcomer's first hour (issue 26 item 8), one test each."""

import json
import re
import subprocess
import sys

import os

from typer.testing import CliRunner

from conftest import REPO
from thoughtloom.eval import assembly
from thoughtloom.cli.main import app
from thoughtloom.cli.render import count
from thoughtloom.testing import ScriptedLM

runner = CliRunner()
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def main(*args, **kw):
    return subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True, env=ENV,
                          timeout=120, **kw)


def test_retrieval_on_hotpotqa_without_an_index_says_once_it_pools_the_sample(tmp_path, monkeypatch):
    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: ScriptedLM(lambda r: "The answer is: x"))
    r = runner.invoke(app, ["eval", "-S", "retrieve-then-read", "-t", "hotpotqa", "--limit", "2", "--no-cache",
                            "--out", str(tmp_path / "o")], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert r.output.count("no --index: retrieve-then-read retrieves from the paragraphs of the data file") == 1
    r = runner.invoke(app, ["eval", "-S", "cot", "-t", "hotpotqa", "--limit", "1", "--no-cache",
                            "--out", str(tmp_path / "p")], env={"COLUMNS": "300"})
    assert "no --index" not in r.output  # cot retrieves nothing


def test_a_mistyped_option_suggests_the_nearest_only():
    r = main("eval", "-S", "cot", "-t", "gsm8k", "--limt", "3")
    assert r.returncode == 2 and "error: no option --limt (did you mean --limit?)" in r.stderr
    r = main("run", "cot", "hi", "--limt", "3")
    assert r.returncode == 2 and "no option --limt (see" in r.stderr and "--quiet" not in r.stderr


def test_view_of_a_missing_folder_says_it_does_not_exist(tmp_path):
    r = main("view", str(tmp_path / "nosuch"))
    assert r.returncode == 2 and f"error: run folder {tmp_path}/nosuch does not exist" in r.stderr
    r = main("compare", str(tmp_path / "nosuch"), str(tmp_path))
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_counts_agree_with_their_nouns():
    assert [count(1, "example"), count(2, "example"), count(1, "claim"), count(0, "claim")] == [
        "1 example", "2 examples", "1 claim", "0 claims"]
    r = main("reproduce", "list")
    assert " 1 claims" not in r.stdout and "1 claim," in r.stdout


def test_the_repository_tracks_no_stray_wheel():
    tracked = subprocess.run(["git", "ls-files", "*.whl"], cwd=REPO, capture_output=True, text=True).stdout
    assert tracked == ""


def test_a_game24_report_shows_no_puzzle_as_gold_and_phases_read_as_words(tmp_path, monkeypatch):
    from thoughtloom.view.example_page import BY_RULE

    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: ScriptedLM(
        lambda r: '{"score": 5, "feedback": "ok"}' if "JSON" in r.messages[-1].content else "Expression: 4 + 9"))
    out = tmp_path / "o"
    r = runner.invoke(app, ["eval", "-S", "sculpt-mcts", "-t", "game24", "--limit", "1", "--set", "rollouts=1",
                            "--no-cache", "--out", str(out)])
    assert r.exit_code == 0, r.output
    from thoughtloom.view.rundir import RunFolder
    from thoughtloom.view.run_page import _examples
    from thoughtloom.view.figures import figures
    from thoughtloom.view.example_page import example_page

    run = RunFolder.open(out)
    assert run.checked_by_rule()
    table = str(_examples(run, figures(run, replicates=100)))
    assert BY_RULE in table and "[1, 1, 4, 6]" not in table
    record = next(iter(run.records.values()))
    (block,) = [events for _, events in run.trace_blocks()]
    page = str(example_page(record, block, "success", ruled=True))
    assert BY_RULE in page
    assert "phase=" not in page and "rollout 1/1" in page


def test_the_run_page_explains_wall_against_model_time(tmp_path, monkeypatch):
    from thoughtloom.view.figures import figures
    from thoughtloom.view.run_page import _cards
    from thoughtloom.view.rundir import RunFolder

    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: ScriptedLM(lambda r: "The answer is: 4"))
    out = tmp_path / "o"
    assert runner.invoke(app, ["eval", "-S", "cot", "-t", "gsm8k", "--limit", "1", "--no-cache",
                               "--out", str(out)]).exit_code == 0
    cards = str(_cards(figures(RunFolder.open(out), replicates=100)))
    assert "calls that run at once overlap, so it can exceed the wall time" in cards
    assert json.loads((out / "summary.json").read_text())["n"] == 1


def test_tables_in_a_pipe_are_plain_lines_without_padding():
    """Issue 39 §8: `thoughtloom strategies | cat` padded 60 of 62 lines with spaces to 1,115 columns."""
    for args in (["strategies"], ["strategies", "hgot"], ["models"]):
        r = main(*args)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert [line for line in lines if line != line.rstrip()] == [], args
        # a prose line stays one line: the longest, hgot's paper-preset settings, is about 400 characters, far
        # below the 1,115 columns the padding reached
        assert max(map(len, lines)) <= 600, (args, max(map(len, lines)))


def test_help_in_a_pipe_is_plain_and_not_wrapped_a_few_words_a_line():
    """Issue 39 §8: `eval --help` under a pipe was 261 lines of boxed text wrapped 3-4 words a line."""
    r = main("eval", "--help")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert not any(ch in r.stdout for ch in "╭│╰")  # no rich panels
    assert len(lines) < 200 and max(map(len, lines)) <= 100
    assert any(re.match(r"\s+-S, --strategy \S+\s+Strategy name\b", line) for line in lines), r.stdout[:2000]


def test_run_and_eval_each_say_how_they_take_the_strategy():
    """Issue 39 §10: `eval cot ...` said only "Missing option '--strategy'"; `run --strategy cot` gave no hint."""
    r = main("eval", "cot", "--task", "qa")
    assert r.returncode == 2 and "eval takes the strategy as an option: thoughtloom eval -S NAME" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = main("run", "--strategy", "cot", "hi")
    assert r.returncode == 2 and "run takes the strategy first: thoughtloom run NAME QUESTION" in r.stderr

"""`demo` and `run` say whether an answer is right and exit by what happened (issue 26 items 1-2);
their output and eval's survive a pipe whole (item 4)."""

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from conftest import REPO
from thoughtloom.cli import answer
from thoughtloom.eval import assembly
from thoughtloom.cli.main import app
from thoughtloom.core.errors import ConfigError
from thoughtloom.testing import ScriptedLM
from thoughtloom.testing.fake_server import FakeOpenAIServer

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def scripted(monkeypatch, reply):
    lm = ScriptedLM(reply)
    monkeypatch.setattr(assembly, "open_model", lambda *args, **kw: lm)
    return lm


def refused(result, says):
    """A ConfigError (main() prints it as one line and exits 2) that says ``says``."""
    return isinstance(result.exception, ConfigError) and says in str(result.exception)


def test_demo_shows_the_expected_answer_and_that_it_is_wrong(monkeypatch):
    scripted(monkeypatch, lambda r: "3 * 12 = 36.\nThe answer is: 36")
    r = runner.invoke(app, ["demo", "--n", "2", "--no-cache"])
    assert r.exit_code == 0, r.output  # the demo shows the install works, right or wrong
    assert "answer: 36 (vote share 100%)" in r.output and "expected: 16 · wrong" in r.output
    assert "point --model at a stronger one" in r.output


def test_demo_right_says_so_and_a_tie_says_how_it_was_broken(monkeypatch):
    replies = iter(["The answer is: 16", "The answer is: 20"])
    scripted(monkeypatch, lambda r: next(replies))
    r = runner.invoke(app, ["demo", "--n", "2", "--no-cache"])
    assert "answer: 16 (vote share 50%; a tie of 2 answers, won by the one sampled first)" in r.output
    assert "expected: 16 · right" in r.output and "stronger" not in r.output


def test_run_gold_scores_one_question_and_exits_4_when_wrong(monkeypatch):
    scripted(monkeypatch, lambda r: "The answer is: Paris")
    r = runner.invoke(app, ["run", "cot", "Capital of France?", "--gold", "Paris", "--no-cache"])
    assert r.exit_code == 0 and "check: expected Paris: right (em 1.000 · f1 1.000)" in r.output
    r = runner.invoke(app, ["run", "cot", "Capital of France?", "--gold", "Lyon", "--no-cache"])
    assert r.exit_code == 4 and "check: expected Lyon: wrong (em 0.000 · f1 0.000)" in r.output
    r = runner.invoke(app, ["run", "cot", "Capital of France?", "--gold", "Lyon", "--no-cache", "--json"])
    assert r.exit_code == 4 and json.loads(r.output)["check"] == {
        "ok": False, "message": "expected Lyon: wrong (em 0.000 · f1 0.000)"}


def test_run_on_game24_says_a_wrong_expression_is_not_a_solution(monkeypatch):
    scripted(monkeypatch, lambda r: '{"score": 10, "feedback": "ok"}' if "JSON" in r.messages[-1].content
             else "Expression: 4 + 9 + 10 + 13")
    r = runner.invoke(app, ["run", "sculpt-mcts", "--task", "game24", "4 9 10 13", "--set", "rollouts=1",
                            "--no-cache"])
    assert r.exit_code == 4, r.output
    assert "check: not a solution (equals 36, not 24)" in r.output
    r = runner.invoke(app, ["run", "cot", "--task", "game24", "4 9 10 13", "--gold", "24"])
    assert refused(r, "--gold does not apply to --task game24")


def test_a_malformed_decomp_program_exits_3(monkeypatch):
    scripted(monkeypatch, lambda r: "no idea")
    r = runner.invoke(app, ["run", "decomp", "--task", "letter_cat", "--no-cache",
                            'Take the letters at position 1 of the words in "a b" and concatenate them.'])
    assert r.exit_code == 3, r.output
    assert "answer: (none)" in r.output and "stopped: malformed" in r.output


def test_an_empty_question_is_refused_before_any_call(monkeypatch):
    lm = scripted(monkeypatch, lambda r: "The answer is: 4")
    for question in ("", "   "):
        r = runner.invoke(app, ["run", "cot", question])
        assert refused(r, "the question is empty")
    assert lm.requests == []


def test_a_dash_reads_the_question_from_stdin(monkeypatch):
    lm = scripted(monkeypatch, lambda r: "The answer is: 4")
    r = runner.invoke(app, ["run", "cot", "-", "--no-cache"], input="What is 2 + 2?\n")
    assert r.exit_code == 0 and "answer: 4" in r.output
    assert "What is 2 + 2?" in lm.requests[0].messages[-1].content
    r = runner.invoke(app, ["run", "cot", "-"], input="")
    assert refused(r, "the question is empty (stdin gave no text)")


def test_the_exit_codes_are_in_the_help():
    r = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "300"})
    assert "Exit status: 0 an answer" in r.output and "4 an answer that was checked and is wrong" in r.output
    assert answer.EXIT_CODES[3].startswith("no finished answer")
    demo = runner.invoke(app, ["demo", "--help"], env={"COLUMNS": "300"})
    assert "0 an answer, right or wrong" in demo.output and "checked and is wrong" not in demo.output


LONG = "Which of these is longest: " + ", ".join(f"word{i}" for i in range(60)) + "?"


@pytest.mark.integration  # the loopback fake server (rule 11)
def test_output_under_a_pipe_is_whole_lines(tmp_path):
    out = tmp_path / ("a-folder-name-well-past-eighty-columns-" * 3) / "out"
    with FakeOpenAIServer(lambda p: "The answer is: word59") as server:
        model = f"openai:m@{server.base_url}"
        run = subprocess.run([sys.executable, "-m", "thoughtloom", "run", "cot", LONG, "--gold", "word59",
                              "--model", model, "--no-cache", "--show-program"],
                             capture_output=True, text=True, env=ENV, timeout=120)
        ev = subprocess.run([sys.executable, "-m", "thoughtloom", "eval", "-S", "cot", "-t", "gsm8k", "--limit", "2",
                             "--model", model, "--no-cache", "--out", str(out)],
                            capture_output=True, text=True, env=ENV, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "answer: word59" in run.stdout.splitlines() and "\x1b[" not in run.stdout + run.stderr
    assert ev.returncode == 0, ev.stderr
    assert f"results: {out}/results.jsonl · summary: {out}/summary.json" in ev.stdout.splitlines()
    bar = ev.stderr.strip().splitlines()[-1]  # the bar's final line, printed once
    assert bar.startswith("eval") and "2/2 accuracy 0.000 · 2 calls" in bar and "ETA" in bar
    assert all(not line.endswith(" ") for line in ev.stdout.splitlines())


def test_index_build_draws_no_progress_bars_into_a_pipe(tmp_path):
    from thoughtloom.tasks.datasets import sample_path

    r = subprocess.run([sys.executable, "-m", "thoughtloom", "index", "build", "--corpus",
                        str(sample_path("hotpotqa")), "--format", "hotpotqa", "--out", str(tmp_path / "i")],
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "it/s" not in r.stderr and "\r" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_warning_in_a_pipe_is_one_plain_line():
    script = ("import logging; from thoughtloom.cli import conventions; conventions._apply(); "
              "logging.getLogger('t').warning('retrying a call')")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=60)
    assert r.stderr == "warning: retrying a call\n"


@pytest.mark.parametrize("args", [["strategies"], ["reproduce", "list"], ["data", "list"]])
def test_listings_do_not_wrap_in_a_pipe(args):
    r = subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True, env=ENV,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) > 100  # the long rows stay on their line

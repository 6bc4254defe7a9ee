"""`run` and `demo` show a live status line on a terminal's stderr, and nothing on a pipe."""

import io
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from thoughtloom.cli import answer, main
from thoughtloom.eval import assembly
from thoughtloom.testing import ScriptedLM

runner = CliRunner()


def reply(req):
    if "JSON object" in req.messages[-1].content:
        return '{"feedback": "fine", "score": 6}'
    return "Two and two.\nThe answer is: 4"


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setattr(assembly, "open_model", lambda *args, **kw: ScriptedLM(reply))


@pytest.fixture
def terminal(monkeypatch):
    """stderr as a terminal (colourless, so the text can be read back), for the live displays (render.notes)."""
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, color_system=None, width=200)
    for module in (main, answer):  # eval's, and run's and demo's
        monkeypatch.setattr(module, "notes", console)
    return screen


def calls_made(stdout: str) -> int:
    return int(re.search(r"LLM calls: (\d+)", stdout).group(1))


def test_run_shows_the_phase_and_counters_while_it_works(scripted, terminal):
    r = runner.invoke(main.app, ["run", "sculpt-mcts", "2 + 2?", "-t", "gsm8k", "--set", "rollouts=2",
                                 "--no-cache"])
    assert r.exit_code == 0, r.output
    drawn = terminal.getvalue()
    assert "starting" in drawn  # drawn before the first call
    assert f"rollout 2/2 · {calls_made(r.stdout)} calls" in drawn  # the last call's update
    assert "rollout" not in r.stdout  # the final output stays clean


def test_demo_shows_its_samples_being_drawn(scripted, terminal):
    r = runner.invoke(main.app, ["demo", "--n", "3", "--no-cache"])
    assert r.exit_code == 0, r.output
    assert "sampling 3 · 3 calls" in terminal.getvalue()


def test_no_status_where_stderr_is_not_a_terminal(scripted):
    r = runner.invoke(main.app, ["run", "self-refine", "2 + 2?", "-t", "gsm8k", "--no-cache"])
    assert r.exit_code == 0, r.output
    assert r.stderr == ""

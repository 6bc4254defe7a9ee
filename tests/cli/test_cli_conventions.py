"""What every command does the same way: --json, -v/-q anywhere, --version, completion, did-you-mean."""

import json
import os
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from conftest import data_file
from thoughtloom import __version__, strategies, tasks
from thoughtloom.cli.main import app

runner = CliRunner()


def run_main(*args, env=None, **kw):
    """Through main(), the way the console script runs (error rendering included)."""
    return subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})}, **kw)


def command_paths(command=None, path=()):
    command = command or typer.main.get_command(app)
    for name, sub in getattr(command, "commands", {}).items():
        yield path + (name,), sub
        yield from command_paths(sub, path + (name,))


def test_version():
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"thoughtloom {__version__}"
    r = run_main("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"thoughtloom {__version__}"


def test_every_command_takes_verbose_and_quiet():
    paths = dict(command_paths())
    assert {("run",), ("eval",), ("demo",), ("strategies",), ("models",), ("cache", "stats"),
            ("index", "build")} <= set(paths)
    for path, command in paths.items():
        opts = {o for p in command.params for o in p.opts}
        assert {"-v", "--verbose", "-q", "--quiet"} <= opts, path


@pytest.mark.parametrize("args", [
    ["-q", "cache", "stats"], ["cache", "stats", "-q"], ["cache", "-q", "stats"],
    ["strategies", "-v"], ["-v", "strategies"], ["models", "--quiet"],
])
def test_verbosity_flags_go_before_or_after_the_subcommand(args):
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output


def test_verbose_and_quiet_together_are_refused():
    r = run_main("-v", "cache", "stats", "-q")
    assert r.returncode == 2 and "--verbose and --quiet cannot be used together" in r.stderr


def eval_args(out):
    """An eval that needs no model call: DecomP's controller check on three examples."""
    data = data_file("decomp_letter_cat", "n3_eg100_pos2_space.json")
    return ["eval", "-S", "decomp", "-t", "letter_cat", "-d", str(data), "--limit", "3", "--set",
            "decomposer=reference", "--set", "handlers=symbolic", "--out", str(out), "--no-cache"]


def test_quiet_eval_shows_no_progress_only_the_result(tmp_path):
    loud = run_main(*eval_args(tmp_path / "a"))
    assert loud.returncode == 0 and "3/3" in loud.stderr and "n=3/3" in loud.stdout
    quiet = run_main(*eval_args(tmp_path / "b"), "-q")
    assert quiet.returncode == 0 and quiet.stderr == "" and "n=3/3" in quiet.stdout


def test_eval_json_prints_the_summary_on_stdout_and_progress_on_stderr(tmp_path):
    r = run_main(*eval_args(tmp_path / "o"), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["strategy"], summary["task"], summary["n"]) == ("decomp", "letter_cat", 3)
    assert summary == json.loads((tmp_path / "o" / "summary.json").read_text())
    assert "3/3" in r.stderr


def test_strategies_table_is_grouped_by_paper_without_markup():
    r = runner.invoke(app, ["strategies"], terminal_width=160)
    assert r.exit_code == 0
    text = r.output
    titles = [text.index(t) for t in ("DecomP:", "HGOT:", "ThoughtSculpt:", "Baselines")]
    assert titles == sorted(titles)
    # each strategy sits under its paper's title
    for name in strategies.available():
        paper = strategies.get(name).paper
        title = {"DecomP": "DecomP:", "HGOT": "HGOT:", "ThoughtSculpt": "ThoughtSculpt:"}.get(paper, "Baselines")
        after = [t for t in titles if t < text.index(f" {name} ")]
        assert after[-1] == text.index(title), name
    assert "``" not in text and ":class:" not in text
    assert "n chain-of-thought samples" in text  # cot-sc's docstring, its ``n`` unmarked


def test_strategies_json_lists_papers_tasks_and_options():
    r = runner.invoke(app, ["strategies", "--json"])
    listing = json.loads(r.output)
    by_name = {s["name"]: s for s in listing["strategies"]}
    assert set(by_name) == set(strategies.available()) and listing["tasks"] == tasks.available()
    assert by_name["hgot"]["paper"] == "HGOT" and "hotpotqa" in by_name["hgot"]["tasks"]
    assert "gsm8k" not in by_name["hgot"]["tasks"] and by_name["cot-sc"]["tasks"] == tasks.available()
    n = next(o for o in by_name["cot-sc"]["options"] if o["name"] == "n")
    assert (n["type"], n["default"]) == ("int", 5) and "majority vote" in n["help"]


def test_one_strategy_shows_its_options_with_defaults_and_help():
    r = runner.invoke(app, ["strategies", "sculpt-mcts"], terminal_width=200)
    assert r.exit_code == 0
    assert "ThoughtSculpt" in r.output and "game24" in r.output and "rollouts" in r.output
    row = next(line for line in r.output.splitlines() if " rollouts " in line)
    assert "8" in row and "d_rollout" in row  # default and the comment on its line in MCTSConfig
    one = json.loads(runner.invoke(app, ["strategies", "sculpt-mcts", "--json"]).output)
    assert one["name"] == "sculpt-mcts" and {o["name"] for o in one["options"]} >= {"rollouts", "c", "k"}


def test_models_json():
    r = runner.invoke(app, ["models", "--json"])
    specs = {b["spec"]: b for b in json.loads(r.output)["backends"]}
    assert {"embedded", "PATH.gguf", "openai:MODEL", "openai:MODEL@URL", "litellm:PROVIDER/MODEL"} <= set(specs)
    assert specs["openai:MODEL"]["what"].endswith("(https://api.openai.com/v1)")
    assert isinstance(specs["litellm:PROVIDER/MODEL"]["installed"], bool)


@pytest.mark.parametrize("args,suggestion", [
    (["run", "cot_sc", "hi"], "did you mean 'cot-sc'?"),
    (["run", "io", "hi", "--task", "gsm8"], "did you mean 'gsm8k'?"),
    (["run", "io", "hi", "--model", "embeded"], "did you mean 'embedded'?"),
    (["strategies", "hgto"], "did you mean 'hgot'?"),
])
def test_unknown_names_get_a_suggestion_in_one_line(args, suggestion):
    r = run_main(*args)
    assert r.returncode == 2 and suggestion in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_openai_without_a_url_needs_a_key_before_any_call():
    env = {"OPENAI_API_KEY": "", "THOUGHTLOOM_API_KEY": ""}
    r = run_main("run", "io", "hi", "--model", "openai:gpt-4o-mini", "--no-cache", env=env)
    assert r.returncode == 2 and "needs a key" in r.stderr and "OPENAI_API_KEY" in r.stderr


def test_shell_completion_through_main():
    script = run_main("--show-completion", "bash")
    assert script.returncode == 0 and "_THOUGHTLOOM_COMPLETE=complete_bash" in script.stdout
    env = {"_THOUGHTLOOM_COMPLETE": "complete_bash", "COMP_CWORD": "1", "COMP_WORDS": "thoughtloom strat"}
    assert run_main(env=env).stdout.split() == ["strategies"]
    env.update(COMP_CWORD="3", COMP_WORDS="thoughtloom eval --strategy sculpt")
    assert run_main(env=env).stdout.split() == ["sculpt-dfs", "sculpt-dfs-backtrack", "sculpt-mcts"]


def test_the_docs_list_every_environment_variable_the_code_reads():
    import re
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src" / "thoughtloom"
    read = set()
    for path in src.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        read |= set(re.findall(
            r"""(?:environ\.get\(|environ\.setdefault\(|environ\[|getenv\(|envvar=)\s*["']([A-Z][A-Z0-9_]+)["']""", text))
    assert {"THOUGHTLOOM_MODEL", "THOUGHTLOOM_API_KEY", "OPENAI_API_KEY", "THOUGHTLOOM_CONFIG"} <= read
    readme = (src.parents[1] / "docs" / "running.md").read_text(encoding="utf-8")
    table = readme[readme.index("| variable | sets | read by |"):]
    table = table[:table.index("\n\n")]
    listed = set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)`", table, re.MULTILINE))
    assert read - listed == set(), "add these to docs/running.md's environment-variable table"


def test_quiet_silences_the_live_status_on_a_terminal(monkeypatch):
    import io

    from thoughtloom.cli import render
    from thoughtloom.eval import assembly
    from thoughtloom.testing import ScriptedLM

    monkeypatch.setattr(assembly, "open_model", lambda *a, **kw: ScriptedLM(lambda r: "The answer is: 4"))
    screen = io.StringIO()
    # stderr as a terminal, so the status is drawn (the private fields: the `file` property would
    # restore as the stderr of the moment, not as "whatever sys.stderr is")
    monkeypatch.setattr(render.notes, "_file", screen)
    monkeypatch.setattr(render.notes, "_force_terminal", True)
    drawn = []
    for quiet in ([], ["-q"]):
        r = runner.invoke(app, ["run", "cot-sc", "2 + 2?", "-t", "gsm8k", "--no-cache", *quiet])
        assert r.exit_code == 0 and "answer: 4" in r.output
        drawn.append(screen.getvalue())
        screen.truncate(0), screen.seek(0)
    assert drawn[0] and drawn[1] == ""

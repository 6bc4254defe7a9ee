"""Option defaults from TOML config files: flag > env > config file > built-in default."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import thoughtloom
from thoughtloom.cli.main import app

runner = CliRunner()


def cache_path(*args):
    """The cache file `cache stats` resolves (its --cache default is where config files speak)."""
    if "--cache" in args:  # a --cache given on the command line must exist (issue 26)
        from thoughtloom.lm import CompletionStore

        CompletionStore(args[args.index("--cache") + 1]).close()
    r = runner.invoke(app, ["cache", "stats", "--json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["path"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A working folder; the autouse fixture's THOUGHTLOOM_CACHE is unset so config files can speak."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.delenv("THOUGHTLOOM_CACHE", raising=False)
    return folder


def test_precedence_flag_over_env_over_config_over_default(project, monkeypatch):
    assert cache_path().endswith(".cache/thoughtloom/cache.sqlite")  # built-in default
    (project / "thoughtloom.toml").write_text('cache = "from-config.sqlite"\n')
    assert cache_path() == "from-config.sqlite"
    monkeypatch.setenv("THOUGHTLOOM_CACHE", "from-env.sqlite")
    assert cache_path() == "from-env.sqlite"
    assert cache_path("--cache", "from-flag.sqlite") == "from-flag.sqlite"


def test_project_file_over_user_file_and_command_tables(project, tmp_path, monkeypatch):
    user = tmp_path / "xdg-config" / "thoughtloom"
    user.mkdir(parents=True)
    (user / "config.toml").write_text('cache = "user.sqlite"\nthreads = 2\n')
    assert cache_path() == "user.sqlite"
    (project / "thoughtloom.toml").write_text('cache = "project.sqlite"\n')
    assert cache_path() == "project.sqlite"
    # a table named after a command sets that command's only, over the top level
    (project / "thoughtloom.toml").write_text('[cache.stats]\ncache = "stats.sqlite"\n')
    assert cache_path() == "stats.sqlite"
    # THOUGHTLOOM_CONFIG replaces the user's file
    chosen = tmp_path / "chosen.toml"
    chosen.write_text('n-ctx = 2048\n')
    monkeypatch.setenv("THOUGHTLOOM_CONFIG", str(chosen))
    (project / "thoughtloom.toml").unlink()
    assert cache_path().endswith(".cache/thoughtloom/cache.sqlite")


def test_config_defaults_show_in_help(project):
    # "default: 6" in rich's panels on a terminal and in click's plain help under a pipe (issue 39)
    def shown():
        return " ".join(runner.invoke(app, ["eval", "--help"]).output.split())  # the help's lines may wrap

    assert not re.search(r"default: 6\b", shown())
    (project / "thoughtloom.toml").write_text('concurrency = 6\n')
    assert re.search(r"default: 6\b", shown())


def run_main(*args, cwd, env=None):
    """main() in another working folder, importing the thoughtloom these tests import."""
    environment = {k: v for k, v in os.environ.items() if k != "THOUGHTLOOM_CACHE"}
    package_root = str(Path(thoughtloom.__file__).resolve().parents[1])
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, environment.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env={**environment, **(env or {})})


@pytest.mark.parametrize("text,words", [
    ('modle = "embedded"\n', "unknown key 'modle' (did you mean 'model'?"),
    ('threads = "many"\n', "bad value for key 'threads'"),
    ('threads = 0\n', "bad value for key 'threads'"),
    ('[evl]\nconcurrency = 2\n', "unknown command table [evl] (did you mean 'eval'?"),
    ('[eval]\nyes = true\n', "[eval] unknown key 'yes'"),
    ('set = "n=5"\n', "key 'set' takes a list"),
    ('model = \n', "invalid TOML"),
])
def test_a_bad_config_is_one_line_naming_file_and_key(project, text, words):
    (project / "thoughtloom.toml").write_text(text)
    r = run_main("cache", "stats", cwd=project)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: thoughtloom.toml: ") and words in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_missing_chosen_config_file_is_an_error(project, tmp_path):
    r = run_main("cache", "stats", cwd=project, env={"THOUGHTLOOM_CONFIG": str(tmp_path / "nope.toml")})
    assert r.returncode == 2 and "nope.toml (THOUGHTLOOM_CONFIG) does not exist" in r.stderr


def test_strategy_options_in_a_list(project):
    (project / "thoughtloom.toml").write_text('[run]\nset = ["beams=3"]\n')
    r = run_main("run", "cot-sc", "hi", cwd=project)
    assert r.returncode == 2 and "no option 'beams'" in r.stderr  # the config's --set reached the strategy

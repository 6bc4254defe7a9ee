"""``--role-model ROLE=MODEL`` and the ``[role_models]`` config table (issue 42: a model per role)."""

import json

import pytest
from typer.testing import CliRunner

from thoughtloom.cli.main import app
from thoughtloom.core.errors import ConfigError
from thoughtloom.eval import assembly
from thoughtloom.testing import ScriptedLM

runner = CliRunner()


def brain(req):
    if "JSON object" in req.messages[0].content:
        return json.dumps({"feedback": "fine", "score": 6})
    return "Expression: (13 - 9) * (10 - 4)\nThe answer is: (13 - 9) * (10 - 4)"


@pytest.fixture
def models(monkeypatch):
    """Each model spec the run opens is a ScriptedLM of its own, named by the spec."""
    opened: dict[str, ScriptedLM] = {}

    def open_model(spec, model=None):
        name = model or spec.model
        return opened.setdefault(name, ScriptedLM(brain, model_id=name))

    monkeypatch.setattr(assembly, "open_model", open_model)
    return opened


def eval_args(out, *more):
    return ["eval", "--strategy", "sculpt-mcts", "--task", "game24", "--limit", "1", "--no-cache",
            "--set", "rollouts=2", "--out", str(out), "--model", "big", *more]


def test_role_model_flag_puts_the_evaluator_on_its_own_model(tmp_path, models):
    r = runner.invoke(app, eval_args(tmp_path / "out", "--role-model", "evaluator=small"))
    assert r.exit_code == 0, r.output
    assert models["small"].requests and all("JSON object" in q.messages[0].content for q in models["small"].requests)
    assert not any("JSON object" in q.messages[0].content for q in models["big"].requests)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["role_models"] == {"evaluator": "small"}
    assert summary["usage"]["by_role"]["evaluator"]["calls"] == len(models["small"].requests)
    assert summary["usage"]["by_role"]["default"]["calls"] == len(models["big"].requests)


def test_role_models_table_in_the_project_config(tmp_path, models, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "thoughtloom.toml").write_text('[role_models]\nevaluator = "small"\n')
    r = runner.invoke(app, eval_args(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    assert models["small"].requests


@pytest.mark.parametrize("item, says", [("critic=small", "unknown --role-model role 'critic'"),
                                        ("evaluator", "bad --role-model 'evaluator'")])
def test_a_bad_role_model_is_one_line(tmp_path, models, item, says):
    r = runner.invoke(app, eval_args(tmp_path / "out", "--role-model", item))
    assert isinstance(r.exception, ConfigError) and says in str(r.exception)
    if "critic" in item:
        assert "generator, evaluator, judge, decomposer, handler" in r.exception.hint
    assert not models  # refused before any model opened


def verdict_or_sentence(req):
    if "need to improve" in req.prompt_text():
        return "[still need to improve] some concepts are missing"
    return "A toddler in a vest pulls snow off the wall."


def test_reproduce_takes_role_models_for_the_marked_methods(tmp_path, monkeypatch):
    opened: dict[str, ScriptedLM] = {}

    def open_model(spec, model=None):
        name = model or spec.model
        return opened.setdefault(name, ScriptedLM(verdict_or_sentence, model_id=name))

    monkeypatch.setattr(assembly, "open_model", open_model)
    args = ["reproduce", "sculpt-components", "--n", "1", "--no-cache", "--out", str(tmp_path / "out"),
            "--model", "big"]
    r = runner.invoke(app, args)
    assert isinstance(r.exception, ConfigError) and "on a model of its own" in str(r.exception)
    r = runner.invoke(app, args + ["--role-model", "generator=small", "--role-model", "evaluator=small"])
    assert r.exit_code == 0, r.output
    assert opened["small"].requests and opened["big"].requests
    card = (tmp_path / "out" / "card.md").read_text()
    assert "per role: default" in card

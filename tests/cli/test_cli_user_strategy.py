"""``--strategy MODULE:CLASS`` and ``thoughtloom run MODULE:CLASS``: a strategy of the user's own from the CLI."""

import json

import pytest
from typer.testing import CliRunner

from thoughtloom.cli.main import app
from thoughtloom.core.errors import ConfigError
from thoughtloom.eval import assembly
from thoughtloom.testing import ScriptedLM

runner = CliRunner()


@pytest.fixture(autouse=True)
def _registry_as_it_was():
    """A user strategy registers itself under its name; later tests (which list every registered
    strategy) must not see it."""
    from thoughtloom.strategies import registry

    registry.available()  # the built-ins loaded first, so that they are in the copy put back
    before = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(before)

USER_STRATEGY = '''
from dataclasses import dataclass

from thoughtloom.core.types import Request
from thoughtloom.strategies import Result, Strategy


@dataclass(frozen=True)
class TwiceConfig:
    max_calls: int = 4


class AskTwice(Strategy):
    """Asks the question, then asks again quoting the first reply; answers with the second."""

    Config = TwiceConfig

    async def solve(self, problem, ctx):
        first = (await ctx.lm.generate([Request.of(problem.question)]))[0].text
        second = (await ctx.lm.generate([Request.of(f"{problem.question}\\nA first try: {first}\\nFinal answer?")]))[0]
        return Result(answer=ctx.task.extract_answer(second.text), details={"first": first})
'''


def scripted(monkeypatch):
    lm = ScriptedLM(lambda req: "The answer is: 4" if "first try" in req.prompt_text() else "The answer is: 5")
    monkeypatch.setattr(assembly, "open_model", lambda *args, **kw: lm)
    return lm


def test_run_and_eval_take_a_user_strategy_file(tmp_path, monkeypatch):
    path = tmp_path / "my_strategy.py"
    path.write_text(USER_STRATEGY)
    lm = scripted(monkeypatch)
    r = runner.invoke(app, ["run", f"{path}:AskTwice", "What is 2 + 2?", "--gold", "4", "--no-cache", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["answer"] == "4" and out["check"]["ok"] is True
    assert len(lm.requests) == 2 and "A first try: The answer is: 5" in lm.requests[1].prompt_text()
    data = tmp_path / "qs.jsonl"
    data.write_text(json.dumps({"question": "What is 2 + 2?", "answer": "4"}) + "\n")
    r = runner.invoke(app, ["eval", "--strategy", f"{path}:AskTwice", "--task", "qa", "--data", str(data),
                            "--no-cache", "--out", str(tmp_path / "out"), "--set", "max_calls=1"])
    assert r.exit_code == 0, r.output
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text())
    # its own max_calls (--set) caps it like a built-in strategy: the second call is refused
    assert record["usage"]["calls"] == 1 and record["stopped"] == "budget"
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["strategy"] == "AskTwice"  # registered under its class name (it gives no name of its own)


def test_a_bad_user_strategy_is_one_line(tmp_path, monkeypatch):
    scripted(monkeypatch)
    (tmp_path / "not_one.py").write_text("class Plain:\n    pass\n")
    r = runner.invoke(app, ["run", f"{tmp_path / 'not_one.py'}:Plain", "Q?", "--no-cache"])
    assert isinstance(r.exception, ConfigError) and "is not a thoughtloom Strategy" in str(r.exception)
    r = runner.invoke(app, ["run", f"{tmp_path / 'missing.py'}:X", "Q?", "--no-cache"])
    assert isinstance(r.exception, ConfigError) and "--strategy" in str(r.exception) and "no file" in str(r.exception)

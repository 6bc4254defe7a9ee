"""thoughtloom.solve / evaluate (and their async forms) on ScriptedLM: the eval runner's path, one call."""

import asyncio
import json
import subprocess
import sys

import pytest

import thoughtloom
from thoughtloom import api
from thoughtloom.core import ConfigError
from thoughtloom.eval import assembly
from thoughtloom.tasks.datasets import sample_path
from thoughtloom.testing import ScriptedLM


class ClosableLM(ScriptedLM):
    closed = 0

    async def aclose(self) -> None:
        self.closed += 1


def test_solve_answers_with_its_result_usage_and_trace():
    lm = ClosableLM(["The answer is: 42"] * 3 + ["The answer is: 41"] * 2)
    solution = thoughtloom.solve("cot-sc", "What is 6 * 7?", task="gsm8k", model=lm, n=5, temperature=0.5)
    assert solution.answer == "42" and str(solution) == "42" and solution.confidence == pytest.approx(0.6)
    assert solution.calls == 5 == len(lm.requests) and len(lm.batches) == 1  # the n samples as one batch
    assert solution.tokens == solution.usage.prompt_tokens + solution.usage.completion_tokens > 0
    assert {r.temperature for r in lm.requests} == {0.5}
    assert [e["type"] for e in solution.trace.events].count("llm_call") == 5
    assert solution.result.details["samples"] == ["42", "42", "42", "41", "41"]
    assert (solution.truncated, solution.stopped) == (False, None) and solution.seconds >= 0
    assert lm.closed == 0  # the caller's LM stays open


def test_solve_hands_the_context_to_the_strategy():
    lm = ScriptedLM(lambda req: "Answer: Rome" if "Facts: Rome is the capital" in req.prompt_text() else "?")
    solution = thoughtloom.solve("io", "Which city?", context="Facts: Rome is the capital.", model=lm)
    assert solution.answer == "Rome"


def test_max_calls_is_the_budget_and_the_strategys_own_cap():
    lm = ScriptedLM(lambda req: "The answer is: 7")
    solution = thoughtloom.solve("cot-sc", "q", task="gsm8k", model=lm, n=5, max_calls=3)
    assert solution.calls == 3 == len(lm.requests)  # cot-sc takes as many samples as the budget leaves
    built = api.keyword_spec(max_calls=500).strategy("decomp")  # decomp's own cap (300) is raised with it
    assert built.config.max_calls == 500
    assert api.keyword_spec(max_calls=7).strategy("self-refine").config.max_calls == 7
    with pytest.raises(ConfigError, match="max_calls"):
        thoughtloom.solve("cot", "q", model=lm, max_calls=0)


def test_token_budget_stops_with_the_best_so_far():
    lm = ScriptedLM(lambda req: "The answer is: 7")
    solution = thoughtloom.solve("self-refine", "q", task="gsm8k", model=lm, token_budget=1)
    # the cap is checked before each call: the first draft is made, its critique is not
    assert solution.calls == 1 and solution.answer == "7" and solution.stopped == "budget"


@pytest.mark.parametrize("options,message", [
    ({"beams": 3}, "no option 'beams'"), ({"n": "many"}, "bad value for cot-sc option n"), ({"n": 0}, "must be >= 1"),
    ({"temperature": True}, "bad value for cot-sc option temperature"),
])
def test_options_are_checked_before_any_call(options, message):
    lm = ScriptedLM(["x"])
    with pytest.raises(ConfigError, match=message):
        thoughtloom.solve("cot-sc", "q", model=lm, **options)
    assert lm.requests == []


def test_unknown_names_are_config_errors():
    with pytest.raises(ConfigError, match="unknown strategy 'nope'"):
        thoughtloom.solve("nope", "q", model=ScriptedLM(["x"]))
    with pytest.raises(ConfigError, match="unknown task 'nope'"):
        thoughtloom.solve("cot", "q", task="nope", model=ScriptedLM(["x"]))


def test_a_failing_question_raises_with_its_trace():
    lm = ScriptedLM([ValueError("a reply the strategy cannot take")])
    with pytest.raises(thoughtloom.SolveFailed, match="ValueError: a reply the strategy cannot take") as caught:
        thoughtloom.solve("cot", "q", model=lm)
    assert any(e["type"] == "error" for e in caught.value.trace.events)


def test_a_model_spec_is_opened_for_the_call_and_closed_after(monkeypatch):
    opened = []

    def fake_open_lm(spec, **kwargs):
        lm = ClosableLM(["The answer is: 3"])
        opened.append((spec, kwargs, lm))
        return lm

    monkeypatch.setattr(assembly, "open_lm", fake_open_lm)
    solution = thoughtloom.solve("cot", "1 + 2?", task="gsm8k", model="openai:m@http://127.0.0.1:9/v1",
                                 cache="~/c.sqlite", api_key="k")
    assert solution.answer == "3"
    [(spec, kwargs, lm)] = opened
    assert lm.closed == 1  # opened for the call, closed after it
    assert spec == "openai:m@http://127.0.0.1:9/v1" and kwargs["api_key"] == "k"
    assert kwargs["cache_path"].name == "c.sqlite" and "~" not in str(kwargs["cache_path"])
    assert kwargs["max_concurrent"] == 1


def test_sync_calls_are_refused_inside_a_running_loop_and_the_async_forms_work_there():
    lm = ScriptedLM(lambda req: "The answer is: 9")

    async def inside():
        with pytest.raises(RuntimeError, match=r"await thoughtloom\.asolve"):
            thoughtloom.solve("cot", "q", task="gsm8k", model=lm)
        with pytest.raises(RuntimeError, match=r"await thoughtloom\.aevaluate"):
            thoughtloom.evaluate("cot", "gsm8k", model=lm)
        return await thoughtloom.asolve("cot", "q", task="gsm8k", model=lm)

    assert asyncio.run(inside()).answer == "9"


def test_evaluate_without_data_runs_the_packaged_sample(tmp_path):
    lm = ScriptedLM(lambda req: "The answer is: 18")
    seen = []

    class Recorder:
        def start(self, stats):
            seen.append(("start", stats.total))

        def update(self, record, stats):
            seen.append(("update", record["id"]))

    out = tmp_path / "run"
    summary = thoughtloom.evaluate("cot-sc", "gsm8k", model=lm, limit=4, out=out, n=2, progress=Recorder())
    assert summary["data_sample"] is True and summary["data"] == str(sample_path("gsm8k"))
    assert summary["n"] == 4 and summary["strategy_config"]["n"] == 2 and summary["model"] == "scripted"
    assert summary["usage"]["calls"] == 8 and summary["metrics"]["accuracy"] == 0.25  # gsm8k-0's answer is 18
    assert seen[0] == ("start", 4) and [s for s in seen if s[0] == "update"][-1] == ("update", "gsm8k-3")
    assert json.loads((out / "summary.json").read_text())["n"] == 4
    assert len((out / "results.jsonl").read_text().splitlines()) == 4


def test_evaluate_reads_a_data_file_and_resumes(tmp_path):
    data = tmp_path / "mine.jsonl"
    data.write_text("".join(json.dumps({"question": f"{i} + {i}?", "answer": f"#### {2 * i}"}) + "\n"
                            for i in range(3)))
    lm = ScriptedLM(lambda req: "The answer is: 2")
    summary = asyncio.run(thoughtloom.aevaluate("cot", "gsm8k", data, model=lm, out=tmp_path / "o", offset=1))
    assert summary["data_sample"] is False and summary["n"] == 2 and summary["metrics"]["accuracy"] == 0.5
    calls = len(lm.requests)
    again = thoughtloom.evaluate("cot", "gsm8k", data, model=lm, out=tmp_path / "o", offset=1)
    assert again["n"] == 2 and len(lm.requests) == calls  # resumed: nothing left to run


def test_evaluate_refuses_a_resume_with_another_config_unless_forced(tmp_path):
    from thoughtloom.eval.identity import ConfigMismatch

    lm = ScriptedLM(lambda req: "The answer is: 2")
    thoughtloom.evaluate("cot-sc", "gsm8k", model=lm, limit=1, out=tmp_path / "o", n=2, command="notebook: trial 1")
    assert json.loads((tmp_path / "o" / "run.json").read_text())["command"] == "notebook: trial 1"
    with pytest.raises(ConfigMismatch, match=r"was made with n=2, this run asks for n=3 \(pass force=True"):
        thoughtloom.evaluate("cot-sc", "gsm8k", model=lm, limit=2, out=tmp_path / "o", n=3)
    summary = thoughtloom.evaluate("cot-sc", "gsm8k", model=lm, limit=2, out=tmp_path / "o", n=3, force=True)
    assert summary["n"] == 2 and summary["identity"]["forced"][0]["differences"][0]["key"] == "options.n"


def test_import_thoughtloom_stays_light():
    heavy = ("llama_cpp", "httpx", "rich", "typer", "torch", "numpy", "thoughtloom.api", "thoughtloom.eval")
    code = ("import sys, thoughtloom\n"
            f"print([m for m in {heavy!r} if m in sys.modules])\n"
            "thoughtloom.solve\n"  # the API module loads on first use, and no model runtime with it
            "print([m for m in ('llama_cpp', 'httpx', 'rich', 'typer', 'torch') if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "[]"]


def test_api_and_cli_give_a_model_the_same_requests_at_once():
    from thoughtloom.lm import requests_at_once

    assert requests_at_once("openai:m@http://127.0.0.1:1/v1", 3) == 3
    assert requests_at_once("litellm:anthropic/claude", 3) == 3  # the API used to give litellm 64
    assert requests_at_once("openai:m", 0) == 1
    assert requests_at_once("embedded", 3) == 64


def test_evaluate_keeps_its_results_in_memory_and_can_be_called_twice(tmp_path, monkeypatch):
    """Issue 39 §5: evaluate() wrote to runs/qa_cot, so a notebook cell's second run with other examples
    raised ConfigMismatch. Without out= nothing is written and each call is a fresh run with its records."""
    monkeypatch.chdir(tmp_path)
    lm = ScriptedLM(lambda req: "The answer is: Paris" if "France" in req.prompt_text() else "The answer is: 4")
    first = thoughtloom.evaluate("cot", examples=[("What is the capital of France?", "Paris")], model=lm)
    second = thoughtloom.evaluate("cot", examples=[("What is 2 + 2?", "4"), ("What is 2 + 3?", "5")],
                                  metric="numeric", model=lm)
    assert list(tmp_path.iterdir()) == []  # no runs/ folder
    assert first["metrics"] == {"em": 1.0, "f1": 1.0} and first.out is None
    assert second.metrics == {"numeric": 0.5} and second.summary["n"] == 2
    assert [(r.id, r.prediction, r.metrics) for r in second.records] == [
        ("qa-1", "4", {"numeric": 1.0}), ("qa-2", "4", {"numeric": 0.0})]
    kept = thoughtloom.evaluate("cot", examples=[("What is 2 + 2?", "4")], model=lm, out="o")
    assert str(kept.out) == "o" and (tmp_path / "o" / "results.jsonl").is_file()

"""The OpenAI-compatible backend against a real server on loopback."""

import json

import pytest
from typer.testing import CliRunner

from thoughtloom.cli.main import app
from thoughtloom.core import Request
from thoughtloom.lm import SyncLM, generate_json, open_lm

pytestmark = pytest.mark.integration


def test_generate_batch_and_logprobs(llama_server):
    with SyncLM(open_lm(f"openai:smol@{llama_server}")) as lm:
        outs = lm.generate([Request.of("What is the capital of France? Answer in one word.", max_tokens=8),
                            Request.of("Say yes.", max_tokens=3, logprobs=2)])
    assert "paris" in outs[0].text.lower()
    assert outs[0].usage.prompt_tokens > 0 and outs[0].model.startswith("openai:smol@")
    assert outs[1].logprobs and len(outs[1].logprobs[0].top) == 2


def test_structured_output_against_server(llama_server):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    lm = open_lm(f"openai:smol@{llama_server}")
    with SyncLM(lm) as s:
        [value] = s._runner.run(generate_json(lm, [Request.of("Give n=3 as JSON.", max_tokens=20)],
                                              schema=schema))
    assert isinstance(value["n"], int)


def test_eval_over_server_then_replay_makes_no_calls(llama_server, tmp_path):
    data = tmp_path / "mini.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {i} + {i}?", "answer": f"#### {2 * i}"}) + "\n"
                            for i in range(1, 4)))
    cache = tmp_path / "c.sqlite"
    args = ["eval", "--strategy", "cot-sc", "--task", "gsm8k", "--data", str(data), "--set", "n=2",
            "--set", "max_tokens=48", "--model", f"openai:smol@{llama_server}", "--cache", str(cache),
            "-c", "3"]
    runner = CliRunner()
    first = runner.invoke(app, args + ["--out", str(tmp_path / "a")])
    assert first.exit_code == 0, first.output
    s1 = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert s1["this_run"]["new_calls"] == 6 and s1["n"] == 3
    replay = runner.invoke(app, args + ["--out", str(tmp_path / "b"), "--replay"])
    assert replay.exit_code == 0, replay.output
    s2 = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert s2["this_run"]["calls"] == 6 and s2["this_run"]["new_calls"] == 0
    assert s2["metrics"] == s1["metrics"]

"""`thoughtloom eval --dry-run`: the pilot's estimate against the real run, on ScriptedLM."""

import hashlib
import json

import pytest
from typer.testing import CliRunner

from thoughtloom.eval import assembly
from thoughtloom.cli.main import app
from thoughtloom.testing import ScriptedLM

KEYS = ("calls", "prompt_tokens", "completion_tokens")


def scripted(salt):
    """Evaluator scores and feedback lengths vary with the prompt, so self-refine's calls (it stops at
    a 10/10 score) and tokens vary from question to question; ``salt`` makes another model."""
    def reply(request):
        h = int(hashlib.sha256(f"{salt}{request.prompt_text()}".encode()).hexdigest()[:8], 16)
        score = 10 if h % 3 == 0 else h % 10
        return f'{{"score": {score}, "feedback": "{"more " * (h % 13)}"}}\nThe answer is: {h % 7}'
    return reply


def estimate_then_run(tmp_path, monkeypatch, salt):
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": f"Tom has {i} pens{' and more' * (i % 5)}. How many?",
                                        "answer": f"#### {i}"}) + "\n" for i in range(40)))
    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: ScriptedLM(scripted(salt)))
    base = ["eval", "-S", "self-refine", "-t", "gsm8k", "-d", str(data), "--out", str(tmp_path / f"o{salt}"),
            "--no-cache"]
    r = CliRunner().invoke(app, base + ["--dry-run", "--pilot", "8", "--json"])
    assert r.exit_code == 0, r.output
    estimate = json.loads(r.stdout)
    r = CliRunner().invoke(app, base + ["--json"])
    assert r.exit_code == 0, r.output
    return estimate, json.loads(r.stdout)["this_run"]


def test_dry_run_estimate_brackets_the_real_run(tmp_path, monkeypatch):
    """Ten models: the 95% interval from an 8-example pilot holds the real cost of the other 32 in
    at least 8 of them, for calls and both token counts, and the point estimates are not biased."""
    covered = {key: 0 for key in KEYS}
    error = {key: 0.0 for key in KEYS}
    for salt in range(10):
        estimate, actual = estimate_then_run(tmp_path, monkeypatch, salt)
        assert estimate["examples_done"] == 8 and estimate["examples_remaining"] == 32
        assert actual["examples"] == 32  # the pilot's 8 were kept: the real run resumed past them
        for key in KEYS:
            low, mid, high = (estimate[key][k] for k in ("low", "estimate", "high"))
            assert low < mid < high  # calls and tokens really vary, so every interval has width
            covered[key] += low <= actual[key] <= high
            error[key] += (mid - actual[key]) / actual[key] / 10
        assert 0 <= estimate["seconds"]["low"] <= estimate["seconds"]["estimate"] <= estimate["seconds"]["high"]
    assert all(n >= 8 for n in covered.values()), covered
    assert all(abs(e) < 0.1 for e in error.values()), error


def test_dry_run_prints_money_when_given_prices(tmp_path, monkeypatch):
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": f"#### {i}"}) + "\n" for i in range(10)))
    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: ScriptedLM(lambda req: "The answer is: 3"))
    r = CliRunner().invoke(app, ["eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "--out", str(tmp_path / "o"),
                                 "--no-cache", "--dry-run", "--price-in", "2.5", "--price-out", "10"])
    assert r.exit_code == 0, r.output
    assert "still to run: 7 examples" in r.stdout and "money" in r.stdout and "$2.5 / $10 per million" in r.stdout


def _eval(*args):
    import os
    import subprocess
    import sys

    from conftest import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "thoughtloom", "eval", "-S", "cot-sc", "--set", "n=2", *args],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.integration  # the loopback fake server (rule 11)
def test_a_pilot_answered_from_the_cache_is_estimated_from_the_stored_model_time(tmp_path):
    """Issue 26: after an earlier eval the pilot's calls are cache hits (0 s each); the estimate
    adds back the model time stored with each entry, and says how much of the pilot that was."""
    from thoughtloom.testing.fake_server import FakeOpenAIServer

    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": f"#### {i}"}) + "\n" for i in range(8)))
    cache = tmp_path / "c.sqlite"
    with FakeOpenAIServer(lambda p: "The answer is: 3", latency_s=0.1) as server:
        common = ["-t", "gsm8k", "-d", str(data), "--model", f"openai:m@{server.base_url}", "--cache", str(cache)]
        assert _eval(*common, "--limit", "3", "--out", str(tmp_path / "first")).returncode == 0
        r = _eval(*common, "--out", str(tmp_path / "second"), "--dry-run", "--json")
        assert r.returncode == 0, r.stderr
        estimate = json.loads(r.stdout)
        text = _eval(*common, "--out", str(tmp_path / "third"), "--dry-run").stdout
    assert estimate["cached"]["calls"] == estimate["cached"]["of"] == 6  # 3 examples x 2 samples, all hits
    assert estimate["cached"]["model_s"] >= 0.6  # 6 calls of 0.1 s stored
    # 5 examples to run, each about 0.1 s of wall time (the 2 samples go out together), far from 0
    assert estimate["seconds"]["estimate"] >= 0.3
    assert "6 of the 6 calls done came from the cache" in text


def test_fewer_than_three_examples_give_no_interval_and_say_why(tmp_path, monkeypatch):
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": f"Q{i}?", "answer": f"#### {i}"}) + "\n" for i in range(6)))
    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: ScriptedLM(lambda req: "The answer is: 3"))
    base = ["eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "--no-cache", "--dry-run", "--pilot", "1"]
    r = CliRunner().invoke(app, base + ["--out", str(tmp_path / "o"), "--json"])
    estimate = json.loads(r.stdout)
    assert estimate["calls"] == {"estimate": 5.0, "low": None, "high": None}
    r = CliRunner().invoke(app, base + ["--out", str(tmp_path / "p"), "--price-in", "2.5"])
    assert "LLM calls          5  (no interval)" in r.stdout
    assert "money" in r.stdout and "(no interval) at $2.5" in r.stdout and "nan" not in r.stdout
    assert "no interval: fewer than 3 examples" in r.stdout and "--pilot N" in r.stdout


def test_an_estimate_shows_the_cent_fraction_that_matters_and_a_floor_above_zero(tmp_path, monkeypatch):
    """Issue 39 §9: a run costing about $0.0018 was estimated `money $0.00 [$0.00 – $0.00]`, with lower
    bounds of 0 completion tokens and 0 s while every example still to run makes a call."""
    import re

    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": f"Q{i}?{' more' * i}", "answer": f"#### {i}"}) + "\n"
                            for i in range(10)))
    monkeypatch.setattr(assembly, "open_model", lambda *a, **k: ScriptedLM(
        lambda req: "The answer is: 3" + " yes" * (len(req.prompt_text()) % 7)))
    args = ["eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "--out", str(tmp_path / "o"), "--no-cache",
            "--dry-run", "--price-in", "2.5", "--price-out", "10"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    money = next(line for line in r.stdout.splitlines() if line.strip().startswith("money"))
    assert re.match(r"\s+money\s+\$0\.00[1-9]\d?\s+\[\$0\.00[1-9]\d? – \$0\.00[1-9]\d?\]", money), money
    estimate = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    assert estimate["examples_remaining"] == 7
    for key in ("calls", "prompt_tokens", "completion_tokens"):
        assert estimate[key]["low"] >= 7 if key == "calls" else estimate[key]["low"] > 0, (key, estimate[key])
    assert 0 < estimate["cost_usd"]["low"] <= estimate["cost_usd"]["estimate"] < 0.01

"""`thoughtloom eval --executor ray` against a fake OpenAI-compatible server on loopback: the same results
as the local executor, and a driver killed mid-run resumes with no lost and no duplicated record."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from thoughtloom.testing.fake_server import FakeOpenAIServer
from support.toy_suite import SUITE

N = 16
#: Questions from here on wait for the gate: the driver is killed while they are in flight.
GATED_FROM = 6


def data(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"question": f"What is {i} plus 1?", "answer": f"#### {i + 1}"}) + "\n"
                            for i in range(N)))
    return path


def eval_cmd(data_path, server, out, *extra):
    return [sys.executable, "-m", "thoughtloom", "eval", "-S", "cot", "-t", "gsm8k", "-d", str(data_path),
            "--model", f"openai:m@{server.base_url}", "--no-cache", "-c", "2", "--out", str(out), *extra]


def answers(out):
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return sorted((r["id"], r["prediction"], r["metrics"], r["error"]) for r in records)


@pytest.mark.integration
def test_ray_eval_matches_local_and_resumes_after_the_driver_is_killed(tmp_path, ray_cluster):
    gate = threading.Event()

    def reply(prompt):
        i = int(prompt.rsplit("Question: What is ", 1)[1].split()[0])
        if i >= GATED_FROM:
            gate.wait(120)
        return f"The answer is: {i + 1 if i % 2 == 0 else i}"

    path = data(tmp_path)
    with FakeOpenAIServer(reply) as server:
        cmd = eval_cmd(path, server, tmp_path / "ray", "--executor", "ray", "--ray-address", ray_cluster,
                       "--workers", "2")
        env = {**os.environ, "OPENAI_API_KEY": "sk-driver"}  # the cluster was started without it
        driver = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        results = tmp_path / "ray" / "results.jsonl"
        deadline = time.monotonic() + 120
        while driver.poll() is None and time.monotonic() < deadline:
            if results.exists() and len(results.read_text().splitlines()) >= GATED_FROM:
                break
            time.sleep(0.05)
        time.sleep(0.3)  # the gated examples are in flight on the workers
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        assert server.authorization == "Bearer sk-driver"  # the driver's key reached the workers
        before = [json.loads(line)["id"] for line in results.read_text().splitlines()]
        assert sorted(before) == sorted(f"gsm8k-{i}" for i in range(GATED_FROM))  # killed mid-run, not after
        gate.set()
        rerun = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        assert rerun.returncode == 0, rerun.stderr
        local = subprocess.run(eval_cmd(path, server, tmp_path / "local"), capture_output=True, text=True,
                               timeout=300)
        assert local.returncode == 0, local.stderr
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert len(ids) == N and len(set(ids)) == N
    assert answers(tmp_path / "ray") == answers(tmp_path / "local")
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert summary["complete"] and summary["this_run"]["examples"] == N - GATED_FROM
    assert summary["executor"] == "ray" and summary["model"] == f"openai:m@{server.base_url}"


def test_ray_executor_without_ray_is_one_line_naming_the_extra(tmp_path):
    code = ("import sys; sys.modules['ray'] = None\n"  # as if Ray were not installed
            "from thoughtloom.cli.main import main; main()")
    cmd = [sys.executable, "-c", code, "eval", "-S", "cot", "-t", "gsm8k", "-d", str(data(tmp_path)),
           "--executor", "ray", "--out", str(tmp_path / "o")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == 'error: --executor ray needs Ray, which is not installed (pip install "thoughtloom[ray]")'
    assert not (tmp_path / "o").exists()


def test_import_thoughtloom_and_its_cli_never_import_ray():
    code = ("import sys, thoughtloom, thoughtloom.eval, thoughtloom.cli.main, thoughtloom.eval.ray_executor\n"
            "print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_bad_executor_flags_are_one_line(tmp_path):
    base = [sys.executable, "-m", "thoughtloom", "eval", "-S", "cot", "-t", "gsm8k", "-d", str(data(tmp_path))]
    r = subprocess.run([*base, "--executor", "dask"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "unknown --executor 'dask'" in r.stderr and "local, ray" in r.stderr
    r = subprocess.run([*base, "--ray-address", "auto"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--ray-address needs --executor ray" in r.stderr


@pytest.mark.integration
def test_an_unreachable_ray_address_is_one_line(tmp_path):
    with FakeOpenAIServer(str) as server:
        cmd = eval_cmd(data(tmp_path), server, tmp_path / "o", "--executor", "ray", "--ray-address", "127.0.0.1:9")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "RAY_ADDRESS": ""})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "error: cannot join the Ray cluster at 127.0.0.1:9" in r.stderr


@pytest.mark.integration
def test_ray_reproduce_runs_every_cell_on_the_workers_with_the_records_of_a_local_run(tmp_path, ray_cluster):
    def reply(prompt):
        i = int(prompt.rsplit("Question: What is ", 1)[1].split()[0])
        return f"The answer is: {i + 1}" if "step by step" in prompt or i % 2 == 0 else str(i)

    data(tmp_path).rename(tmp_path / "baskets.jsonl")
    (tmp_path / "toy.toml").write_text(SUITE)
    with FakeOpenAIServer(reply) as server:
        def reproduce(out, *extra):
            cmd = [sys.executable, "-m", "thoughtloom", "reproduce", str(tmp_path / "toy.toml"), "--n", "8",
                   "--data-root", str(tmp_path), "--model", f"openai:m@{server.base_url}", "--no-cache", "-c", "2",
                   "--out", str(out), *extra]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                               env={**os.environ, "OPENAI_API_KEY": "sk-driver"})
            assert r.returncode == 0, r.stderr
            return r.stdout

        shown = reproduce(tmp_path / "ray", "--executor", "ray", "--ray-address", ray_cluster, "--workers", "2")
        calls_on_ray = server.calls
        reproduce(tmp_path / "local")
    assert calls_on_ray == 8 + 8  # every example of both cells, once
    # CoT right on all 8, IO on every other one: 4 discordant pairs, McNemar's p is at least 2 * (1/2)^4
    assert "card:" in shown and "claims: 2 inconclusive" in shown
    for cell in ("baskets/cot", "baskets/io"):
        assert answers(tmp_path / "ray" / cell) == answers(tmp_path / "local" / cell)
        summary = json.loads((tmp_path / "ray" / cell / "summary.json").read_text())
        assert summary["executor"] == "ray" and summary["model"] == f"openai:m@{server.base_url}"
    card = (tmp_path / "ray" / "card.md").read_text()
    assert "| CoT | cot |" in card and "100.0 [100.0, 100.0] | 8 |" in card
    sitting = json.loads((tmp_path / "ray" / "reproduce.json").read_text())["sittings"][-1]
    assert sitting["executor"] == "ray" and sitting["model"] == f"openai:m@{server.base_url}"

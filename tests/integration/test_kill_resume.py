"""kill -9 an eval mid-run, rerun the same command: exactly N unique results."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.integration


def start_eval(tmp_path, n):
    data = tmp_path / "mini.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {i} times 3?", "answer": f"#### {3 * i}"}) + "\n"
                            for i in range(n)))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "thoughtloom", "eval", "--strategy", "cot", "--task", "gsm8k",
           "--data", str(data), "--out", str(out), "--no-cache", "--set", "max_tokens=96"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, cmd, env, out


def wait_for_results(proc, results, at_least):
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and len(results.read_text().splitlines()) >= at_least:
            return
        time.sleep(0.05)


def test_kill_and_resume(tmp_path):
    n = 6
    proc, cmd, env, out = start_eval(tmp_path, n)
    results = out / "results.jsonl"
    wait_for_results(proc, results, 2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = len(results.read_text().splitlines())
    assert 2 <= done_before  # it really ran before being killed
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert len(ids) == n and len(set(ids)) == n
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["this_run"]["examples"] == n - done_before


def test_ctrl_c_saves_progress_and_exits_cleanly(tmp_path):
    proc, cmd, env, out = start_eval(tmp_path, 5)
    wait_for_results(proc, out / "results.jsonl", 1)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "run the same command again to resume" in stderr
    assert "Traceback" not in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] >= 1 and summary["complete"] is False

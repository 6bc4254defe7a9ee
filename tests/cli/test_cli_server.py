"""The CLI against a fake OpenAI-compatible server on loopback: hostile replies, slow calls, two runs at once."""

import json
import subprocess
import sys
import threading
import time

import pytest

from thoughtloom.testing.fake_server import FakeOpenAIServer

GOOD = "".join(json.dumps({"question": f"What is {i} plus 1?", "answer": f"#### {i + 1}"}) + "\n" for i in range(6))


class FakeServer:
    """Replies per question (text, or raw bytes for the whole body); ``delay_s`` slows every reply."""

    def __init__(self):
        self.delay_s = 0.0
        self.gate = threading.Event()  # replies wait until it is set
        self.gate.set()
        self.replies = {}  # substring of the question -> reply
        self.default = "The answer is: 1"

    def reply(self, question):
        self.gate.wait(60)
        time.sleep(self.delay_s)
        for key, body in self.replies.items():
            if key in question:
                return body
        return self.default


@pytest.fixture
def server():
    fake = FakeServer()
    with FakeOpenAIServer(fake.reply) as http:
        fake.http = http
        fake.model = f"openai:m@{http.base_url}"
        yield fake


def cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "thoughtloom", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def test_two_concurrent_evals_on_one_out_cannot_both_write(tmp_path, server):
    data = tmp_path / "d.jsonl"
    data.write_text(GOOD)
    out = tmp_path / "o"
    server.gate.clear()  # the first run's first call waits until the second run is done
    args = ["eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "--out", str(out), "--model", server.model,
            "--no-cache"]
    first = cli(*args)
    deadline = time.monotonic() + 60
    while server.http.calls == 0 and time.monotonic() < deadline:  # the first run is writing
        time.sleep(0.05)
    second = finish(cli(*args))
    server.gate.set()
    assert finish(first)[0] == 0
    code, _, err = second
    assert code == 2 and err.count("\n") == 1 and "is in use by another run (pid" in err, err
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 6 and len({json.loads(line)["id"] for line in lines}) == 6
    assert json.loads((out / "summary.json").read_text())["complete"] is True


def test_eval_with_hostile_and_malformed_replies_finishes_with_one_record_each(tmp_path, server):
    data = tmp_path / "d.jsonl"
    data.write_text(GOOD)
    server.replies = {
        "What is 0 plus": json.dumps({"choices": [None]}).encode(),
        "What is 1 plus": b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}}',
        "What is 2 plus": b"<html>502 bad gateway</html>",
        "What is 3 plus": json.dumps({"choices": [{"message": {"content": "The answer is: 4 \ud83d [/bold]"}}]}).encode(),
        "What is 4 plus": json.dumps({"choices": [{"message": {"content": "The answer is: 1" + "0" * 5000}}]}).encode(),
    }
    out = tmp_path / "o"
    code, stdout, err = finish(cli("eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "--out", str(out),
                                   "--model", server.model, "--cache", str(tmp_path / "c.sqlite")))
    assert code == 0, err
    assert "Traceback" not in err
    records = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert len(records) == 6
    for bad in ("gsm8k-0", "gsm8k-1", "gsm8k-2"):
        assert records[bad]["error"].startswith("MalformedReply"), records[bad]
    assert records["gsm8k-3"]["error"] is None and records["gsm8k-5"]["error"] is None
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["n"] == 6


def test_timeout_and_example_deadline_are_per_example_errors(tmp_path, server):
    data = tmp_path / "d.jsonl"
    data.write_text(GOOD.splitlines(keepends=True)[0])
    server.delay_s = 3.0
    out = tmp_path / "o"
    t0 = time.monotonic()
    code, _, err = finish(cli("eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "--out", str(out),
                              "--model", server.model, "--no-cache", "--timeout", "0.2", "--example-timeout", "1.5"))
    assert code == 0, err
    assert time.monotonic() - t0 < 30
    [record] = map(json.loads, (out / "results.jsonl").read_text().splitlines())
    assert record["error"].startswith(("ExampleTimeout", "CallTimeout")), record
    summary = json.loads((out / "summary.json").read_text())
    assert summary["timeout_s"] == 0.2 and summary["example_timeout_s"] == 1.5 and summary["complete"]


def test_run_prints_hostile_answer_safely(tmp_path, server):
    server.default = "The answer is: [/bold] \ud83d [red]x"
    code, out, err = finish(cli("run", "cot", "q", "--model", server.model, "--no-cache",
                                "--trace", str(tmp_path / "t.jsonl")))
    assert code == 0, err
    assert "[/bold] \ufffd [red]x" in out
    assert "\ufffd" in (tmp_path / "t.jsonl").read_text(encoding="utf-8")


def test_run_with_a_malformed_reply_is_one_error_line_and_keeps_its_trace(tmp_path, server):
    server.replies = {"": b"<html>502 bad gateway</html>"}
    trace = tmp_path / "t.jsonl"
    code, out, err = finish(cli("run", "cot", "q", "--model", server.model, "--no-cache", "--trace", str(trace)))
    assert code == 1 and out == "", (out, err)
    assert "error: MalformedReply: malformed reply from" in err and "Traceback" not in err
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[-1]["type"] == "error" and events[-1]["error"].startswith("MalformedReply")

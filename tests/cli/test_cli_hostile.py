"""The CLI against hostile input (issue 40): a password in the model URL is never written, and
terminal escapes in replies and passages never reach the terminal."""

import base64
import json
import os
import subprocess
import sys

import pytest

from thoughtloom.testing.fake_server import FakeOpenAIServer

SECRET = "S3cr3tPa55"
QUESTIONS = "".join(json.dumps({"question": f"What is {i} plus 1?", "answer": f"#### {i + 1}"}) + "\n"
                    for i in range(4))


def cli(*args, env=None, timeout=180):
    r = subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, timeout=timeout,
                       env={**os.environ, **(env or {})})
    return r.returncode, r.stdout, r.stderr


def _without_keys():
    env = {k: v for k, v in os.environ.items() if k not in ("THOUGHTLOOM_API_KEY", "OPENAI_API_KEY")}
    return env


@pytest.mark.integration  # the loopback fake server (rule 11)
def test_a_password_in_the_model_url_is_sent_as_basic_auth_and_written_nowhere(tmp_path):
    """Issue 40: SECRET went into run.json, summary.json, trace.jsonl, the cache's model id,
    report.html, compare.html and stderr, and the server got Basic auth instead of the Bearer key."""
    data = tmp_path / "q.jsonl"
    data.write_text(QUESTIONS)
    with FakeOpenAIServer(lambda prompt: "The answer is: 1") as server:
        port = server.base_url.split(":")[2].split("/")[0]
        model = f"openai:fake@http://user:{SECRET}@127.0.0.1:{port}/v1"
        streams = []
        for out in ("a", "b"):
            rc, stdout, stderr = cli("eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "--out", str(tmp_path / out),
                                     "--model", model, "--cache", str(tmp_path / "cache.sqlite"),
                                     *(["--refresh"] if out == "b" else []), env=_without_keys())
            assert rc == 0, stderr
            streams += [stdout, stderr]
        assert server.authorization == "Basic " + base64.b64encode(f"user:{SECRET}".encode()).decode()
        rc, stdout, stderr = cli("run", "cot", "What is 1 plus 1?", "--model", model, "--no-cache", "-v",
                                 "--trace", str(tmp_path / "run-trace.jsonl"), env=_without_keys())
        assert rc == 0, stderr
        streams += [stdout, stderr]
        rc, stdout, stderr = cli("view", str(tmp_path / "a"), str(tmp_path / "b"), "--compare",
                                 str(tmp_path / "compare.html"))
        assert rc == 0, stderr
        streams += [stdout, stderr]
        key = {**os.environ, "THOUGHTLOOM_API_KEY": "k"}  # two credentials: one line, still no secret
        rc, stdout, stderr = cli("run", "cot", "q", "--model", model, "--no-cache", env=key)
        assert rc == 2 and b"two credentials" in stderr, stderr
        streams += [stdout, stderr]
    rc, stdout, stderr = cli("run", "cot", "q", "--model", f"openai:fake@http://u:{SECRET}@127.0.0.1:9/v1",
                             "--no-cache", env=_without_keys())  # nothing listens: the error names the URL
    assert rc == 2 and b"cannot reach http://127.0.0.1:9/v1" in stderr, stderr
    streams += [stdout, stderr]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"run.json", "summary.json", "trace.jsonl", "results.jsonl", "report.html", "compare.html",
            "cache.sqlite", "run-trace.jsonl"} <= {p.name for p in files}
    leaked = [str(p) for p in files if SECRET.encode() in p.read_bytes()]
    leaked += [f"stream {i}" for i, s in enumerate(streams) if SECRET.encode() in s]
    assert not leaked, leaked
    assert b"http://***@127.0.0.1" in (tmp_path / "a" / "run.json").read_bytes()  # the command, redacted


HOSTILE = "The answer is: 1 \x1b[2J\x1b]0;pwned\x07 tail\x00end\x9b31m"


@pytest.mark.integration
def test_escapes_in_a_reply_are_printed_as_text_by_run(tmp_path):
    """Issue 40: a reply holding ESC[2J, ESC]0;title BEL and NUL was printed raw by `run`."""
    with FakeOpenAIServer(lambda prompt: HOSTILE) as server:
        rc, stdout, stderr = cli("run", "cot", "What is 0 plus 1?", "--model", f"openai:m@{server.base_url}",
                                 "--no-cache")
    assert rc == 0, stderr
    for raw in (b"\x1b", b"\x07", b"\x00", "\x9b".encode()):
        assert raw not in stdout and raw not in stderr, (raw, stdout)
    assert b"\\x1b[2J" in stdout and b"\\x00end" in stdout


def test_escapes_in_passages_are_printed_as_text_by_index_search(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "p1", "title": "Evil\x1b]0;t\x07", "text": "llamas \x1b[2J live\x00 here"})
                      + "\n" + json.dumps({"id": "p2", "text": "camels too"}) + "\n")
    rc, _, stderr = cli("index", "build", "--corpus", str(corpus), "--out", str(tmp_path / "idx"))
    assert rc == 0, stderr
    rc, stdout, stderr = cli("index", "search", str(tmp_path / "idx"), "llamas")
    assert rc == 0, stderr
    assert b"\x1b" not in stdout and b"\x00" not in stdout and b"\x07" not in stdout
    assert b"\\x1b[2J" in stdout


@pytest.fixture
def tiny_disk(tmp_path):
    """A 120 KB tmpfs (where this runs as root and may mount; skipped elsewhere)."""
    where = tmp_path / "tiny"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=120k", "tmpfs", str(where)],
                                           capture_output=True).returncode:
        pytest.skip("needs root to mount a tiny tmpfs (the cache's unit test makes SQLITE_FULL without it)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.mark.integration
def test_a_full_cache_disk_keeps_every_example_and_counts_every_call(tmp_path, tiny_disk):
    """Issue 40: with the cache on a 120 KB tmpfs 392 of 400 records failed with `cannot rollback`,
    the eval exited 0, and the failed records said `calls: 0` though the server answered them."""
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {i} plus 1? " + "pad " * 50, "answer": f"#### {i + 1}"})
                            + "\n" for i in range(120)))
    with FakeOpenAIServer(lambda prompt: "The answer is: 1 " + "x" * 2000) as server:
        rc, _, stderr = cli("eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "--out", str(tmp_path / "o"),
                            "--model", f"openai:m@{server.base_url}", "--cache", str(tiny_disk / "c.sqlite"))
        answered = server.calls
    assert rc == 0, stderr
    warnings = [line for line in stderr.decode().splitlines() if "cache" in line]
    assert len(warnings) == 1 and "database or disk is full" in warnings[0] and str(tiny_disk) in warnings[0]
    records = [json.loads(line) for line in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 120 and not any(r["error"] for r in records)
    assert sum(r["usage"]["calls"] for r in records) == answered == 120


def test_index_build_and_view_on_a_full_disk_name_the_path(tmp_path, tiny_disk):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(i), "text": f"passage {i} " + "word " * 300}) + "\n"
                              for i in range(200)))
    rc, _, stderr = cli("index", "build", "--corpus", str(corpus), "--out", str(tiny_disk / "idx"))
    assert rc == 2 and f"no space left on device writing the index {tiny_disk / 'idx'}".encode() in stderr, stderr
    assert list(tiny_disk.iterdir()) == []  # no half index, nothing beside it
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "input": "x" * 2000, "metrics": {"em": 1.0}})
                                               + "\n" for i in range(100)))
    rc, _, stderr = cli("view", str(run), "--out", str(tiny_disk / "report.html"))
    assert rc == 2 and f"no space left on device writing {tiny_disk / 'report.html'}".encode() in stderr, stderr

"""A dead server costs one line: the `error:` (issue 26), from the CLI and from Python."""

import json
import socket
import subprocess
import sys

import pytest

import thoughtloom
from thoughtloom.core.errors import TransientError


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def stderr_lines(*args: str) -> tuple[int, list[str]]:
    r = subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stderr.splitlines()


@pytest.mark.parametrize("command", ["run", "eval"])
def test_a_dead_server_is_one_line_on_stderr(tmp_path, command):
    model = f"openai:m@http://127.0.0.1:{closed_port()}/v1"
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps({"question": f"What is {i} plus 1?", "answer": f"#### {i + 1}"}) + "\n"
                            for i in range(4)))
    args = (["run", "cot", "What is 1 plus 1?"] if command == "run" else
            ["eval", "-S", "cot", "-t", "gsm8k", "-d", str(data), "-c", "4", "--out", str(tmp_path / "o")])
    rc, lines = stderr_lines(*args, "--model", model, "--no-cache")
    assert rc == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: cannot reach") and "is the server running?" in lines[0]


def test_a_dead_server_from_python_prints_nothing_and_raises_one_line(capfd, tmp_path):
    model = f"openai:m@http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(TransientError) as info:
        thoughtloom.solve("cot", "What is 1 plus 1?", model=model)
    with pytest.raises(TransientError):
        thoughtloom.evaluate("cot", "gsm8k", model=model, limit=2, out=tmp_path / "o")
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""  # retries are logged at INFO, not as warnings
    assert "\n" not in str(info.value) and "cannot reach" in str(info.value)

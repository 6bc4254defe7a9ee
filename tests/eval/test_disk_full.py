"""A full disk: the error names the folder and what to do, no temporary file is left, and the same run resumes."""

import errno
import json
import os

import pytest

from thoughtloom import strategies, tasks
from thoughtloom.core import Problem
from thoughtloom.eval import EvalResources, evaluate
from thoughtloom.eval import results as results_module
from thoughtloom.eval.results import DiskFull, atomic_write
from thoughtloom.tasks import Example
from thoughtloom.testing import ScriptedLM


def examples(n):
    return [Example(Problem(f"q{i}", f"What is {i} plus 1?"), str(i + 1)) for i in range(n)]


def full_after(monkeypatch, syncs):
    """os.fsync in the results module fails with ENOSPC after ``syncs`` calls, as on a full disk."""
    real, count = os.fsync, {"n": 0}

    def fsync(fd):
        count["n"] += 1
        if count["n"] > syncs:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(results_module.os, "fsync", fsync)


def test_a_failed_atomic_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    full_after(monkeypatch, 0)
    with pytest.raises(OSError):
        atomic_write(tmp_path / "run.json", "{}")
    assert list(tmp_path.iterdir()) == []


async def test_disk_full_mid_eval_names_the_folder_keeps_records_and_resumes(tmp_path, monkeypatch):
    out = tmp_path / "out"
    cot, gsm8k = strategies.get("cot")(), tasks.get("gsm8k")
    full_after(monkeypatch, 8)
    with pytest.raises(DiskFull) as info:
        await evaluate(cot, gsm8k, examples(20), EvalResources(ScriptedLM([], default="The answer is: 1")), out)
    message = str(info.value)
    assert f"writing {out}" in message and f"free space in {out} or choose another --out" in message
    assert "finished records are kept and the same command resumes" in message and "\n" not in message
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]  # no .run.json.<pid>.tmp left
    kept = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.endswith("}")]
    assert 0 < len(kept) < 20
    monkeypatch.undo()  # space freed
    summary = await evaluate(cot, gsm8k, examples(20), EvalResources(ScriptedLM([], default="The answer is: 1")), out)
    assert summary["complete"] and summary["n"] == 20 and summary["this_run"]["examples"] == 20 - len(kept)


def test_cli_says_it_in_one_line_with_exit_1(tmp_path, monkeypatch, capsys):
    from thoughtloom.cli import main as cli
    from thoughtloom.eval import assembly

    async def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(assembly, "evaluate", no_space)  # the runner, as the one run assembly calls it
    monkeypatch.setattr("sys.argv", ["thoughtloom", "eval", "-S", "io", "-t", "gsm8k", "--limit", "1", "--no-cache", "-q",
                                     "--model", "openai:m@http://127.0.0.1:9/v1", "--out", str(tmp_path / "o")])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    err = capsys.readouterr().err
    assert exit_info.value.code == 1 and err.count("\n") == 1
    assert err.startswith(f"error: no space left on device writing {tmp_path / 'o'}")

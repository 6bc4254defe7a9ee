"""``eval --out`` on a folder made with another config is refused in one line; ``--force`` resumes
(issue 13 item 4)."""

import json
import subprocess
import sys

from conftest import data_file

# the DecomP controller check runs without any model call
CHECK = ["-S", "decomp", "-t", "letter_cat", "--set", "decomposer=reference", "--set", "handlers=symbolic",
         "--no-cache"]


def run_main(*args):
    return subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True, timeout=120)


def test_a_resume_with_another_config_is_refused_and_force_records_it(tmp_path):
    data = data_file("decomp_letter_cat", "n3_eg100_pos2_space.json")
    out = tmp_path / "o"
    first = run_main("eval", *CHECK, "-d", str(data), "--limit", "2", "--out", str(out))
    assert first.returncode == 0, first.stderr
    identity = json.loads((out / "run.json").read_text())
    assert identity["command"][1:] == ["eval", *CHECK, "-d", str(data), "--limit", "2", "--out", str(out)]
    assert identity["config"]["data"]["path"] == str(data) and identity["config"]["options"]["max_steps"] == 10
    assert json.loads((out / "summary.json").read_text())["identity"] == identity

    # a growing limit resumes
    grown = run_main("eval", *CHECK, "-d", str(data), "--limit", "3", "--out", str(out))
    assert grown.returncode == 0, grown.stderr

    refused = run_main("eval", *CHECK, "--set", "max_steps=5", "-d", str(data), "--limit", "4", "--out", str(out))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert refused.stderr.strip() == (f"error: {out} was made with max_steps=10, this run asks for max_steps=5 "
                                      "(pass --force to resume anyway, or choose another --out)")
    assert len((out / "results.jsonl").read_text().splitlines()) == 3

    forced = run_main("eval", *CHECK, "--set", "max_steps=5", "-d", str(data), "--limit", "4", "--out", str(out),
                      "--force")
    assert forced.returncode == 0, forced.stderr
    identity = json.loads((out / "run.json").read_text())
    assert "--force" in identity["command"] and identity["config"]["options"]["max_steps"] == 5
    assert identity["forced"][0]["differences"] == [{"key": "options.max_steps", "old": 10, "new": 5}]
    assert len((out / "results.jsonl").read_text().splitlines()) == 4

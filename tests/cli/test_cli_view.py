"""``thoughtloom view`` and ``thoughtloom compare`` on run folders."""

import json
import subprocess
import sys

from typer.testing import CliRunner

from thoughtloom.cli.main import app

from support import view_runs

runner = CliRunner()


def test_view_writes_the_report_beside_the_run(tmp_path):
    run = view_runs.sampling_run(tmp_path / "run", n_examples=2)
    r = runner.invoke(app, ["view", str(run)])
    assert r.exit_code == 0, r.output
    assert (run / "report.html").exists() and "report.html" in r.output and "file://" in r.output
    r = runner.invoke(app, ["view", str(run), "--out", str(tmp_path / "mail" / "r.html"), "--example", "gsm8k-1"])
    assert r.exit_code == 0 and "#example=gsm8k-1" in r.output
    assert 'data-open="gsm8k-1"' in (tmp_path / "mail" / "r.html").read_text()


def test_view_of_several_runs_links_each_to_their_comparison(tmp_path):
    a = view_runs.sampling_run(tmp_path / "a", strategy="cot", answers=("16",), n_examples=2)
    b = view_runs.sampling_run(tmp_path / "b", n_examples=2)
    r = runner.invoke(app, ["view", str(a), str(b)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "compare.html").exists()
    assert 'href="../compare.html"' in (a / "report.html").read_text()
    assert 'href="b/report.html"' in (tmp_path / "compare.html").read_text()


def test_compare_prints_intervals_and_the_paired_difference(tmp_path):
    a = view_runs.sampling_run(tmp_path / "cot", strategy="cot", answers=("16",))
    b = view_runs.sampling_run(tmp_path / "sc")
    r = runner.invoke(app, ["compare", str(a), str(b), "--html", str(tmp_path / "c.html")])
    assert r.exit_code == 0, r.output
    assert "accuracy 0.000 [0.000, 0.000]" in r.output and "accuracy 1.000 [1.000, 1.000]" in r.output
    # B right and A wrong on all 4: exact McNemar p = 2 * (1/2)^4, the smallest n = 4 allows (Newcombe's interval)
    assert ("B − A on 4 shared examples: accuracy +1.000 [+0.307, +1.000] (p = 0.125, inconclusive: n = 4: the "
            "smallest p-value possible is 0.125)") in r.output
    assert (tmp_path / "c.html").exists()
    r = runner.invoke(app, ["compare", str(a), str(b), "--json"])
    result = json.loads(r.output)
    assert set(result) >= {"runs", "pairs"}
    assert set(result["runs"][1]["metrics"]["accuracy"]) >= {"mean", "ci_low", "ci_high", "n"}


def test_compare_at_call_budgets_prints_each_run_and_the_paired_differences(tmp_path):
    a = view_runs.with_anytime(view_runs.sampling_run(tmp_path / "cot", strategy="cot", answers=("16",)),
                               lambda r: [])
    b = view_runs.with_anytime(view_runs.sampling_run(tmp_path / "sc"), lambda r: [(1, 30, 1.0), (2, 60, 0.0)])
    r = runner.invoke(app, ["compare", str(a), str(b), "--at-calls", "2,1", "--at-tokens", "45"])
    assert r.exit_code == 0, r.output
    lines = r.output[r.output.index("at 1 call"):].splitlines()
    assert lines[:8] == ["at 1 call", "   A accuracy 0.000 [0.000, 0.000]", "   B accuracy 1.000 [1.000, 1.000]",
                         "   B − A: accuracy +1.000 [+0.307, +1.000] (p = 0.125, descriptive)", "at 2 calls",
                         "   A accuracy 0.000 [0.000, 0.000]", "   B accuracy 0.000 [0.000, 0.000]",
                         "   B − A: accuracy +0.000 [-0.490, +0.490] (p = 1, descriptive)"]
    assert "at 45 tokens" in r.output
    result = json.loads(runner.invoke(app, ["compare", str(a), str(b), "--at-calls", "1", "--json"]).output)
    [at] = result["at"]
    assert (at["axis"], at["budget"]) == ("calls", 1)
    found = at["pairs"][0]["differences"]["accuracy"]
    assert found["reading"] == "descriptive" and "verdict" not in found and found["p_value"] == 0.125
    assert result["curves"]["calls"]["grid"] == [0, 1, 2, 3]


def test_errors_are_one_line(tmp_path):
    run = view_runs.sampling_run(tmp_path / "run", n_examples=1)
    for args, message in ((["view", str(run), "--example", "nope"], "error: no example 'nope'"),
                          (["view", str(tmp_path)], "is not a run folder"),
                          (["view", str(run), str(run), "--out", "x.html"], "--out and --example take one run")):
        done = subprocess.run([sys.executable, "-m", "thoughtloom", *args], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr

"""Anytime curves in ``compare`` and the run page, on runs made by ``evaluate`` on ScriptedLM whose
records were given trajectories as the runner writes them (``view_runs.with_anytime``). Expected
means are worked out by hand from the trajectories given."""

import json
import re

import pytest

from thoughtloom.eval.curves import NOT_RECORDED
from thoughtloom.view import build_report
from thoughtloom.view.compare import compare_runs, comparison_page
from thoughtloom.view.rundir import RunFolder

from support import view_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("curves")
    # cot: one call, wrong on all four questions; cot-sc: right after its first sample, wrong after the
    # second (a tie read as 16), right at its end (3 calls); tokens 30 and 60 at those points
    cot = view_runs.with_anytime(view_runs.sampling_run(root / "cot", strategy="cot", answers=("16",)),
                                 lambda r: [])
    sc = view_runs.with_anytime(view_runs.sampling_run(root / "sc"), lambda r: [(1, 30, 1.0), (2, 60, 0.0)],
                                exact="batch boundaries")
    return cot, sc


def _means(points, metric="accuracy"):
    return {p["budget"]: p["metrics"][metric]["mean"] for p in points}


def test_compare_puts_both_runs_on_one_grid_of_change_points(runs):
    result = compare_runs(runs, replicates=300)
    calls = result["curves"]["calls"]
    assert calls["grid"] == [0, 1, 2, 3]  # every budget at which some example's answer changes
    assert [_means(pts) for pts in calls["runs"]] == [{0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0},
                                                      {0: 0.0, 1: 1.0, 2: 0.0, 3: 1.0}]
    tokens = result["curves"]["tokens"]
    end = {r.id: r.usage["total_tokens"] for r in RunFolder.open(runs[1]).records.values()}
    assert set(tokens["grid"]) >= {0, 30, 60, *end.values()}
    assert _means(tokens["runs"][1])[30] == 1.0 and _means(tokens["runs"][1])[60] == 0.0
    cot, sc = (r["anytime"] for r in result["runs"])
    assert cot == {"recorded": True, "exact": True, "examples": 4, "notes": [],
                   "horizon": {"calls": None, "tokens": None}}
    assert sc["exact"] is False and "exact only at batch boundaries" in sc["notes"][0]
    json.dumps(result, allow_nan=False)


def test_compare_tests_the_pairs_at_chosen_budgets_without_a_verdict(runs):
    result = compare_runs(runs, replicates=300, at_calls=[1, 2, 10], at_tokens=[45])
    at = {(a["axis"], a["budget"]): a for a in result["at"]}
    assert set(at) == {("calls", 1), ("calls", 2), ("calls", 10), ("tokens", 45)}
    one = at["calls", 1]
    assert [r["metrics"]["accuracy"]["mean"] for r in one["runs"]] == [0.0, 1.0]
    # at a chosen budget a difference carries its test but no verdict (a look along the curve): 4 of 4
    # discordant pairs, McNemar's p = 2 * (1/2)^4
    found = one["pairs"][0]["differences"]["accuracy"]
    assert (found["mean"], found["n"], found["p_value"], found["reading"]) == (1.0, 4, 0.125, "descriptive")
    assert "verdict" not in found and found["test"].startswith("exact McNemar")
    assert at["calls", 2]["pairs"][0]["differences"]["accuracy"]["reading"] == "descriptive"
    assert at["calls", 10]["runs"][1]["metrics"]["accuracy"]["mean"] == 1.0  # the end holds past it
    assert at["tokens", 45]["runs"][1]["metrics"]["accuracy"]["mean"] == 1.0  # the point at 30 tokens


def test_a_run_cut_by_its_budget_has_its_curve_end_at_the_cap(tmp_path, runs):
    cut = view_runs.sampling_run(tmp_path / "cut")
    lines = (cut / "results.jsonl").read_text().splitlines()
    (cut / "results.jsonl").write_text("".join(json.dumps({**json.loads(line), "stopped": "budget"}) + "\n"
                                               for line in lines))
    view_runs.with_anytime(cut, lambda r: [(1, 30, 1.0)])
    identity = json.loads((cut / "run.json").read_text())
    identity["config"]["budget"] = {"max_calls": 4, "max_tokens": None}
    (cut / "run.json").write_text(json.dumps(identity))
    result = compare_runs([runs[0], cut], replicates=200, at_calls=[4, 5])
    state = result["runs"][1]["anytime"]
    assert state["horizon"]["calls"] == 4 and "known up to 4 calls: the curve ends there" in " ".join(state["notes"])
    assert result["curves"]["calls"]["grid"] == [0, 1, 3, 4] and max(_means(result["curves"]["calls"]["runs"][1])) == 4
    five = {a["budget"]: a for a in result["at"]}[5]
    assert five["runs"][1] == {"metrics": None, "note": "no curve at 5 calls: known up to 4 calls"}
    assert five["pairs"][0]["differences"] == {}
    page = comparison_page(result, tmp_path / "c.html")
    assert "no curve at 5 calls: known up to 4 calls" in page


def test_runs_recorded_before_trajectories_say_so_where_the_curve_would_be(tmp_path):
    old = view_runs.without_anytime(view_runs.sampling_run(tmp_path / "old", n_examples=2))
    result = compare_runs([old], replicates=100, at_calls=[2])
    assert result["curves"] is None and result["runs"][0]["anytime"]["notes"] == [NOT_RECORDED]
    assert result["at"][0]["runs"] == [{"metrics": None, "note": NOT_RECORDED}]
    html = build_report(RunFolder.open(old), replicates=100)
    assert f"No curve: {NOT_RECORDED}." in html and '<svg class="curve"' not in html
    assert f"No curve: {NOT_RECORDED}." in comparison_page(result, tmp_path / "c.html")


def test_the_run_page_draws_the_curves_against_calls_and_tokens(runs):
    html = build_report(RunFolder.open(runs[1]), replicates=100)
    assert html.count('<svg class="curve"') == 2
    assert 'data-axis="calls"' in html and 'data-axis="tokens"' in html
    line = re.search(r'<svg class="curve" data-axis="calls".*?<path class="curve-line" data-run="0" d="([^"]+)"',
                     html).group(1)
    # 0 calls: 0, 1 call: 1, 2 calls: 0, 3 calls: 1 -- a step line with three changes, dashed (batch boundaries)
    assert line.count("V") == 3 and 'stroke-dasharray="6 3"' in html
    assert "sc: accuracy 1.000 [1.000, 1.000] at 1 call (n=4)" in html


HOSTILE_TRAJECTORIES = [
    {"points": [{"calls": float("nan"), "tokens": 0, "metrics": {}}]},
    {"points": "<script>alert(1)</script>"},
    {"points": [{"calls": 0, "tokens": 0, "metrics": {"accuracy": "<img src=x onerror=alert(1)>"}}]},
    {"points": [{"calls": 0, "tokens": 0, "metrics": {"accuracy": 0}}, {"calls": 1e308, "tokens": -5,
                                                                          "metrics": {}}]},
]


def test_hostile_trajectories_do_not_stop_the_view(tmp_path):
    run = view_runs.sampling_run(tmp_path / "run<i>x", n_examples=4)
    view_runs.with_anytime(run, lambda r: [(1, 30, 1.0)])
    path = run / "results.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record, garbage in zip(records, HOSTILE_TRAJECTORIES[:3]):
        record["anytime"] = garbage
    path.write_text("".join(json.dumps(r) + "\n" for r in records))  # NaN written as JSON's NaN
    html = build_report(RunFolder.open(run), replicates=100)
    assert "3 unreadable trajectories left out of the curves" in html and html.count('<svg class="curve"') == 2
    assert "<i>x" not in html and "run&lt;i&gt;x" in html  # the run's name is escaped in the legend
    assert "<script>alert" not in html and "<img" not in html
    records[3]["anytime"] = HOSTILE_TRAJECTORIES[3]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = compare_runs([run], replicates=100, at_calls=[1])
    # one run, none of its trajectories readable: its curve along calls and along tokens has no point
    assert [result["curves"][axis]["runs"] for axis in ("calls", "tokens")] == [[[]], [[]]]
    assert result["at"][0]["runs"][0] == {"metrics": None, "note": "no example with a readable trajectory"}
    assert "4 unreadable trajectories" in result["runs"][0]["anytime"]["notes"][0]
    json.dumps(result, allow_nan=False)

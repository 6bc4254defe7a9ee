"""Anytime curves from small synthetic records: every expected value is worked out by hand from the
rules in ``thoughtloom.eval.curves`` (the last point at or under a budget; a run cut by its budget is
known up to its cap; an error record scores its own metrics at every budget)."""

import json
import math

import pytest

from thoughtloom.eval.curves import (NOT_RECORDED, budget_grid, curve, differences_at, estimates_at,
                                     read_trajectory, run_curves)


def rec(rid, points, *, stopped=None, exact="every budget", **extra):
    """A result record whose trajectory is ``points``: (calls, tokens, accuracy) each, the last its end."""
    pts = [{"calls": c, "tokens": t, "answer": str(a), "metrics": {"accuracy": a}} for c, t, a in points]
    return {"id": rid, "metrics": {"accuracy": points[-1][2]}, "usage": {"calls": points[-1][0]},
            "stopped": stopped, "anytime": {"points": pts, "exact": exact}, **extra}


A = rec("a", [(0, 0, 0.0), (3, 812, 1.0), (7, 2100, 0.0)])
B = rec("b", [(0, 0, 0.0), (1, 100, 1.0)])
C = {"id": "c", "error": "TimeoutError: ...", "metrics": {}, "usage": {"calls": 2}, "stopped": None}


def test_the_metric_at_a_budget_is_that_of_the_last_point_at_or_under_it():
    example = read_trajectory(A)
    at = {b: example.at("calls", b).value("accuracy") for b in (0, 2, 3, 6, 7, 100)}
    assert at == {0: 0.0, 2: 0.0, 3: 1.0, 6: 1.0, 7: 0.0, 100: 0.0}  # not cut: the end holds past it
    at = {t: example.at("tokens", t).value("accuracy") for t in (0, 811, 812, 2099, 2100, 10**6)}
    assert at == {0: 0.0, 811: 0.0, 812: 1.0, 2099: 1.0, 2100: 0.0, 10**6: 0.0}


def test_means_at_a_budget_over_the_examples_with_errors_scoring_their_own_metrics():
    run = run_curves({"a": A, "b": B, "c": C})
    assert run.recorded and set(run.examples) == {"a", "b", "c"} and run.notes == []
    # calls 0: nobody has an answer; 3: a and b right, c (error) 0; 7: a turned wrong
    means = {b: estimates_at(run, "calls", b, ["accuracy"], replicates=500)["accuracy"] for b in (0, 1, 3, 7, 50)}
    assert {b: e.mean for b, e in means.items()} == {0: 0.0, 1: 1 / 3, 3: 2 / 3, 7: 1 / 3, 50: 1 / 3}
    assert all(e.n == 3 for e in means.values())
    assert means[3].ci_low <= 2 / 3 <= means[3].ci_high and means[0].ci_high == 0.0
    # tokens: b answers at 100, a at 812 and turns wrong at 2100
    assert estimates_at(run, "tokens", 811, ["accuracy"], replicates=200)["accuracy"].mean == 1 / 3
    assert estimates_at(run, "tokens", 812, ["accuracy"], replicates=200)["accuracy"].mean == 2 / 3
    assert run.horizon("calls") == math.inf


def test_an_example_cut_by_its_budget_is_known_up_to_the_run_s_cap_only():
    cut = rec("d", [(0, 0, 0.0), (5, 400, 1.0)], stopped="budget")
    caps = {"max_calls": 8, "max_tokens": None}
    run = run_curves({"a": A, "d": cut}, caps)
    assert run.horizon("calls") == 8 and run.horizon("tokens") == 400  # no token cap recorded: its last point
    assert run.scores_at("calls", 8, "accuracy") == {"a": 0.0, "d": 1.0}
    assert run.scores_at("calls", 9, "accuracy") is None and run.scores_at("tokens", 401, "accuracy") is None
    assert "known up to 8 calls" in " ".join(run.notes) and "known up to 400 tokens" in " ".join(run.notes)
    grid = budget_grid([run], "calls")
    assert grid == [0, 3, 5, 7, 8]
    assert [b for b, _ in curve(run, "calls", grid + [9, 12], ["accuracy"], replicates=100)] == grid
    unknown_cap = run_curves({"d": cut})  # no run.json: up to the last point's calls
    assert unknown_cap.horizon("calls") == 5 and unknown_cap.scores_at("calls", 6, "accuracy") is None


def test_a_run_recorded_before_trajectories_has_no_curve():
    old = [{k: v for k, v in r.items() if k != "anytime"} for r in (A, B)]
    run = run_curves(old)
    assert not run.recorded and run.notes == [] and run.scores_at("calls", 0, "accuracy") is None
    assert curve(run, "calls", [0, 1, 5], ["accuracy"]) == [] and budget_grid([run], "calls") == [0]
    mixed = run_curves([A, old[1]])
    assert set(mixed.examples) == {"a"}
    assert mixed.notes == [f"1 example without a trajectory ({NOT_RECORDED}) left out of the curves"]


def test_trajectories_exact_only_at_batch_boundaries_are_said():
    run = run_curves([A, rec("e", [(0, 0, 0.0), (4, 10, 1.0)], exact="batch boundaries")])
    assert not run.exact
    assert run.notes == ["1 of 2 trajectories are exact only at batch boundaries: between recorded points "
                         "a run capped there could differ"]


def _points(*points):
    return {**A, "anytime": {"points": list(points), "exact": "every budget"}}


ZERO = {"calls": 0, "tokens": 0, "metrics": {"accuracy": 0.0}}
HOSTILE = {
    "not an object": {**A, "anytime": "every budget"},
    "points not a list": {**A, "anytime": {"points": {"calls": 0}}},
    "no points": {**A, "anytime": {"points": []}},
    "a point is a string": _points(ZERO, "x"),
    "calls NaN": _points(ZERO, {**ZERO, "calls": float("nan")}),
    "tokens infinite": _points(ZERO, {**ZERO, "tokens": float("inf")}),
    "calls negative": _points(ZERO, {**ZERO, "calls": -1}),
    "calls a fraction": _points(ZERO, {**ZERO, "calls": 2.5}),
    "calls a bool": _points(ZERO, {**ZERO, "calls": True}),
    "calls a string": _points(ZERO, {**ZERO, "calls": "3"}),
    "metric NaN": _points(ZERO, {**ZERO, "calls": 1, "metrics": {"accuracy": float("nan")}}),
    "metric a string": _points(ZERO, {**ZERO, "calls": 1, "metrics": {"accuracy": "1"}}),
    "metrics a list": _points(ZERO, {**ZERO, "calls": 1, "metrics": [1.0]}),
    "metric missing": _points(ZERO, {**ZERO, "calls": 1, "metrics": {"f1": 1.0}}),
    "calls going back": _points(ZERO, {**ZERO, "calls": 5}, {**ZERO, "calls": 4}),
    "tokens going back": _points(ZERO, {**ZERO, "calls": 1, "tokens": 50}, {**ZERO, "calls": 2, "tokens": 49}),
    "first point not at 0": _points({**ZERO, "calls": 2}),
    "deeply nested": _points(ZERO, {**ZERO, "calls": 1, "metrics": {"accuracy": json.loads("[" * 200 + "]" * 200)}}),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_an_unreadable_trajectory_is_left_out_with_a_note(name):
    run = run_curves({"bad": HOSTILE[name], "b": B})
    assert set(run.examples) == {"b"} and run.recorded
    assert len(run.notes) == 1 and run.notes[0].startswith("1 unreadable trajectory left out of the curves (e.g. bad: ")
    assert estimates_at(run, "calls", 1, ["accuracy"], replicates=100)["accuracy"].mean == 1.0


def test_an_unscored_point_scores_zero_and_a_huge_count_is_still_a_count():
    big = 10**30
    record = _points(ZERO, {"calls": 1, "tokens": big, "metrics": {}}, {"calls": 2, "tokens": big + 1,
                                                                         "metrics": {"accuracy": 1.0}})
    example = read_trajectory(record)
    assert example.at("calls", 1).value("accuracy") == 0.0 and example.at("tokens", big + 1).value("accuracy") == 1.0


def test_the_grid_holds_every_change_point_or_thins_them_to_change_points():
    run = run_curves([A, B])
    assert budget_grid([run], "calls") == [0, 1, 3, 7] and budget_grid([run], "tokens") == [0, 100, 812, 2100]
    other = run_curves([rec(f"x{i}", [(0, 0, 0.0), (i, 10 * i, 1.0)]) for i in range(1, 101)])
    grid = budget_grid([run, other], "calls", most=11)
    assert grid == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]  # evenly spaced, each a change point
    tokens = budget_grid([run, other], "tokens", most=5)
    # targets 0, 525, 1050, 1575, 2100, each moved down to a change point (1050 and 1575 both to 1000)
    assert tokens == [0, 520, 1000, 2100]


def test_paired_differences_at_budgets_over_the_shared_examples():
    cot = run_curves([rec("a", [(0, 0, 0.0), (1, 50, 0.0)]), rec("b", [(0, 0, 0.0), (1, 50, 0.0)])])
    sc = run_curves([rec("a", [(0, 0, 0.0), (2, 90, 1.0)]), rec("b", [(0, 0, 0.0), (4, 200, 1.0)],
                                                                stopped="budget")], {"max_calls": 4})
    found = {(d.budget, d.metric): d for d in differences_at(cot, sc, "calls", [1, 2, 4, 5], ["accuracy"],
                                                             replicates=300)}
    # each difference carries its test (descriptive: no verdict along a curve); 0/1 scores: exact McNemar
    assert found[1, "accuracy"].test.mean == 0.0 and found[1, "accuracy"].test.p_value == 1.0  # no discordant pair
    assert found[2, "accuracy"].test.mean == 0.5 and found[2, "accuracy"].test.n == 2
    assert found[4, "accuracy"].test.mean == 1.0 and found[4, "accuracy"].test.p_value == 0.5  # 2 of 2 discordant
    assert found[5, "accuracy"].test is None  # sc cut at 4

"""The evaluator's numeric feedback read on the scale the model wrote it in.

ThoughtSculpt §3.1: "The numerical feedback will be used as the evaluation
score v(x^i) for the current node" (Eq. 1, f_numeric(x^i) = v(x^i)); the
paper's own prompts ask for several scales: "an interesting score from 1 to
10" (§4.1), "Write a score from 1 to 100" (Appendix A.1, EVALUATE_CURRENT),
"[interesting level: 1-10]" (EVALUATE_CURRENT_ITEMIZED). Our prompts ask
for 0 to 10; v(x) is the fraction of the scale's maximum, in [0, 1], and a
bare number is read on the scale the request asked for (issue 35: a ``1.0``
on a 0-10 request is 0.1, not full marks).
"""

import pytest

from thoughtloom.strategies.treesearch.reading import limit_reading, read_evaluation, read_score, salvage_holistic


@pytest.mark.parametrize("raw,want", [
    # a bare number is on the 0-10 scale the request asked for, however it is written
    (0.9, 0.09), ("0.9", 0.09), (1.0, 0.1), ("1.0", 0.1), (0.25, 0.025), ("0.0", 0.0), ("score: 7.5", 0.75),
    (7, 0.7), ("7", 0.7), (7.5, 0.75), (10, 1.0), (10.0, 1.0), (1, 0.1), ("1", 0.1), (0, 0.0),
    # explicit N/M or "N out of M": N / M
    ("7/10", 0.7), ("9 / 10", 0.9), ("8 out of 10", 0.8), ("8 Out Of 10", 0.8), ("0.9/1", 0.9),
    ("3/5", 0.6), ("1.0 (out of 10)", 0.1),
    # 0-100 scale (Appendix A.1's "score from 1 to 100") and percentages
    (85, 0.85), ("85", 0.85), ("85%", 0.85), ("5 %", 0.05), (100, 1.0),
])
def test_scales(raw, want):
    """Expected values are the fraction of each scale's maximum: 0.9 on 0-1 is 0.9, 7 on 0-10 is 0.7,
    "7/10" is 7/10, 85 on 0-100 is 0.85."""
    assert read_score(raw) == pytest.approx(want)


@pytest.mark.parametrize("raw", [1, 1.0, "1", "1.0", " 1.00 "])
def test_one_on_a_zero_to_ten_request_is_a_tenth_however_it_is_written(raw):
    """Issue 35's probe: on a 0-10 request ``1`` read as 0.1 but ``1.0`` as full marks. The request's scale
    decides: 1 out of 10 is 0.1 both ways; on a 0-100 request 1.0 is 0.01."""
    assert read_score(raw) == pytest.approx(0.1)
    assert read_score(raw, scale=100) == pytest.approx(0.01)
    assert read_evaluation({"score": raw, "feedback": "x"}).score == pytest.approx(0.1)


@pytest.mark.parametrize("raw,want", [
    (-3, 0.0), (-0.5, 0.0), (150, 1.0), ("11/10", 1.0), ("-2/10", 0.0), (True, 1.0), (False, 0.0),
])
def test_out_of_range_is_clamped(raw, want):
    assert read_score(raw) == want


@pytest.mark.parametrize("raw", [
    None, "", "none", "n/a", [7], {"score": 7}, float("inf"), float("nan"), "Infinity", "NaN", "1e400",
    10 ** 1000, "9" * 5000, "\ud800", "\x00" * 10, "[" * 10_000,
])
def test_hostile_values_are_not_scores(raw):
    assert read_score(raw) is None


def test_huge_reply_is_read_from_its_head_and_fast():
    assert read_score("7/10 " + "x" * 5_000_000) == pytest.approx(0.7)
    assert read_score("x" * 5_000_000 + " 7") is None  # past the part read: no number there


def test_division_by_zero_scale_falls_back_to_the_number():
    assert read_score("7/0") == pytest.approx(0.7)


def test_scales_inside_whole_replies():
    """A holistic reply, an itemized one mixing a bare number, a named scale and a percentage, a cut-off one."""
    assert read_evaluation({"score": 9.0, "feedback": "close"}).score == pytest.approx(0.9)
    assert read_evaluation({"score": "0.9/1", "feedback": "solved"}).score == pytest.approx(0.9)
    mixed = read_evaluation({"items": [{"item": "h1", "score": 5}, {"item": "h2", "score": "9/10"},
                                       {"item": "h3", "score": 70}]})
    assert mixed.score == pytest.approx((0.5 + 0.9 + 0.7) / 3)
    assert salvage_holistic('{"score": 8.0, "feedback": "cut of').score == pytest.approx(0.8)
    assert salvage_holistic('{"score": 1.0, "feedback": "cut of').score == pytest.approx(0.1)


def test_limits_lower_items_by_label_then_position_and_the_mean_follows():
    """limit_reading: each item held to its own limit, found by label (any order, '[h2]' or 'H2.'),
    else by position; the node's score is the mean of the items again, and the feedback shows it."""
    r = read_evaluation({"items": [{"item": "H2.", "score": 10, "feedback": "a"},
                                   {"item": "h1", "score": 9, "feedback": "b"},
                                   {"item": "??", "score": 8, "feedback": "c"}]})
    assert limit_reading(r, ["h1", "h2", "h3"], [1.0, 0.5, 0.3]) == 2
    assert [i["score"] for i in r.items] == [0.5, 0.9, 0.3]  # h2 by label, h1 kept, '??' is third
    assert r.score == pytest.approx((0.5 + 0.9 + 0.3) / 3)
    assert "H2.: a (score 5/10)" in r.feedback


def test_limits_never_raise_a_score_and_skip_unscored_items():
    r = read_evaluation({"items": [{"item": "h1", "score": 2, "feedback": ""}, {"item": "h2", "feedback": ""}]})
    before = (r.score, r.feedback)
    assert limit_reading(r, ["h1", "h2"], [0.5, 0.5]) == 0
    assert (r.score, r.feedback) == before and r.items[1]["score"] is None
    assert limit_reading(r, ["h1", "h2"], []) == 0  # a task without limits


def test_a_holistic_reading_is_held_to_the_mean_limit():
    """Without item scores, the node can score at most what its items could average."""
    r = read_evaluation({"score": 10, "feedback": "solved"})
    assert limit_reading(r, [], [1.0, 0.5, 0.5, 0.5]) == 1 and r.score == pytest.approx(0.625)
    r = read_evaluation({"score": 4, "feedback": "meh"})
    assert limit_reading(r, [], [1.0, 0.5]) == 0 and r.score == pytest.approx(0.4)


def test_every_evaluation_request_carries_the_schema_of_its_scale():
    """The request says the scale, and where the backend can, holds the reply to it: the schema's score
    is one of the whole numbers 0..10 that the prompt asks for, one entry per item when itemized."""
    from thoughtloom.strategies.treesearch.reading import SCALE, evaluation_schema

    holistic = evaluation_schema(0)
    assert holistic["properties"]["score"]["enum"] == list(range(SCALE + 1)) and SCALE == 10
    itemized = evaluation_schema(10)["properties"]["items"]
    assert itemized["minItems"] == itemized["maxItems"] == 10

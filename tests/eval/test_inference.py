"""The paired tests, intervals, corrections and power figures of ``eval/inference`` against textbook
values and hand-derived ones (docs/verdicts.md shows the same figures worked out)."""

import math

import numpy as np
import pytest

from thoughtloom.eval.inference import (BCA, MCNEMAR, POWER_Z, bca, holm, judge, judge_all, mcnemar_mde, mcnemar_p,
                                        newcombe_paired, paired_test, sign_flip_p, wilson)


def ids(values):
    return {f"q{i}": float(v) for i, v in enumerate(values)}


# -- McNemar ------------------------------------------------------------------------------------

@pytest.mark.parametrize("wins, losses, expected", [
    (5, 0, 0.0625),  # 2 * (1/2)^5: the five pairs that all favour one side
    (2, 0, 0.5),
    (6, 0, 0.03125),  # the fewest one-sided discordant pairs that can reject at 0.05
    (10, 2, 2 * (1 + 12 + 66) / 4096),  # 2 * P(X <= 2), X ~ Binomial(12, 1/2) = 158 / 4096 = 0.0386
    (3, 3, 1.0),  # twice a tail past 1/2 is capped at 1
    (0, 0, 1.0),  # no discordant pair: nothing to go on
])
def test_exact_mcnemar(wins, losses, expected):
    """McNemar's exact test: under "no difference" B's wins among the k discordant pairs are
    Binomial(k, 1/2); the two-sided p-value is twice the smaller tail."""
    assert mcnemar_p(wins, losses) == pytest.approx(expected, abs=1e-15)
    assert mcnemar_p(losses, wins) == mcnemar_p(wins, losses)


def test_many_discordant_pairs_are_summed_in_log_space_to_the_same_value():
    """Past 1,000 discordant pairs the tail is summed in log space: the same p-value as the exact
    integer sum, and an MDE for 5,000 pairs without summing 10^6 binomials."""
    wins, losses = 540, 480
    exact = min(1.0, 2 * sum(math.comb(1020, i) for i in range(481)) / 2 ** 1020)
    assert mcnemar_p(wins, losses) == pytest.approx(exact, rel=1e-9)
    assert 0 < mcnemar_mde(5000, 10_000) < 0.03


def test_zero_one_scores_take_mcnemar_and_ties_do_not_count():
    a = ids([0] * 5 + [1] * 10 + [0] * 3)
    b = ids([1] * 5 + [1] * 10 + [0] * 3)  # five wins, ten both right, three both wrong
    t = paired_test(a, b)
    assert t.test == MCNEMAR and (t.wins, t.losses, t.ties, t.n) == (5, 0, 13, 18)
    assert t.p_value == 0.0625 and t.min_p == 0.0625 and t.mean == pytest.approx(5 / 18)
    assert judge(t).reason == "n = 18, 5 discordant: the smallest p-value possible is 0.0625"


# -- sign flip ----------------------------------------------------------------------------------

@pytest.mark.parametrize("diffs", [[0.1, 0.2, 0.3], [0.7, 0.7, 0.7], [0.5, 0.01, 0.9]])
def test_a_sign_flip_test_on_three_pairs_cannot_go_below_a_quarter(diffs):
    """Three differences all one way: of the 2^3 = 8 equally likely sign patterns, the observed one
    and its mirror are the two farthest from 0, so p = 2/8 = 0.25 whatever the sizes."""
    p, exact = sign_flip_p(diffs)
    assert (p, exact) == (0.25, True)
    t = paired_test(ids([0, 0, 0]), ids(diffs))
    assert t.p_value == 0.25 and t.min_p == 0.25 and t.test.startswith("paired sign-flip")
    assert judge(t).verdict == "inconclusive"
    assert judge(t).reason == "n = 3: the smallest p-value possible is 0.25"


def test_sign_flip_counts_every_pattern_as_far_from_zero():
    """Differences (1, -2, 3): observed sum 2. The 8 sums of ±1 ±2 ±3 are 6, 4, 2, 0, 0, -2, -4, -6;
    six of them are at least 2 from zero: p = 6/8. Zeros are ties and drop out (no sign to flip)."""
    assert sign_flip_p([1, -2, 3]) == (0.75, True)
    assert sign_flip_p([1, -2, 3, 0, 0]) == (0.75, True)
    assert sign_flip_p([0, 0]) == (1.0, True)


def test_past_16_units_the_sign_flip_is_a_seeded_monte_carlo():
    """20 differences all +0.3: the exact p is 2/2^20; no draw of 10,000 random patterns reaches the
    observed sum (its chance per draw is 2/2^20), so the Monte Carlo p is (1 + 0) / (1 + 10,000)."""
    p, exact = sign_flip_p([0.3] * 20)
    assert not exact and p == 1 / 10_001
    rng = np.random.default_rng(5)
    values = rng.normal(0.05, 1, 40)
    assert sign_flip_p(values) == sign_flip_p(values) != sign_flip_p(values, seed=1)
    t = paired_test(ids([0] * 20), ids([0.3] * 20))
    assert t.min_p == 2.0 ** -19 and "Monte Carlo" in t.test and "seed 0" in t.test


def test_the_monte_carlo_counts_patterns_that_tie_the_observed_sum():
    """Seventeen differences of +1 and three of -1 (m = 20, Monte Carlo): the sums are whole numbers, so
    many patterns tie the observed 14. Exactly, P(|S| >= 14) = 2 * (C(20,17) + C(20,18) + C(20,19) + 1) /
    2^20 = 2702 / 1,048,576 = 0.00258; counting only patterns beyond it would give 422 / 2^20 = 0.0004."""
    p, exact = sign_flip_p([1.0] * 17 + [-1.0] * 3)
    assert not exact and p == pytest.approx(2702 / 2 ** 20, abs=0.0015)
    t = paired_test(ids([0, 0, 0, 0, 0]), ids([0.1, -0.2, 0, 0, 0.3]))
    assert judge(t).reason == "n = 5, 3 not tied: the smallest p-value possible is 0.25"


def test_the_monte_carlo_p_value_is_near_the_exact_one():
    """At 16 units both ways are possible: the exact enumeration against the Monte Carlo estimate
    (forced by asking for 15 units exact at most) agree within the Monte Carlo error."""
    values = np.random.default_rng(3).normal(0.4, 1, 16)
    exact, _ = sign_flip_p(values)
    import thoughtloom.eval.inference as inference
    old, inference.EXACT_UNITS = inference.EXACT_UNITS, 15
    try:
        estimate, was_exact = sign_flip_p(values, replicates=20_000)
    finally:
        inference.EXACT_UNITS = old
    assert not was_exact and estimate == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 20_000))


# -- intervals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("x, n, expected", [
    (81, 263, (0.2553, 0.3662)), (15, 148, (0.0624, 0.1605)), (0, 20, (0.0, 0.1611)), (1, 29, (0.0061, 0.1718)),
])
def test_wilson_interval_textbook(x, n, expected):
    """Wilson's (1927) score interval at 95%, Newcombe's (1998, "Two-sided confidence intervals for the
    single proportion", Stat Med 17:857) method 3 on his four examples: 81/263, 15/148, 0/20, 1/29."""
    low, high = wilson(x, n)
    assert (round(low, 4), round(high, 4)) == expected


def test_newcombe_paired_interval_textbook():
    """Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017), ch. 8: complete
    response before and after consolidation therapy (Cavo et al. 2012), the paired table 59 / 6 /
    16 / 80: estimate -0.0621, Newcombe square-and-add 95% CI -0.1186 to -0.0046."""
    low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    t = paired_test(ids([1] * 59 + [1] * 16 + [0] * 6 + [0] * 80), ids([1] * 59 + [0] * 16 + [1] * 6 + [0] * 80))
    assert t.interval.startswith("Newcombe") and round(t.mean, 4) == -0.0621
    assert (round(t.ci_low, 4), round(t.ci_high, 4)) == (-0.1186, -0.0046)


def test_newcombe_keeps_width_where_a_bootstrap_has_none():
    """The issue's case: two examples, A right and B wrong on both. A bootstrap of the differences
    (-1, -1) gives [-1, -1]; Newcombe's interval runs from -1 to -1 + sqrt(2) * 0.658 (the Wilson
    upper limit of 0/2 is 0.658)."""
    t = paired_test(ids([1, 1]), ids([0, 0]))
    u = wilson(0, 2)[1]
    assert t.ci_low == -1.0 and t.ci_high == pytest.approx(-1 + math.sqrt(2) * u) and t.ci_high > -0.1
    assert judge(t).reason == "n = 2: the smallest p-value possible is 0.5"


def test_bca_is_zero_width_on_constant_differences_and_brackets_the_mean():
    sums, sizes = np.full(8, 0.25), np.ones(8)
    assert bca(sums, sizes) == (0.25, 0.25)
    assert bca(np.array([0.7]), np.ones(1)) == (0.7, 0.7)  # one unit: nothing to resample
    low, high = bca(np.array([0.2, 0.6]), np.ones(2))  # two units already spread: resamples of 0.2, 0.4, 0.6
    assert low == pytest.approx(0.2) and high == pytest.approx(0.6)
    rng = np.random.default_rng(0)
    d = rng.gamma(1.0, 0.2, 30) - 0.1  # skewed differences
    low, high = bca(d, np.ones(30))
    assert low < d.mean() < high
    t = paired_test(ids([0] * 30), ids(d))  # the same differences in another order: other draws
    assert t.interval == BCA and t.ci_low == pytest.approx(low, abs=0.01) and t.ci_high == pytest.approx(high, abs=0.01)


def test_bca_covers_about_95_percent_on_skewed_scores():
    """200 samples of n = 30 differences from a shifted exponential whose true mean is 0.1: the BCa
    interval should hold it close to 95% of the time (a loose band: 200 trials, 1,000 replicates)."""
    rng = np.random.default_rng(11)
    held = 0
    for trial in range(200):
        d = rng.exponential(0.3, 30) - 0.2
        low, high = bca(d, np.ones(30), replicates=1_000, seed=trial)
        held += low <= 0.1 <= high
    assert 0.88 <= held / 200 <= 0.99


# -- groups -------------------------------------------------------------------------------------

def test_grouped_examples_are_flipped_and_resampled_as_groups():
    """Six questions over two contexts, B better on all six: as six independent pairs a sign flip
    could reach 2/2^6; as two groups only 2/2^2 = 0.5. 0/1 scores in groups leave McNemar (which
    needs independent pairs) for the grouped sign flip."""
    a, b = ids([0.0] * 6), ids([0.5] * 6)
    groups = {f"q{i}": f"ctx{i // 3}" for i in range(6)}
    assert paired_test(a, b).min_p == 2 / 2 ** 6
    t = paired_test(a, b, groups=groups)
    assert (t.units, t.min_p, t.p_value) == (2, 0.5, 0.5) and "whole groups flipped (2 groups)" in t.test
    assert t.interval == BCA + " over groups"
    assert judge(t).reason == "n = 6 in 2 groups: the smallest p-value possible is 0.5"
    binary = paired_test(ids([0] * 6), ids([1] * 6), groups=groups)
    assert binary.test != MCNEMAR and binary.p_value == 0.5
    # an id without a group stands alone; groups of one are independent examples
    assert paired_test(a, b, groups={"q0": "x"}).units == 6


def test_the_clustered_standard_error_is_the_sandwich_one():
    """Miller (2024), "clustered standard errors": with clusters, SE = sqrt(sum over clusters of
    (sum of residuals)^2) / n (here with the G/(G-1) small-sample factor). Two clusters of differences
    (1, 1) and (0, 0):
    mean 0.5, cluster residual sums +1 and -1, SE = sqrt(2 * 2/1) / 4 = 0.5."""
    t = paired_test(ids([0, 0, 0, 0]), ids([1, 1, 0, 0]), groups={"q0": "x", "q1": "x", "q2": "y", "q3": "y"})
    assert t.se == pytest.approx(0.5)


# -- Holm and the verdict -----------------------------------------------------------------------

def test_holm_textbook_example():
    """Holm (1979), as in the standard worked example: four hypotheses with p = 0.01, 0.04, 0.03, 0.005
    at alpha 0.05. Sorted, 0.005 <= 0.05/4 and 0.01 <= 0.05/3 are rejected; 0.03 > 0.05/2 stops the
    procedure, so H2 and H3 stand. Adjusted: 4 * 0.005 = 0.02, 3 * 0.01 = 0.03, 2 * 0.03 = 0.06 and
    max(0.06, 1 * 0.04) = 0.06."""
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p <= 0.05 for p in adjusted] == [True, False, False, True]
    assert holm([]) == [] and holm([0.7]) == [0.7] and holm([0.6, 0.6]) == [1.0, 1.0]


def test_a_verdict_stands_only_where_the_corrected_test_rejects():
    """Six discordant pairs all B's way: p = 0.03125 <= 0.05 holds alone, and the mirror does not
    hold; six such claims on one card are each 0.1875 after Holm: inconclusive, saying why."""
    six = paired_test(ids([0] * 6), ids([1] * 6))
    assert judge(six).verdict == "holds" and judge(six).reason == "p = 0.0312: at most 0.05"
    assert (judge(six).p_adjusted, judge(six).family) == (0.03125, 1)  # alone: a family of one, no correction
    assert judge(paired_test(ids([1] * 6), ids([0] * 6))).verdict == "does not hold"
    found = judge_all([six] * 6)
    assert [j.verdict for j in found] == ["inconclusive"] * 6
    assert found[0].p_adjusted == pytest.approx(6 * 0.03125) and found[0].family == 6
    assert found[0].reason == "p = 0.0312; 0.188 after Holm's correction over 6 claims: above 0.05"
    # a claim with nothing to test is left out of the family
    assert judge_all([None, six, paired_test({}, {"x": 1.0})])[0] is None
    assert judge_all([None, six])[1].verdict == "holds"
    assert judge(paired_test({}, {"x": 1.0})).reason == "no example both sides scored"


def test_a_zero_p_value_bound_above_alpha_is_inconclusive_even_if_holm_would_not_matter():
    five = paired_test(ids([0] * 5), ids([1] * 5))
    assert judge(five, 0.0625, 1).verdict == "inconclusive"
    assert judge(five).reason == "n = 5: the smallest p-value possible is 0.0625"


# -- power ---------------------------------------------------------------------------------------

def test_power_figures_for_zero_one_scores():
    """For 0/1 scores the MDE is exact, given the k discordant pairs seen: with k = 20 McNemar rejects at
    w <= 5 or w >= 15 (P(X <= 5) = 0.0207 under Binomial(20, 1/2), twice that 0.041; w = 6 gives 0.115),
    so the MDE is (2 pi - 1) * 20 / 100 for the pi at which P(W >= 15) + P(W <= 5) = 0.8. The n a
    difference needs is Miller's (z.975 + z.80)^2 * v / delta^2 with v the share of discordant pairs:
    7.849 * 0.2 / 0.1^2 = 156.98 -> 157."""
    assert POWER_Z == pytest.approx(1.959964 + 0.841621, abs=1e-5)
    a = ids([0] * 15 + [1] * 5 + [0] * 80)
    b = ids([1] * 15 + [0] * 5 + [0] * 80)
    t = paired_test(a, b)
    assert t.se == pytest.approx(math.sqrt(20) / 100)
    assert [w for w in range(21) if mcnemar_p(w, 20 - w) <= 0.05] == [0, 1, 2, 3, 4, 5, 15, 16, 17, 18, 19, 20]
    pi = (t.mde * 100 / 20 + 1) / 2
    power = sum(math.comb(20, w) * pi ** w * (1 - pi) ** (20 - w) for w in [*range(6), *range(15, 21)])
    assert power == pytest.approx(0.8, abs=1e-6) and 0.11 < t.mde < 0.125  # under the normal form's 0.125
    assert mcnemar_mde(8, 12) == pytest.approx((2 * 0.8 ** (1 / 8) - 1) * 8 / 12, abs=1e-9)  # only 8-0 rejects
    assert mcnemar_mde(5, 12) is None and paired_test(ids([0] * 5), ids([1] * 5)).mde is None  # under 6: none
    assert t.n_needed(0.1) == 157 and t.n_needed(-0.1) == 157
    assert t.n_needed(0.5) == math.ceil(POWER_Z ** 2 * 0.5 / 0.25)  # a difference needs discordance >= itself
    assert t.n_needed(0) is None
    tied = paired_test(ids([1, 0]), ids([1, 0]))
    assert tied.mde is None and tied.n_needed(0.2) is None


def test_power_figures_for_graded_scores():
    """Graded: MDE = (z.975 + z.80) * SE (Miller 2024), SE = sd(d) / sqrt(n) with the sample standard
    deviation (ddof = 1); with fewer than 6 units no sign-flip test reaches 0.05, so none is detectable."""
    d = [0.1, 0.3, -0.2, 0.4, 0.0, 0.2]
    t = paired_test(ids([0] * 6), ids(d))
    se = float(np.std(d, ddof=1)) / math.sqrt(6)
    assert t.se == pytest.approx(se) and t.mde == pytest.approx(POWER_Z * se)
    assert t.n_needed(0.05) == math.ceil(6 * (POWER_Z * se / 0.05) ** 2)
    assert paired_test(ids([0] * 5), ids(d[:5])).mde is None


def test_one_unit_is_an_estimate_with_no_test_and_no_power():
    """One graded example, or every example in one group: a sign flip of one unit has 2 patterns,
    both as far from 0 (p = 1); there is no spread to size a power figure on."""
    for t in (paired_test(ids([0.0]), ids([0.5])),
              paired_test(ids([0, 0, 0]), ids([0.5, 0.2, 0.1]), groups={f"q{i}": "one" for i in range(3)})):
        assert t.p_value == 1.0 and t.min_p == 1.0 and t.se == 0.0 and t.mde is None and t.units == 1
        assert t.ci_low == t.ci_high == t.mean


def test_inputs_are_checked():
    with pytest.raises(ValueError, match="finite"):
        paired_test({"x": 0.0}, {"x": math.nan})
    with pytest.raises(ValueError, match="confidence"):
        paired_test({"x": 0.0}, {"x": 1.0}, confidence=1.0)
    empty = paired_test({"x": 0.0}, {"y": 1.0})
    assert empty.n == 0 and math.isnan(empty.mean) and empty.p_value == 1.0
    d = paired_test(ids([0, 1]), ids([1, 1])).as_dict()
    assert {"p_value", "test", "interval", "min_p", "mde", "ties", "units"} <= set(d)

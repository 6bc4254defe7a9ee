import math

import numpy as np
import pytest

from thoughtloom.eval.stats import Estimate, mean_ci


def test_mean_ci_brackets_the_mean_and_narrows_with_n():
    small = mean_ci([1, 0] * 10)
    large = mean_ci([1, 0] * 200)
    assert small.mean == large.mean == 0.5
    assert small.ci_low < 0.5 < small.ci_high
    assert (large.ci_high - large.ci_low) < (small.ci_high - small.ci_low)
    assert small.n == 20 and large.n == 400


def test_mean_ci_matches_the_normal_approximation_for_a_proportion():
    est = mean_ci([1] * 60 + [0] * 40)
    half = 1.96 * math.sqrt(0.6 * 0.4 / 100)
    assert est.ci_low == pytest.approx(0.6 - half, abs=0.02)
    assert est.ci_high == pytest.approx(0.6 + half, abs=0.02)


def test_constant_scores_have_a_zero_width_interval():
    assert mean_ci([1, 1, 1]) == Estimate(1.0, 1.0, 1.0, 3)


def test_seed_noise_widens_the_interval():
    rng = np.random.default_rng(1)
    runs = rng.integers(0, 2, size=(3, 50)).astype(float)  # three seeds that disagree a lot
    both = mean_ci(runs)
    averaged_away = mean_ci(runs.mean(axis=0))
    assert both.n == averaged_away.n == 50
    assert both.mean == pytest.approx(averaged_away.mean)
    assert (both.ci_high - both.ci_low) > (averaged_away.ci_high - averaged_away.ci_low)


def test_empty_and_non_finite_inputs():
    assert mean_ci([]).n == 0 and math.isnan(mean_ci([]).mean)
    with pytest.raises(ValueError, match="finite"):
        mean_ci([1.0, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        mean_ci([1, 0], confidence=1.5)


# -- exact figures where the bootstrap has few outcomes (kills what ±0.02 checks let through) ------

def test_two_examples_give_the_whole_range_every_example_drawn():
    """With scores 1 and 0, a resample's mean is 0, 0.5 or 1 with chances 1/4, 1/2, 1/4, so the
    2.5th and 97.5th percentiles of 10,000 resamples are exactly 0 and 1; both examples must be
    drawn (an index range that skips the first gives [0, 0])."""
    est = mean_ci([1.0, 0.0])
    assert (est.mean, est.ci_low, est.ci_high, est.n) == (0.5, 0.0, 1.0, 2)


def test_every_seed_row_is_drawn():
    """Two seeds that disagree on every example: a resample takes 2 rows with replacement, so its
    mean is 0, 0.5 or 1 and the interval is [0, 1]; drawing only the second row gives [0, 0]."""
    est = mean_ci([[1.0, 1.0], [0.0, 0.0]])
    assert (est.mean, est.ci_low, est.ci_high, est.n) == (0.5, 0.0, 1.0, 2)


def test_one_example_is_an_estimate_not_an_empty_one():
    assert mean_ci([1.0]) == Estimate(1.0, 1.0, 1.0, 1)


def test_the_default_seed_is_zero_so_figures_repeat():
    values = [(0.37 * i * i) % 1 for i in range(13)]  # spread out: another seed moves the interval
    assert mean_ci(values) == mean_ci(values, seed=0) != mean_ci(values, seed=1)


def test_an_estimate_is_frozen_and_reads_as_text_and_a_dict():
    est = Estimate(0.5, 0.25, 0.75, 8)
    with pytest.raises(AttributeError):
        est.mean = 1.0  # type: ignore[misc]
    assert est.as_dict() == {"mean": 0.5, "ci_low": 0.25, "ci_high": 0.75, "n": 8, "confidence": 0.95}
    assert str(est) == "0.500 [0.250, 0.750] (n=8)"


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 1.5])
def test_a_confidence_outside_0_1_is_refused(confidence):
    with pytest.raises(ValueError, match="confidence"):
        mean_ci([1.0, 0.0], confidence=confidence)

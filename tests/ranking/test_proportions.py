"""ranking.agreement.proportions: Wilson intervals, McNemar's exact test and Newcombe's
interval of a paired difference, against scipy (and statsmodels where installed) on
hand-made cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ranking import McNemarResult, mcnemar, paired_difference_interval, wilson_interval

CASES = [(0, 1), (1, 1), (0, 10), (10, 10), (3, 10), (7, 13), (50, 100), (1, 200), (199, 200)]


@pytest.mark.parametrize(("k", "n"), CASES)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_equals_scipy(k, n, confidence):
    ci = stats.binomtest(k, n).proportion_ci(confidence, method="wilson")
    low, high = wilson_interval(k, n, confidence)
    assert low == pytest.approx(ci.low, abs=1e-12)
    assert high == pytest.approx(ci.high, abs=1e-12)


def test_wilson_equals_statsmodels():
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    for k, n in CASES:
        low, high = proportion.proportion_confint(k, n, alpha=0.05, method="wilson")
        mine = wilson_interval(k, n)
        assert mine == pytest.approx((low, high), abs=1e-12)


def test_wilson_arrays_fractional_and_empty():
    low, high = wilson_interval(np.array([3, 3.5, 4]), np.array([10, 10, 10]))
    assert low.shape == (3,) and np.all(np.diff(low) > 0) and np.all(np.diff(high) > 0)
    assert low[1] < 0.35 < high[1]
    low, high = wilson_interval([0, 2], [0, 4])
    assert math.isnan(low[0]) and math.isnan(high[0]) and 0 < low[1] < 0.5 < high[1]


@pytest.mark.parametrize(
    ("k", "n", "confidence"), [(-1, 3, 0.95), (4, 3, 0.95), (1, 3, 1.0), (math.nan, 3, 0.95)]
)
def test_wilson_refuses_impossible_input(k, n, confidence):
    with pytest.raises(ValueError):
        wilson_interval(k, n, confidence)


def _table(both_right, only_a, only_b, both_wrong):
    a = [1] * both_right + [1] * only_a + [0] * only_b + [0] * both_wrong
    b = [1] * both_right + [0] * only_a + [1] * only_b + [0] * both_wrong
    return np.array(a, float), np.array(b, float)


@pytest.mark.parametrize(
    "counts", [(10, 3, 9, 5), (0, 0, 7, 0), (5, 4, 4, 5), (20, 1, 0, 2), (3, 12, 2, 40)]
)
def test_mcnemar_equals_binomtest_on_the_discordant_items(counts):
    a, b = _table(*counts)
    r = mcnemar(a, b)
    both_right, only_a, only_b, both_wrong = counts
    assert (r.both_right, r.only_a, r.only_b, r.both_wrong) == counts
    assert r.n == sum(counts) and r.n_discordant == only_a + only_b
    expected = stats.binomtest(only_b, only_a + only_b, 0.5).pvalue
    assert r.pvalue == pytest.approx(expected, abs=1e-12)
    assert r.accuracy_a == pytest.approx((both_right + only_a) / r.n)
    assert r.accuracy_b == pytest.approx((both_right + only_b) / r.n)
    assert r.difference == pytest.approx(r.accuracy_b - r.accuracy_a)
    assert r.lower <= r.difference <= r.upper


def test_mcnemar_equals_statsmodels():
    tables = pytest.importorskip("statsmodels.stats.contingency_tables")
    for counts in [(10, 3, 9, 5), (3, 12, 2, 40), (1, 1, 0, 0)]:
        both_right, only_a, only_b, both_wrong = counts
        sm = tables.mcnemar([[both_right, only_a], [only_b, both_wrong]], exact=True)
        assert mcnemar(*_table(*counts)).pvalue == pytest.approx(sm.pvalue, abs=1e-12)


def test_mcnemar_without_discordant_items_or_items():
    r = mcnemar([1, 0, 1], [1, 0, 1])
    assert r.pvalue == 1.0 and r.difference == 0.0 and "no discordant" in r.reason
    r = mcnemar([np.nan, 1], [0, np.nan])
    assert isinstance(r, McNemarResult) and r.n == 0 and math.isnan(r.pvalue)
    assert r.n_dropped_nan == 2 and r.reason


def test_mcnemar_leaves_out_items_missing_for_either_judge():
    r = mcnemar([1, 1, np.nan, 0], [0, 1, 1, np.nan])
    assert r.n == 2 and r.n_dropped_nan == 2 and (r.only_a, r.both_right) == (1, 1)


@pytest.mark.parametrize(
    ("a", "b"), [([1, 0], [1]), ([[1, 0]], [[1, 0]]), ([1, 2], [1, 0]), ([0.5], [1])]
)
def test_mcnemar_refuses_bad_outcomes(a, b):
    with pytest.raises(ValueError):
        mcnemar(a, b)


def _newcombe_twin(e, g, f, h, confidence):
    """Newcombe (1998) method 10 written out from the paper, Wilson limits from scipy."""
    n = e + f + g + h
    p1, p2 = (e + f) / n, (e + g) / n
    ci1 = stats.binomtest(e + f, n).proportion_ci(confidence, method="wilson")
    ci2 = stats.binomtest(e + g, n).proportion_ci(confidence, method="wilson")
    l1, u1, l2, u2 = ci1.low, ci1.high, ci2.low, ci2.high
    a_, b_, c_, d_ = e + f, g + h, e + g, f + h
    phi = (e * h - f * g) / math.sqrt(a_ * b_ * c_ * d_) if a_ * b_ * c_ * d_ else 0.0
    dl = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    du = math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return p1 - p2 - dl, p1 - p2 + du


@pytest.mark.parametrize(
    "counts", [(10, 3, 9, 5), (12, 2, 9, 21), (0, 0, 7, 0), (5, 4, 4, 5), (40, 0, 3, 1)]
)
def test_paired_interval_equals_the_scipy_twin(counts):
    e, g, f, h = counts
    for confidence in (0.9, 0.95):
        low, high = paired_difference_interval(e, g, f, h, confidence)
        twin = _newcombe_twin(e, g, f, h, confidence)
        assert (low, high) == pytest.approx(twin, abs=1e-12)
        assert -1.0 <= low <= (f - g) / sum(counts) <= high <= 1.0


def test_paired_interval_is_antisymmetric_and_near_wald_for_many_items():
    low, high = paired_difference_interval(300, 40, 90, 570)
    low2, high2 = paired_difference_interval(300, 90, 40, 570)
    assert (low, high) == pytest.approx((-high2, -low2), abs=1e-12)
    n, d = 1000, 50 / 1000
    se = math.sqrt(40 + 90 - (90 - 40) ** 2 / n) / n
    assert low == pytest.approx(d - 1.96 * se, abs=0.004)
    assert high == pytest.approx(d + 1.96 * se, abs=0.004)
    assert all(math.isnan(v) for v in paired_difference_interval(0, 0, 0, 0))
    with pytest.raises(ValueError):
        paired_difference_interval(1, -1, 0, 0)


def test_paired_interval_covers_the_true_difference():
    """Simulated coverage of the 95 % interval at n = 40 stays near 95 % (seeded)."""
    rng = np.random.default_rng(0)
    probs = np.array([0.55, 0.1, 0.2, 0.15])  # both right, only A, only B, neither
    truth = probs[2] - probs[1]
    hits = 0
    reps = 2000
    for counts in rng.multinomial(40, probs, size=reps):
        e, g, f, h = (int(c) for c in counts)
        low, high = paired_difference_interval(e, g, f, h)
        hits += low <= truth <= high
    assert 0.93 <= hits / reps <= 0.975

"""Position bias, swap consistency, balanced threshold and debiasing."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ranking import (
    PooledStat,
    alpha_for_tau,
    balanced_threshold,
    debias,
    decide,
    position_bias,
    swap_consistency,
    win_ratio,
)
from tests.ranking import naive


def _biased_P(rng, n_contexts=20, n_items=6, bias=0.8, grid=None, p_missing=0.0):
    s = rng.normal(size=(n_contexts, n_items))
    logit = s[:, :, None] - s[:, None, :] + bias + rng.normal(size=(n_contexts, n_items, n_items))
    P = 1 / (1 + np.exp(-logit))
    if grid is not None:
        P = np.round(P * grid) / grid
    P[rng.random(P.shape) < p_missing] = np.nan
    idx = np.arange(n_items)
    P[:, idx, idx] = np.nan
    P[:, 0, 1] = 0.55
    return P


def test_hand_made_position_bias_and_consistency():
    P = np.full((3, 3), np.nan)
    P[0, 1], P[1, 0] = 0.9, 0.8  # first wins both orders: inconsistent
    P[0, 2], P[2, 0] = 0.7, 0.1  # 0 beats 2 in both orders: consistent
    P[1, 2], P[2, 1] = 0.5, 0.3  # a tie in one order: half
    # first-position wins: 1 + 1 + 1 + 0 + 0.5 + 0 = 3.5 of 6
    assert position_bias(P) == pytest.approx(3.5 / 6)
    assert swap_consistency(P) == pytest.approx((0 + 1 + 0.5) / 3)


def test_unbiased_symmetric_judge_has_half_first_wins():
    s = np.array([2.0, 1.0, 0.0, -1.0])
    P = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
    assert position_bias(P) == pytest.approx(0.5)
    assert swap_consistency(P) == pytest.approx(1.0)


@pytest.mark.parametrize("grid", [None, 5])
def test_match_naive(grid):
    rng = np.random.default_rng(3)
    for _ in range(4):
        P = _biased_P(rng, grid=grid, p_missing=0.25)
        for tau in (0.5, 0.6, 0.4):
            for per in (False, True):
                np.testing.assert_allclose(
                    position_bias(P, tau, per),
                    naive.naive_position_bias(P, tau, per),
                    atol=1e-12,
                    equal_nan=True,
                )
                np.testing.assert_allclose(
                    swap_consistency(P, tau, per),
                    naive.naive_swap_consistency(P, tau, per),
                    atol=1e-12,
                    equal_nan=True,
                )
        for per in (False, True):
            np.testing.assert_allclose(
                balanced_threshold(P, per), naive.naive_balanced_threshold(P, per), atol=0
            )


def test_balanced_threshold_balances_up_to_one_comparison():
    rng = np.random.default_rng(11)
    for n_items in (3, 4, 5, 8):
        P = _biased_P(rng, n_contexts=7, n_items=n_items, p_missing=0.3)
        n_all = np.isfinite(P).sum()
        t = balanced_threshold(P)
        assert abs(position_bias(P, t) - 0.5) * n_all <= 1.0
        # distinct continuous values: exact balance (odd counts: the median counts half)
        assert position_bias(P, t) == pytest.approx(0.5, abs=1e-12)
        tc = balanced_threshold(P, per_context=True)
        for c in range(P.shape[0]):
            n_c = np.isfinite(P[c]).sum()
            assert abs(position_bias(P[c], tc[c]) - 0.5) * n_c <= 1.0


def test_balanced_threshold_with_ties_is_best_possible():
    # hard verdicts only: 0 or 1 (70 % first wins); tau = 1 counts the 1s half
    v = np.array([1.0] * 7 + [0.0] * 3)
    P = np.full((5, 5), np.nan)
    iu = np.argwhere(~np.eye(5, dtype=bool))[:10]
    P[iu[:, 0], iu[:, 1]] = v
    t = balanced_threshold(P)
    assert t == 1.0
    assert position_bias(P, t) == pytest.approx(0.35)
    candidates = [0.0, 0.5, 1.0, 0.25, 0.75]
    assert min(abs(position_bias(P, c) - 0.5) for c in candidates) == pytest.approx(0.15)
    assert t == naive.naive_balanced_threshold(P)


def test_balanced_threshold_hand_made_medians():
    P = np.full((3, 3), np.nan)
    P[0, 1], P[1, 0], P[0, 2], P[2, 0] = 0.9, 0.7, 0.6, 0.2
    assert balanced_threshold(P) == pytest.approx(0.65)
    P[1, 2] = 0.8  # odd count: the median value, counting half
    assert balanced_threshold(P) == pytest.approx(0.7)
    assert position_bias(P, 0.7) == pytest.approx(0.5)


def test_debias_with_alpha_for_tau_takes_the_same_decisions():
    rng = np.random.default_rng(5)
    P = _biased_P(rng, p_missing=0.1)
    for tau in (0.3, 0.5, 0.62, balanced_threshold(P)):
        Pd = debias(P, alpha_for_tau(tau))
        np.testing.assert_array_equal(win_ratio(Pd, 0.5), win_ratio(P, tau))
        assert position_bias(Pd, 0.5) == position_bias(P, tau)
    # dyadic values sitting exactly on tau stay ties
    P2 = np.full((2, 2), np.nan)
    P2[0, 1], P2[1, 0] = 0.25, 0.75
    assert debias(P2, alpha_for_tau(0.25))[0, 1] == 0.5


def test_debias_values_and_per_context_alpha():
    P = np.array([[[np.nan, 0.5], [0.2, np.nan]], [[np.nan, 0.5], [1.0, np.nan]]])
    out = debias(P, np.array([1.0, 3.0]))
    np.testing.assert_allclose(out[0], P[0], equal_nan=True)
    assert out[1, 0, 1] == pytest.approx(0.75)  # 3 * .5 / (3 * .5 + .5)
    assert out[1, 1, 0] == 1.0 and np.isnan(out[1, 0, 0])
    assert alpha_for_tau(0.25) == pytest.approx(3.0)
    np.testing.assert_allclose(alpha_for_tau([0.5, 0.2]), [1.0, 4.0])


def test_balanced_debias_removes_bias_on_biased_judge():
    rng = np.random.default_rng(9)
    P = _biased_P(rng, n_contexts=40, n_items=8, bias=1.0)
    assert position_bias(P) > 0.6
    t = balanced_threshold(P)
    assert position_bias(debias(P, alpha_for_tau(t))) == pytest.approx(0.5, abs=1 / P.size)
    # removing the bias makes the two orders agree more often
    assert swap_consistency(P, t) > swap_consistency(P)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: alpha_for_tau(0.0), "0 < tau < 1"),
        (lambda: alpha_for_tau(1.0), "0 < tau < 1"),
        (lambda: debias(np.full((2, 2), 0.5), 0.0), "positive"),
        (lambda: debias(np.full((2, 2), 0.5), np.inf), "positive"),
        (lambda: debias(np.full((2, 2), 1.5), 1.0), r"\[0, 1\]"),
        (lambda: debias(np.zeros(0), 1.0), "empty"),
        (lambda: debias(np.full((3, 2, 2), 0.5), [1.0, 2.0]), "does not fit"),
        (lambda: balanced_threshold(np.zeros((1, 1))), "at least 2"),
        (lambda: position_bias(np.full((2, 2), 0.5), tau=-0.1), "tau"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_swap_consistency_needs_both_orders():
    P = np.full((3, 3), np.nan)
    P[0, 1] = P[1, 2] = 0.7
    swap = swap_consistency(P)
    assert np.isnan(swap) and swap.n_contexts == 0 and "both orders" in swap.reason
    assert np.isnan(swap_consistency(P, per_context=True)[0])


# ---------------------------------------------------------------------------- holes in P


def test_context_without_any_comparison_is_skipped_and_counted():
    # one item's verdicts all failed to parse: its block of P is all NaN. Pooled values are
    # those of the other contexts, with the skip counted; per context it is NaN.
    rng = np.random.default_rng(31)
    P = _biased_P(rng, n_contexts=6, p_missing=0.2)
    P[3] = np.nan
    rest = np.delete(P, 3, axis=0)
    for stat in (position_bias, swap_consistency, balanced_threshold):
        pooled = stat(P)
        assert isinstance(pooled, float)
        assert pooled == pytest.approx(stat(rest)), stat.__name__
        assert (pooled.n_contexts, pooled.n_skipped) == (5, 1), stat.__name__
        per = stat(P, per_context=True)
        assert np.isnan(per[3]), stat.__name__
        np.testing.assert_allclose(np.delete(per, 3), stat(rest, per_context=True))
    # every other statistic is unchanged for the contexts that have comparisons
    np.testing.assert_allclose(win_ratio(P)[[0, 1, 2, 4, 5]], win_ratio(rest))
    assert np.isnan(win_ratio(P)[3]).all()


def test_skips_count_what_each_statistic_needs():
    # context 0: pairs in both orders; context 1: comparisons in one order only, which
    # position bias uses but swap consistency must skip; context 2: nothing at all
    P = np.full((3, 3, 3), np.nan)
    P[0, 0, 1], P[0, 1, 0] = 0.9, 0.2
    P[1, 0, 1] = P[1, 1, 2] = 0.7
    pb = position_bias(P)
    swap = swap_consistency(P)
    assert (pb.n_contexts, pb.n_skipped) == (2, 1)
    assert (swap.n_contexts, swap.n_skipped) == (1, 2)
    assert pb == pytest.approx(3 / 4) and swap == 1.0
    np.testing.assert_array_equal(np.isnan(swap_consistency(P, per_context=True)), [0, 1, 1])
    full = position_bias(_biased_P(np.random.default_rng(1)))
    assert full.n_skipped == 0 and full.n_contexts == 20


def test_pooled_value_survives_pickling_and_arithmetic():
    import pickle

    P = np.full((2, 3, 3), np.nan)
    P[0, 0, 1] = 0.8
    pb = position_bias(P)
    back = pickle.loads(pickle.dumps(pb))  # the pages cache results with pickle
    assert back == pb == 1.0 and (back.n_contexts, back.n_skipped) == (1, 1)
    assert type(pb + 0.0) is float and f"{pb:.2f}" == "1.00"


def test_nothing_usable_in_any_context_is_nan_with_a_reason_not_an_error():
    # every answer unparsed: P has no comparison at all; the pooled values are undefined
    empty = np.full((2, 3, 3), np.nan)
    for stat in (position_bias, swap_consistency, balanced_threshold):
        value = stat(empty)
        assert isinstance(value, PooledStat) and np.isnan(value), stat.__name__
        assert (value.n_contexts, value.n_skipped) == (0, 2), stat.__name__
        assert "none of the 2 context" in value.reason, stat.__name__
        assert np.isnan(stat(empty, per_context=True)).all(), stat.__name__
    assert "no comparison" in position_bias(empty).reason
    assert "no comparison" in balanced_threshold(empty).reason
    P = np.full((2, 3, 3), np.nan)
    P[0, 0, 1] = 0.6  # one order only, nowhere both
    swap = swap_consistency(P)
    assert np.isnan(swap) and swap.n_contexts == 0
    assert re.search(r"both orders.*none of the 2 context", swap.reason)
    # a defined value has no reason
    assert position_bias(P).reason == "" and position_bias(P) == 1.0


def test_per_context_tau_decides_each_context_at_its_own_threshold():
    rng = np.random.default_rng(17)
    P = _biased_P(rng, n_contexts=5, grid=8, p_missing=0.1)
    taus = np.array([0.5, 0.625, 0.375, 0.5, 0.75])
    for stat in (position_bias, swap_consistency):
        per = stat(P, tau=taus, per_context=True)
        for c in range(5):
            assert per[c] == stat(P[c], tau=taus[c]), stat.__name__
        # pooled: every comparison decided at its context's tau (decide's rule), then pooled
        assert stat(P, tau=taus) == stat(decide(P, taus), tau=0.5), stat.__name__
        assert stat(P, tau=taus) != stat(P, tau=0.5), stat.__name__
    with pytest.raises(ValueError, match="one per context"):
        position_bias(P, tau=taus[:2])

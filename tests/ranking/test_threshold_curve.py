"""threshold_curve equals the per-threshold loop of the dense functions it replaces.

The loop is what the Position bias page's tau curve did before (``rerank`` at each tau):
``position_bias``, ``pairwise_accuracy`` and the mean over contexts, where finite, of
``spearman(win_ratio(P, tau), reference)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import data
from data.arrays import comparisons_to_P, scores_to_matrix
from ranking import (
    pairwise_accuracy,
    position_bias,
    spearman,
    threshold_curve,
    win_ratio,
)

GRID = np.round(np.linspace(0.0, 1.0, 101), 2)


def _mean_finite(v):
    v = np.asarray(v, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def _loop(P, taus, ref, weights):
    pb, acc, rho = [], [], []
    for t in taus:
        t = float(t)
        pb.append(float(position_bias(P, t, weights=weights)))
        if ref is None:
            acc.append(math.nan)
            rho.append(math.nan)
            continue
        acc.append(float(pairwise_accuracy(P, ref, t)))
        rho.append(_mean_finite(spearman(win_ratio(P, t, weights=weights), ref)))
    return np.array(pb), np.array(acc), np.array(rho)


def _check(P, taus, ref=None, weights=None):
    curve = threshold_curve(P, taus, ref, weights)
    pb, acc, rho = _loop(P, taus, ref, weights)
    np.testing.assert_array_equal(curve.tau, taus)
    for got, want in ((curve.position_bias, pb), (curve.accuracy, acc), (curve.spearman, rho)):
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    return curve


def _holey(rng, n_contexts=12, n=7, holes=0.5, levels=None):
    P = rng.random((n_contexts, n, n)) if levels is None else rng.choice(levels, (n_contexts, n, n))
    P[rng.random(P.shape) < holes] = np.nan
    return P


def test_demo_P_against_its_human_reference():
    demo = data.demo_dataset()
    rows = demo.comparisons
    rows = rows[
        (rows["attribute"] == "consistency")
        & (rows["judge"] == "demo-judge (simulated)")
        & rows["p_first"].notna()
    ]
    pm = comparisons_to_P(rows, attribute="consistency", judge="demo-judge (simulated)")
    ref = scores_to_matrix(demo.human_scores, pm, attribute="consistency")
    curve = _check(pm.P, GRID, ref, pm.weights)
    # the demo judge favours the first slot at 0.5, and the rate falls as tau rises
    assert curve.position_bias[50] > 0.5
    assert np.all(np.diff(curve.position_bias) <= 0)


@pytest.mark.parametrize("seed", range(4))
def test_random_holey_P_with_weights(seed):
    rng = np.random.default_rng(seed)
    P = _holey(rng)
    ref = rng.integers(1, 5, P.shape[:2]).astype(float)  # integer scores: ties
    ref[rng.random(ref.shape) < 0.15] = np.nan
    weights = rng.random(P.shape) * 3 + 0.1
    _check(P, GRID, ref, weights)
    _check(P, GRID, ref, np.where(rng.random(P.shape) < 0.3, 3.0, 1.0))  # Arena's 1 and 3
    _check(P, GRID, ref)


@pytest.mark.parametrize("seed", range(3))
def test_ties_at_tau_graded_verdicts(seed):
    # Arena-style graded labels: many cells exactly at the thresholds of the grid, so
    # decisions of 0.5 and many tied win-ratios
    rng = np.random.default_rng(10 + seed)
    P = _holey(rng, n_contexts=20, n=6, holes=0.4, levels=[0.0, 0.25, 0.5, 0.75, 1.0])
    ref = rng.integers(1, 4, P.shape[:2]).astype(float)
    weights = np.where(rng.random(P.shape) < 0.5, 3.0, 1.0)
    _check(P, GRID, ref, weights)
    _check(P, np.array([0.25, 0.5, 0.5, 0.0, 1.0, 0.3]), ref)  # repeated, unsorted taus


def test_star_shaped_contexts_like_arena():
    # every context compares the baseline (item 0) with the others, in both orders
    rng = np.random.default_rng(3)
    n_contexts, n = 30, 9
    P = np.full((n_contexts, n, n), np.nan)
    P[:, 0, 1:] = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], (n_contexts, n - 1))
    P[:, 1:, 0] = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], (n_contexts, n - 1))
    ref = rng.random((n_contexts, n))
    weights = np.where(np.isfinite(P) & (rng.random(P.shape) < 0.3), 3.0, 1.0)
    _check(P, GRID, ref, weights)


def test_all_nan_contexts_and_missing_references():
    rng = np.random.default_rng(5)
    P = _holey(rng, n_contexts=8, n=5, holes=0.3)
    P[[1, 4]] = np.nan  # contexts without any comparison
    ref = rng.random(P.shape[:2])
    ref[2] = np.nan  # a context without reference
    ref[3] = 1.0  # a constant reference: rho undefined there, accuracy has no pair
    ref[6, :3] = np.nan
    _check(P, GRID, ref, rng.random(P.shape) + 0.5)
    _check(P, GRID, ref)


def test_no_reference_and_no_usable_reference():
    rng = np.random.default_rng(6)
    P = _holey(rng, n_contexts=5, n=4, holes=0.2)
    curve = _check(P, GRID)
    assert np.isnan(curve.accuracy).all() and np.isnan(curve.spearman).all()
    # a reference with no two different finite scores: accuracy and Spearman undefined
    curve = _check(P, GRID, np.ones(P.shape[:2]))
    assert np.isnan(curve.accuracy).all() and np.isnan(curve.spearman).all()


def test_one_context_2d_P_and_empty_grid():
    P = np.array([[np.nan, 0.7, 0.2], [0.4, np.nan, 0.5], [0.9, 0.5, np.nan]])
    _check(P, GRID, np.array([[3.0, 1.0, 2.0]]))
    np.testing.assert_array_equal(
        threshold_curve(P, GRID, np.array([3.0, 1.0, 2.0])).spearman,
        threshold_curve(P, GRID, np.array([[3.0, 1.0, 2.0]])).spearman,
    )
    curve = threshold_curve(P, np.array([]))
    assert curve.position_bias.shape == (0,)


def test_bad_input_is_refused_clearly():
    P = np.array([[np.nan, 0.7], [0.4, np.nan]])
    with pytest.raises(ValueError, match=r"taus\[1\] = 1.5"):
        threshold_curve(P, [0.5, 1.5])
    with pytest.raises(ValueError, match="1-D"):
        threshold_curve(P, 0.5)
    with pytest.raises(ValueError, match="no comparison at all"):
        threshold_curve(np.full((2, 3, 3), np.nan), GRID)
    with pytest.raises(ValueError, match="reference must have shape"):
        threshold_curve(P, GRID, np.ones(3))
    with pytest.raises(ValueError, match="weights"):
        threshold_curve(P, GRID, weights=np.array([[1.0, -1.0], [1.0, 1.0]]))


def test_tied_win_ratios_stay_tied_under_float_weights():
    # Weights such as 0.1 + 0.2 round differently in another order: the wins must be summed
    # in win_ratio's order, or win-ratios equal there come out unequal and the Spearman
    # ranks differ (seed 15 does this when the order is reversed).
    for seed in range(20):
        rng = np.random.default_rng(seed)
        P = rng.choice([0.0, 1.0], (6, 5, 5))
        P[rng.random(P.shape) < 0.3] = np.nan
        ref = rng.random((6, 5))
        _check(P, np.array([0.5]), ref, rng.choice([0.1, 0.2, 0.3, 0.7], P.shape))

"""win_ratio against its loop twin, hand-made cases and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import win_ratio
from tests.ranking import naive


def _random_P(rng, n_contexts, n_items, p_missing=0.2, grid=None):
    P = rng.random((n_contexts, n_items, n_items))
    if grid is not None:  # coarse values: many exact ties with tau
        P = np.round(P * grid) / grid
    P[rng.random(P.shape) < p_missing] = np.nan
    idx = np.arange(n_items)
    P[:, idx, idx] = np.nan
    P[:, 0, 1] = 0.7  # every context keeps at least one comparison
    return P


def test_three_cycle_gives_equal_scores():
    P = np.full((3, 3), np.nan)
    P[0, 1] = P[1, 2] = P[2, 0] = 0.9
    np.testing.assert_array_equal(win_ratio(P, tau=0.5), [[0.5, 0.5, 0.5]])
    np.testing.assert_allclose(win_ratio(P), [[0.5, 0.5, 0.5]])


def test_hand_made_counts_first_and_second_positions():
    # 0 beats 1 (as first), 2 beats 0 (as second: p = 0.2 < 0.5), 1 vs 2 is a tie.
    P = np.full((3, 3), np.nan)
    P[0, 1] = 0.8
    P[0, 2] = 0.2
    P[1, 2] = 0.5
    np.testing.assert_allclose(win_ratio(P, tau=0.5), [[1 / 2, 0.5 / 2, 1.5 / 2]])
    np.testing.assert_allclose(win_ratio(P), [[1.0 / 2, 0.7 / 2, 1.3 / 2]])
    # a threshold of 0.1 makes every first candidate win: 0 > 1, 0 > 2, 1 > 2
    np.testing.assert_allclose(win_ratio(P, tau=0.1), [[1.0, 0.5, 0.0]])


def test_clear_order_and_padding():
    # 4 real candidates with a clear order, padded to N = 5: the padding scores NaN.
    strength = np.array([3.0, 2.0, 1.0, 0.0])
    P = np.full((5, 5), np.nan)
    P[:4, :4] = 1 / (1 + np.exp(-(strength[:, None] - strength[None, :])))
    s = win_ratio(P, tau=0.5)[0]
    assert np.isnan(s[4])
    np.testing.assert_array_equal(s[:4], [1.0, 2 / 3, 1 / 3, 0.0])


@pytest.mark.parametrize("soft", [False, True])
@pytest.mark.parametrize("grid", [None, 4])
def test_matches_naive_on_random_cases(soft, grid):
    rng = np.random.default_rng(7)
    for _ in range(5):
        P = _random_P(rng, 6, 7, grid=grid)
        for tau in (0.5, 0.25, 0.6):
            np.testing.assert_allclose(
                win_ratio(P, tau=None if soft else tau),
                naive.naive_win_ratio(P, tau, soft),
                rtol=0,
                atol=1e-12,
                equal_nan=True,
            )


def test_item_without_comparisons_is_nan_not_a_number_made_up():
    P = np.full((4, 4), np.nan)
    P[0, 1] = 0.9
    P[2, 0] = 0.4
    s = win_ratio(P, tau=0.5)[0]
    assert np.isnan(s[3]) and np.isfinite(s[:3]).all()


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros((2, 3)), "shape"),
        (np.zeros((2, 3, 4)), "shape"),
        (np.zeros((1, 1, 1)), "at least 2"),
        (np.zeros((0, 3, 3)), "no contexts"),
        (np.full((2, 3, 3), 1.5), r"\[0, 1\]"),
        (np.full((2, 3, 3), np.nan), "no comparison"),  # nothing to rank at all
        (np.zeros(0), "shape"),
    ],
)
def test_bad_input_raises(bad, match):
    with pytest.raises(ValueError, match=match):
        win_ratio(bad)


def test_bad_tau_raises():
    with pytest.raises(ValueError, match="tau"):
        win_ratio(np.full((2, 2), 0.5), tau=1.5)


def test_context_without_any_comparison_gets_nan_scores():
    rng = np.random.default_rng(41)
    P = _random_P(rng, 3, 4)
    P[1] = np.nan  # every comparison of this context unparsed
    for tau in (0.5, None):
        s = win_ratio(P, tau=tau)
        assert np.isnan(s[1]).all()
        np.testing.assert_allclose(s[[0, 2]], win_ratio(P[[0, 2]], tau=tau))


def test_tau_none_is_soft_and_the_default():
    P = np.full((3, 3), np.nan)
    P[0, 1], P[0, 2], P[1, 2] = 0.8, 0.2, 0.5
    np.testing.assert_array_equal(win_ratio(P), win_ratio(P, tau=None))
    np.testing.assert_allclose(win_ratio(P), naive.naive_win_ratio(P, soft=True))


def test_per_context_tau_decides_each_context_at_its_own_threshold():
    rng = np.random.default_rng(43)
    P = _random_P(rng, 4, 5, grid=4)
    taus = np.array([0.5, 0.25, 0.75, 0.5])
    got = win_ratio(P, tau=taus)
    for c in range(4):
        np.testing.assert_allclose(got[c], win_ratio(P[c], tau=taus[c])[0], equal_nan=True)
        np.testing.assert_allclose(got[c], naive.naive_win_ratio(P[c : c + 1], taus[c])[0])
    with pytest.raises(ValueError, match=r"one per context, shape \(4,\)"):
        win_ratio(P, tau=taus[:3])
    with pytest.raises(ValueError, match=r"tau\[1\] = 1.5"):
        win_ratio(P, tau=[0.5, 1.5, 0.5, 0.5])

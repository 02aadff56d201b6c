"""Several rankings at once (ranking/agreement/metrics.py): Kendall between score sets against
scipy, and the pairwise order of a ranking against a hand-made matrix and Kendall's tau."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from ranking import kendall_matrix, order_matrix, pairwise_accuracy


def test_kendall_matrix_matches_scipy_per_pair():
    rng = np.random.default_rng(11)
    S = rng.integers(1, 6, size=(4, 15)).astype(float)  # ties, as Likert means have
    S[2, 3] = np.nan
    got = kendall_matrix(S)
    for i, j in itertools.product(range(4), repeat=2):
        keep = np.isfinite(S[i]) & np.isfinite(S[j])
        assert got[i, j] == pytest.approx(stats.kendalltau(S[i, keep], S[j, keep]).statistic)
    np.testing.assert_allclose(got, got.T)
    c = kendall_matrix(S, variant="c")
    assert c[0, 1] == pytest.approx(stats.kendalltau(S[0], S[1], variant="c").statistic)


def test_kendall_matrix_per_context_is_the_mean_of_defined_taus():
    rng = np.random.default_rng(5)
    S = rng.normal(size=(3, 6, 5))
    S[1, 2] = 1.0  # a constant context: tau undefined there, left out of the mean
    S[0, 4, :3] = np.nan
    got = kendall_matrix(S)
    for i, j in itertools.product(range(3), repeat=2):
        taus = []
        for c in range(6):
            keep = np.isfinite(S[i, c]) & np.isfinite(S[j, c])
            t = stats.kendalltau(S[i, c, keep], S[j, c, keep]).statistic
            if np.isfinite(t):
                taus.append(t)
        assert got[i, j] == pytest.approx(np.mean(taus))
    assert np.isnan(kendall_matrix(np.ones((2, 3, 4)))).all()
    with pytest.raises(ValueError, match="n_sets"):
        kendall_matrix(np.ones(5))


def test_order_matrix_by_hand_and_accuracy_against_kendall():
    got = order_matrix([[3.0, 1.0, 3.0, np.nan]])
    want = np.array(
        [[np.nan, 1, 0.5, np.nan], [0, np.nan, 0, np.nan], [0.5, 1, np.nan, np.nan], [np.nan] * 4]
    )
    np.testing.assert_array_equal(got[0], want)
    # without ties, the pairwise accuracy of a ranking is (1 + Kendall tau) / 2
    rng = np.random.default_rng(2)
    s, ref = rng.normal(size=(1, 12)), rng.normal(size=(1, 12))
    acc = pairwise_accuracy(order_matrix(s), ref)
    assert acc == pytest.approx((1 + stats.kendalltau(s[0], ref[0]).statistic) / 2)
    with pytest.raises(ValueError, match="n_contexts, N"):
        order_matrix(np.ones(4))

"""Rank correlations against scipy and pairwise accuracy against its loop twin."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ranking import decide, kendall, pairwise_accuracy, spearman
from ranking.agreement.metrics import _doubled_centred_ranks, _spearman_preranked
from tests.ranking import naive


def _rows_with_ties_and_nans(rng, n_rows, n, levels=4, p_nan=0.2):
    a = rng.integers(0, levels, size=(n_rows, n)).astype(float)
    b = a + rng.integers(0, levels, size=(n_rows, n))
    a[rng.random(a.shape) < p_nan] = np.nan
    b[rng.random(b.shape) < p_nan] = np.nan
    return a, b


@pytest.mark.parametrize("n", [2, 3, 7, 16, 60, 200])
def test_spearman_matches_scipy_with_ties_and_nans(n):
    rng = np.random.default_rng(n)
    for levels in (3, 50):
        a, b = _rows_with_ties_and_nans(rng, 40, n, levels=levels)
        got = spearman(a, b)
        np.testing.assert_allclose(got, naive.naive_spearman(a, b), atol=1e-12, equal_nan=True)
        assert np.isfinite(got).sum() > (3 if n < 4 else 10)


@pytest.mark.parametrize("n", [2, 3, 7, 16, 60])
@pytest.mark.parametrize("variant", ["b", "c"])
def test_kendall_matches_scipy_with_ties_and_nans(n, variant):
    rng = np.random.default_rng(100 + n)
    for levels in (3, 50):
        a, b = _rows_with_ties_and_nans(rng, 40, n, levels=levels)
        got = kendall(a, b, variant=variant)
        np.testing.assert_allclose(
            got, naive.naive_kendall(a, b, variant), atol=1e-12, equal_nan=True
        )


def test_hand_made_values_and_undefined_cases():
    assert spearman([1, 2, 3], [1, 2, 3]) == 1.0
    assert spearman([1, 2, 3], [3, 2, 1]) == -1.0
    assert kendall([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(
        stats.spearmanr([1, 2, 2, 3], [1, 2, 3, 4])[0]
    )
    # NaN positions are left out (pairwise-complete)
    assert spearman([1, np.nan, 3, 2], [1, 5, 3, 2]) == 1.0
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))  # constant row
    assert np.isnan(kendall([1, 1, 1], [1, 2, 3]))
    assert np.isnan(spearman([1, np.nan], [np.nan, 2]))  # fewer than 2 valid


def test_axis_and_shapes():
    rng = np.random.default_rng(1)
    a = rng.random((3, 4, 5))
    b = rng.random((3, 4, 5))
    out = spearman(a, b, axis=1)
    assert out.shape == (3, 5)
    assert out[2, 1] == pytest.approx(stats.spearmanr(a[2, :, 1], b[2, :, 1])[0])
    assert isinstance(kendall(a[0, 0], b[0, 0]), float)


def test_preranked_kernel_matches_scipy():
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(2, 20))
        x = rng.integers(0, 4, n).astype(float)
        y = rng.integers(0, 5, n).astype(float)
        rc = np.empty(n, dtype=np.int64)
        _doubled_centred_ranks(y, n, rc)
        np.testing.assert_array_equal(rc, 2 * naive.naive_avg_ranks(y) - (n + 1))
        got = _spearman_preranked(x, n, rc, int((rc * rc).sum()))
        np.testing.assert_allclose(got, naive.naive_spearman(x, y)[0], atol=1e-12, equal_nan=True)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: spearman([1, 2], [1, 2, 3]), "same shape"),
        (lambda: spearman([], []), "empty"),
        (lambda: spearman(1.0, 2.0), "at least one dimension"),
        (lambda: kendall([1, 2], [1, 2], variant="a"), "variant"),
        (lambda: spearman(np.ones((2, 2)), np.ones((2, 2)), axis=3), "axis"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_pairwise_accuracy_hand_made():
    P = np.full((3, 3), np.nan)
    P[0, 1], P[1, 0] = 0.9, 0.4  # 0 beats 1 in both orders: both right
    P[1, 2] = 0.5  # a tie: half right
    P[0, 2] = 0.1  # 2 beats 0: wrong
    ref = np.array([3.0, 2.0, 1.0])
    assert pairwise_accuracy(P, ref) == pytest.approx((1 + 1 + 0.5 + 0) / 4)
    # equal reference scores are left out
    ref2 = np.array([3.0, 1.0, 1.0])
    assert pairwise_accuracy(P, ref2) == pytest.approx((1 + 1 + 0) / 3)


def test_pairwise_accuracy_matches_naive():
    rng = np.random.default_rng(2)
    for _ in range(5):
        P = np.round(rng.random((6, 5, 5)) * 6) / 6
        P[rng.random(P.shape) < 0.3] = np.nan
        P[:, 0, 1] = 0.3
        ref = rng.integers(0, 3, size=(6, 5)).astype(float)
        ref[rng.random(ref.shape) < 0.2] = np.nan
        for tau in (0.5, 1 / 3):
            for per in (False, True):
                np.testing.assert_allclose(
                    pairwise_accuracy(P, ref, tau, per),
                    naive.naive_pairwise_accuracy(P, ref, tau, per),
                    atol=1e-12,
                    equal_nan=True,
                )


def test_pairwise_accuracy_bad_input():
    P = np.full((2, 3, 3), 0.6)
    with pytest.raises(ValueError, match="shape"):
        pairwise_accuracy(P, np.ones((2, 4)))
    tied = pairwise_accuracy(P, np.ones((2, 3)))  # every reference tied: undefined, not 0
    assert np.isnan(tied) and (tied.n_contexts, tied.n_skipped) == (0, 2)
    assert "undefined" in tied.reason and "none of the 2 context" in tied.reason
    out = pairwise_accuracy(P, np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]), per_context=True)
    assert np.isnan(out[0]) and np.isfinite(out[1])


def test_pairwise_accuracy_skips_a_context_without_comparisons():
    rng = np.random.default_rng(37)
    P = rng.random((4, 5, 5))
    P[2] = np.nan  # every verdict about this item unparsed
    ref = rng.integers(0, 4, size=(4, 5)).astype(float)
    rest, ref_rest = np.delete(P, 2, axis=0), np.delete(ref, 2, axis=0)
    acc = pairwise_accuracy(P, ref)
    assert acc == pytest.approx(pairwise_accuracy(rest, ref_rest))
    assert (acc.n_contexts, acc.n_skipped) == (3, 1)
    per = pairwise_accuracy(P, ref, per_context=True)
    assert np.isnan(per[2])
    np.testing.assert_allclose(
        np.delete(per, 2), pairwise_accuracy(rest, ref_rest, per_context=True)
    )
    # a context whose reference is all tied is skipped (and counted) the same way
    ref[0] = 1.0
    assert pairwise_accuracy(P, ref).n_skipped == 2


def test_pairwise_accuracy_per_context_tau_and_no_comparison_anywhere():
    rng = np.random.default_rng(53)
    P = np.round(rng.random((3, 4, 4)) * 4) / 4
    ref = rng.random((3, 4))
    taus = np.array([0.25, 0.5, 0.75])
    per = pairwise_accuracy(P, ref, tau=taus, per_context=True)
    for c in range(3):
        assert per[c] == pytest.approx(float(pairwise_accuracy(P[c], ref[c], tau=taus[c])))
    assert pairwise_accuracy(P, ref, tau=taus) == pytest.approx(
        float(pairwise_accuracy(decide(P, taus), ref))
    )
    # every answer unparsed: NaN with the reason, no exception for the caller to catch
    acc = pairwise_accuracy(np.full((2, 3, 3), np.nan), np.ones((2, 3)))
    assert np.isnan(acc) and acc.n_contexts == 0 and "undefined" in acc.reason

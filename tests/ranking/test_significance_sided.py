"""One-sided Williams tests (ranking.williams_test / williams_matrix, ``alternative=``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ranking import williams_matrix, williams_test
from ranking.agreement import ALTERNATIVES
from tests.ranking.agreement_twins import bh_twin, panel_data, scipy_corr, williams_twin


@pytest.mark.parametrize(
    ("r_jh", "r_kh", "r_jk", "n"),
    [(0.40, 0.25, 0.30, 60), (0.10, 0.35, 0.50, 25), (0.2559, 0.2170, 0.3200, 960)],
)
def test_williams_sides_are_the_t_tails(r_jh, r_kh, r_jk, n):
    t, p_two = williams_twin(r_jh, r_kh, r_jk, n)
    two = williams_test(r_jh, r_kh, r_jk, n)
    greater = williams_test(r_jh, r_kh, r_jk, n, alternative="greater")
    less = williams_test(r_jh, r_kh, r_jk, n, alternative="less")
    assert two.statistic == greater.statistic == less.statistic == pytest.approx(t)
    assert two.pvalue == pytest.approx(p_two)
    assert greater.pvalue == pytest.approx(stats.t.sf(t, n - 3), rel=1e-12)
    assert less.pvalue == pytest.approx(stats.t.cdf(t, n - 3), rel=1e-12)
    assert greater.pvalue + less.pvalue == pytest.approx(1.0)
    # The one-sided p in the direction of the observed difference is half the two-sided.
    assert min(greater.pvalue, less.pvalue) == pytest.approx(two.pvalue / 2)
    assert (greater.alternative, two.alternative) == ("greater", "two-sided")
    # Swapping the judges swaps the sides.
    swapped = williams_test(r_kh, r_jh, r_jk, n, alternative="less")
    assert swapped.pvalue == pytest.approx(greater.pvalue)


def test_williams_hand_value_of_the_one_sided_test():
    # t by hand: r_jh=.5, r_kh=.3, r_jk=.4, n=50; |R| = 1-.25-.09-.16+2*.06 = .62
    det = 1 - 0.25 - 0.09 - 0.16 + 2 * 0.5 * 0.3 * 0.4
    var = 2 * 49 / 47 * det + 0.4**2 * 0.6**3
    t = 0.2 * np.sqrt(49 * 1.4) / np.sqrt(var)
    res = williams_test(0.5, 0.3, 0.4, 50, alternative="greater")
    assert res.statistic == pytest.approx(t, rel=1e-12)
    assert res.pvalue == pytest.approx(stats.t.sf(t, 47), rel=1e-12)
    # Half the two-sided p of the same data (t > 0): .079 one-sided, .157 two-sided.
    assert res.pvalue == pytest.approx(williams_test(0.5, 0.3, 0.4, 50).pvalue / 2)


def test_williams_equal_correlations_and_bad_alternative():
    # Perfectly collinear judges: the variance term vanishes, no evidence either way.
    assert williams_test(0.3, 0.3, 1.0, 20, alternative="greater").pvalue == 0.5
    assert williams_test(0.3, 0.3, 1.0, 20).pvalue == 1.0
    with pytest.raises(ValueError, match="alternative"):
        williams_test(0.3, 0.2, 0.1, 20, alternative="bigger")
    assert set(ALTERNATIVES) == {"two-sided", "greater", "less"}


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_williams_matrix_one_sided_against_pairwise_tests(alternative):
    j, h, _, _ = panel_data()
    rng = np.random.default_rng(14)
    S = np.column_stack([j, np.round(h + rng.normal(0, 2, h.size)), rng.normal(size=h.size)])
    S[7, 1] = np.nan
    n_j = S.shape[1]
    res = williams_matrix(S, h, method="kendall", alternative=alternative)
    two = williams_matrix(S, h, method="kendall")
    assert res.alternative == alternative
    np.testing.assert_allclose(res.statistic, two.statistic, equal_nan=True)
    for a in range(n_j):
        for b in range(n_j):
            if a == b:
                continue
            ok = np.isfinite(S[:, a]) & np.isfinite(S[:, b]) & np.isfinite(h)
            ra = scipy_corr(S[ok, a], h[ok], "kendall")
            rb = scipy_corr(S[ok, b], h[ok], "kendall")
            rab = scipy_corr(S[ok, a], S[ok, b], "kendall")
            t, _ = williams_twin(ra, rb, rab, ok.sum())
            tail = stats.t.sf if alternative == "greater" else stats.t.cdf
            assert res.pvalue[a, b] == pytest.approx(tail(t, ok.sum() - 3), rel=1e-9)
    # One-sided: every ordered pair is a hypothesis, and all of them form the BH family.
    off = ~np.eye(n_j, dtype=bool)
    np.testing.assert_allclose(res.pvalue[off] + res.pvalue.T[off], 1.0)
    np.testing.assert_allclose(res.pvalue_adjusted[off], bh_twin(res.pvalue[off]), rtol=1e-12)
    # Two-sided stays symmetric with the unordered pairs as its family.
    iu = np.triu_indices(n_j, 1)
    np.testing.assert_allclose(two.pvalue_adjusted[iu], bh_twin(two.pvalue[iu]), rtol=1e-12)
    np.testing.assert_allclose(two.pvalue, two.pvalue.T, equal_nan=True)

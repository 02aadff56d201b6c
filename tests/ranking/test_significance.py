"""Significance tests (ranking/agreement/significance.py) against scipy, published values and
twins."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from ranking import (
    bh_adjust,
    correlation,
    paired_shift,
    permutation_test,
    welch_t,
    williams_matrix,
    williams_test,
)
from ranking.agreement import UNITS
from tests.ranking.agreement_twins import bh_twin, williams_twin


def test_welch_matches_scipy_and_hand_df():
    rng = np.random.default_rng(10)
    a = rng.normal(3, 1, 40)
    b = np.r_[rng.normal(3.5, 2, 25), np.nan]
    res = welch_t(a, b)
    bb = b[:-1]
    want = stats.ttest_ind(a, bb, equal_var=False)
    va, vb = a.var(ddof=1) / a.size, bb.var(ddof=1) / bb.size
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (bb.size - 1))
    assert (res.statistic, res.pvalue, res.df) == (
        pytest.approx(want.statistic),
        pytest.approx(want.pvalue),
        pytest.approx(df),
    )
    assert (res.n_a, res.n_b, res.n_dropped_nan) == (40, 25, 1)
    assert res.std_b == pytest.approx(bb.std(ddof=1))
    const = welch_t([1.0, 1, 1], [2.0, 2])
    assert np.isnan(const.statistic) and "constant" in const.reason
    few = welch_t([1.0, 2], [1.0, np.nan])
    assert np.isnan(few.statistic) and np.isnan(few.pvalue)
    assert "group b has 1 valid" in few.reason
    assert (few.n_b, few.mean_b, few.n_dropped_nan) == (1, 1.0, 1) and np.isnan(few.std_b)


def test_williams_matches_twin_and_hand_value():
    # Steiger (1980) style example r12=.4, r13=.5, r23=.1, n=103: t = -0.891 by eq. 7.
    res = williams_test(0.4, 0.5, 0.1, 103)
    assert (round(res.statistic, 3), round(res.pvalue, 3), res.df) == (-0.891, 0.375, 100)
    rng = np.random.default_rng(12)
    for _ in range(20):
        X = rng.normal(size=(50, 3)) @ rng.normal(size=(3, 3))
        C = np.corrcoef(X.T)
        got = williams_test(C[0, 1], C[0, 2], C[1, 2], 50)
        np.testing.assert_allclose(
            [got.statistic, got.pvalue],
            williams_twin(C[0, 1], C[0, 2], C[1, 2], 50),
            atol=1e-12,
        )
    same = williams_test(0.3, 0.3, 0.5, 20)
    assert (same.statistic, same.pvalue) == (0.0, 1.0)
    # Undefined on these data: NaN with the reason, not an exception callers must catch.
    few = williams_test(0.3, 0.2, 0.5, 3)
    assert np.isnan(few.statistic) and np.isnan(few.pvalue) and "n >= 4" in few.reason
    odd = williams_test(0.9, -0.9, 0.99, 30)
    assert np.isnan(odd.statistic) and "not consistent" in odd.reason
    nan = williams_test(np.nan, 0.2, 0.5, 30)
    assert np.isnan(nan.statistic) and "NaN" in nan.reason
    with pytest.raises(ValueError, match=r"in \[-1, 1\]"):
        williams_test(1.3, 0.2, 0.5, 30)


def test_bh_adjust_matches_twin_and_keeps_nan():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan, 0.005])
    got = bh_adjust(p)
    ok = np.isfinite(p)
    np.testing.assert_allclose(got[ok], bh_twin(p[ok]))
    assert np.isnan(got[4])
    M = np.array([[np.nan, 0.01], [0.02, np.nan]])
    assert bh_adjust(M).shape == (2, 2)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        bh_adjust([0.5, 1.2])


@pytest.mark.parametrize("unit", UNITS)
def test_permutation_test_matches_loop_twin(panel, unit):
    j, h, ctx, sysl = panel
    rng = np.random.default_rng(13)
    k = np.round(h + rng.normal(0, 2.5, h.size), 1)
    n_perm = 30
    panel_kw = dict(unit=unit, method="kendall", contexts=ctx, systems=sysl)
    res = permutation_test(j, k, h, n_permutations=n_perm, random_state=3, **panel_kw)
    ok = np.isfinite(j)
    kw = dict(unit=unit, method="kendall", contexts=ctx[ok], systems=sysl[ok])
    r_a = correlation(j[ok], h[ok], **kw).value
    r_b = correlation(k[ok], h[ok], **kw).value
    assert (res.r_a, res.r_b) == (pytest.approx(r_a, abs=1e-12), pytest.approx(r_b, abs=1e-12))
    assert res.statistic == pytest.approx(r_a - r_b, abs=1e-12)
    swaps = np.random.default_rng(3).random((n_perm, ok.sum())) < 0.5
    count = 0
    for s in swaps:
        A = np.where(s, k[ok], j[ok])
        B = np.where(s, j[ok], k[ok])
        d = correlation(A, h[ok], **kw).value - correlation(B, h[ok], **kw).value
        count += abs(d) >= abs(r_a - r_b) - 1e-12
    assert res.pvalue == pytest.approx((1 + count) / (1 + n_perm))
    assert res.n_dropped_nan == 4


def test_permutation_test_identical_judges_give_p_one():
    h = np.arange(10.0)
    j = np.array([0.0, 2, 1, 3, 5, 4, 6, 8, 7, 9])
    res = permutation_test(j, j, h, unit="overall", n_permutations=50, random_state=0)
    assert res.statistic == 0.0 and res.pvalue == 1.0


def test_williams_matrix_matches_pairwise_tests(panel):
    j, h, ctx, sysl = panel
    rng = np.random.default_rng(14)
    S = np.column_stack([j, np.round(h + rng.normal(0, 2, h.size)), rng.normal(size=h.size)])
    S[7, 1] = np.nan
    res = williams_matrix(S, h, unit="overall", method="kendall")
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        m = np.isfinite(S[:, a]) & np.isfinite(S[:, b])
        ra = stats.kendalltau(S[m, a], h[m]).statistic
        rb = stats.kendalltau(S[m, b], h[m]).statistic
        rab = stats.kendalltau(S[m, a], S[m, b]).statistic
        t, p = williams_twin(ra, rb, rab, m.sum())
        assert (res.statistic[a, b], res.statistic[b, a], res.pvalue[a, b]) == (
            pytest.approx(t),
            pytest.approx(-t),
            pytest.approx(p),
        )
        assert res.n[a, b] == m.sum()
    iu = np.triu_indices(3, 1)
    np.testing.assert_allclose(res.pvalue_adjusted[iu], bh_twin(res.pvalue[iu]))
    assert np.isnan(np.diag(res.statistic)).all()
    sys_res = williams_matrix(S, h, unit="system", systems=sysl)
    assert sys_res.n[0, 1] == 8
    m = np.isfinite(S[:, 0]) & np.isfinite(S[:, 1])
    means = {c: [S[m & (sysl == s), c].mean() for s in np.unique(sysl)] for c in (0, 1)}
    hm = [h[m & (sysl == s)].mean() for s in np.unique(sysl)]
    ra = stats.kendalltau(means[0], hm).statistic
    rb = stats.kendalltau(means[1], hm).statistic
    rab = stats.kendalltau(means[0], means[1]).statistic
    assert sys_res.statistic[0, 1] == pytest.approx(williams_twin(ra, rb, rab, 8)[0])
    const = np.column_stack([S[:, :2], np.full(h.size, 3.0)])
    res = williams_matrix(const, h, unit="overall")
    assert np.isnan(res.statistic[0, 2]) and "constant scores of judge 2" in res.reasons[(0, 2)]
    assert np.isfinite(res.statistic[0, 1]) and (0, 1) not in res.reasons
    with pytest.raises(ValueError, match="unit='overall' or 'system'"):
        williams_matrix(S, h, unit="item")
    with pytest.raises(TypeError, match="contexts"):
        williams_matrix(
            S, h, contexts=ctx
        )  # accepted and ignored before; the tests resample nothing


def test_williams_matrix_gives_the_reason_of_an_undefined_test():
    # Three systems pass the correlation's minimum but leave Williams' test (n >= 4)
    # undefined: the pair is NaN with that reason.
    h = np.array([1.0, 2, 3, 1, 2, 3])
    S = np.column_stack([[1.0, 2, 3, 2, 2, 4], [3.0, 1, 2, 2, 1, 3]])
    res = williams_matrix(S, h, unit="system", systems=np.array(["a", "b", "c"] * 2))
    assert res.n[0, 1] == 3 and np.isnan(res.statistic[0, 1]) and np.isnan(res.pvalue[0, 1])
    assert "n >= 4" in res.reasons[(0, 1)]


def test_paired_shift_matches_scipy_ttest_rel():
    rng = np.random.default_rng(7)
    for n, confidence in ((40, 0.95), (7, 0.9), (200, 0.99)):
        a = rng.normal(3.0, 1.0, n)
        b = a - rng.normal(0.3, 0.8, n)
        a[rng.random(n) < 0.1] = np.nan  # unparsed: the pair is left out, not imputed
        res = paired_shift(a, b, confidence=confidence)
        keep = np.isfinite(a) & np.isfinite(b)
        ref = stats.ttest_rel(a[keep], b[keep])
        ci = ref.confidence_interval(confidence)
        assert res.shift == pytest.approx(np.mean(a[keep] - b[keep]), rel=1e-12)
        assert res.lower == pytest.approx(ci.low, rel=1e-10)
        assert res.upper == pytest.approx(ci.high, rel=1e-10)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
        assert res.n_used == keep.sum() and res.n_dropped_nan == n - keep.sum()
        assert res.reason == ""


def test_paired_shift_constant_differences_and_too_few_pairs():
    # every difference 0.5: scipy's t is undefined, but the shift is certain
    res = paired_shift([1.0, 2.0, 3.5], [0.5, 1.5, 3.0])
    assert (res.shift, res.lower, res.upper, res.pvalue) == (0.5, 0.5, 0.5, 0.0)
    assert np.isnan(res.statistic)
    same = paired_shift([1.0, 2.0, 4.0], [1.0, 2.0, 4.0])
    assert (same.shift, same.pvalue) == (0.0, 1.0)
    few = paired_shift([1.0, np.nan, 3.0], [2.0, 2.0, np.nan])
    assert np.isnan(few.shift) and np.isnan(few.pvalue) and few.n_used == 1
    assert few.n_dropped_nan == 2 and "fewer than 2" in few.reason
    with pytest.raises(ValueError, match="must be paired"):
        paired_shift([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="confidence"):
        paired_shift([1.0, 2.0], [1.0, 2.0], confidence=1.5)


def test_every_test_result_has_statistic_and_pvalue(panel):
    # One convention: every test of this module answers with .statistic and .pvalue.
    j, h, ctx, _ = panel
    k = j[::-1].copy()
    results = [
        welch_t(j, k),
        williams_test(0.4, 0.5, 0.1, 103),
        permutation_test(j, k, h, unit="item", contexts=ctx, n_permutations=5, random_state=0),
        paired_shift(j, k),
        williams_matrix(np.column_stack([j, k]), h),
    ]
    for res in results:
        fields = {f.name for f in dataclasses.fields(res)}
        assert {"statistic", "pvalue"} <= fields, type(res).__name__
        assert not fields & {"t", "p", "diff", "p_adjusted"}, type(res).__name__

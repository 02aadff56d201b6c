"""Reliability statistics (ranking/agreement/reliability.py) against published tables, the
krippendorff package, scipy and slow formula-level twins."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy import stats

from ranking import (
    cohen_kappa,
    correlation,
    fleiss_kappa,
    human_baseline,
    icc,
    krippendorff_alpha,
    self_consistency,
    share_all_agree,
)
from ranking.agreement import ALPHA_SCALES, ICC_KINDS, KAPPA_WEIGHTS
from tests.ranking.agreement_twins import kappa_twin, panel_data

# ----------------------------------------------------------------------------- ICC

SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float
)


def test_icc_reproduces_shrout_fleiss_1979_table():
    # Published in Shrout & Fleiss (1979), Table 4; the same checks as psych's test_ICC.R.
    published = {
        "ICC1": 0.17,
        "ICC2": 0.29,
        "ICC3": 0.71,
        "ICC1k": 0.44,
        "ICC2k": 0.62,
        "ICC3k": 0.91,
    }
    for kind, value in published.items():
        assert round(icc(SHROUT_FLEISS, kind).value, 2) == value
    res = icc(SHROUT_FLEISS, "ICC2k")
    assert (res.statistic, res.df1, res.df2) == (pytest.approx(11.027, abs=1e-3), 5, 15)
    # Interval as printed by psych::ICC for this table (0.071, 0.93).
    assert (round(res.lower, 3), round(res.upper, 2)) == (0.071, 0.93)


# psych::ICC(sf) for the Shrout & Fleiss table: kind -> (ICC, F, df1, df2, p, lower, upper), as
# printed by psych (ICC to 2 decimals, F to 1, p to 5, the lower bound to 3, the upper to 2).
PSYCH_SF = {
    "ICC1": (0.17, 1.8, 5, 18, 0.16477, -0.133, 0.72),
    "ICC2": (0.29, 11.0, 5, 15, 0.00013, 0.019, 0.76),
    "ICC3": (0.71, 11.0, 5, 15, 0.00013, 0.342, 0.95),
    "ICC1k": (0.44, 1.8, 5, 18, 0.16477, -0.884, 0.91),
    "ICC2k": (0.62, 11.0, 5, 15, 0.00013, 0.071, 0.93),
    "ICC3k": (0.91, 11.0, 5, 15, 0.00013, 0.676, 0.99),
}


@pytest.mark.parametrize("kind", ICC_KINDS)
def test_icc_matches_psych_for_every_kind(kind):
    value, F, df1, df2, p, lower, upper = PSYCH_SF[kind]
    res = icc(SHROUT_FLEISS, kind)
    assert round(res.value, 2) == value
    assert round(res.statistic, 1) == F and (res.df1, res.df2) == (df1, df2)
    assert round(res.pvalue, 5) == p
    assert (round(res.lower, 3), round(res.upper, 2)) == (lower, upper)
    narrower = icc(SHROUT_FLEISS, kind, confidence=0.8)
    assert res.lower < narrower.lower < narrower.value == res.value < narrower.upper < res.upper


def test_icc_drops_incomplete_items_and_reports_degenerate_cases():
    Y = np.vstack([SHROUT_FLEISS, [1.0, np.nan, 2, 3]])
    res = icc(Y)
    assert res.n_dropped_nan == 1 and res.value == pytest.approx(icc(SHROUT_FLEISS).value)
    const = icc(np.full((5, 3), 4.0))
    assert np.isnan(const.value) and "ICC undefined" in const.reason
    few = icc(SHROUT_FLEISS[:2])
    assert np.isnan(few.value) and "fewer than 3 items" in few.reason
    perfect = icc(np.array([[1.0, 1, 1], [2, 2, 2], [4, 4, 4], [5, 5, 5]]))
    assert perfect.value == 1.0 and np.isnan(perfect.lower) and "residual" in perfect.reason
    with pytest.raises(ValueError, match="no rating at all"):
        icc(np.column_stack([SHROUT_FLEISS, np.full(6, np.nan)]))
    with pytest.raises(ValueError, match="at least 2 raters"):
        icc(SHROUT_FLEISS[:, :1])


# ----------------------------------------------------------------------------- alpha


def test_alpha_reproduces_krippendorff_reference_example():
    # Krippendorff's worked example (3 coders x 15 units), as in the krippendorff package docs.
    data = np.array(
        [
            [np.nan, np.nan, np.nan, np.nan, np.nan, 3, 4, 1, 2, 1, 1, 3, 3, np.nan, 3],
            [1, np.nan, 2, 1, 3, 3, 4, 3, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan],
            [np.nan, np.nan, 2, 1, 3, 4, 4, np.nan, 2, 1, 1, 3, 3, np.nan, 4],
        ]
    )
    assert round(krippendorff_alpha(data.T, "nominal").value, 6) == 0.691358
    assert round(krippendorff_alpha(data.T, "interval").value, 6) == 0.810845
    # units 2 and 14 have no rating and unit 1 a single one: 12 pairable units remain
    res = krippendorff_alpha(data.T, scale="interval")
    assert (res.n_items, res.n_dropped_nan, res.reason) == (12, 3, "")


@pytest.mark.parametrize("scale", ALPHA_SCALES)
def test_alpha_matches_krippendorff_package_on_random_data(scale):
    rng = np.random.default_rng(6)
    for n_items, n_raters, p_missing in ((50, 3, 0.0), (200, 5, 0.3), (30, 8, 0.5)):
        truth = rng.integers(1, 6, (n_items, 1))
        Y = np.clip(truth + rng.integers(-1, 2, (n_items, n_raters)), 1, 5).astype(float)
        Y[rng.random(Y.shape) < p_missing] = np.nan
        want = krippendorff.alpha(reliability_data=Y.T, level_of_measurement=scale)
        assert krippendorff_alpha(Y, scale).value == pytest.approx(want, abs=1e-12)


def test_alpha_and_share_agree_undefined_and_bad_input():
    # Undefined on these data: NaN with the reason, not an exception callers must catch.
    res = krippendorff_alpha(np.full((4, 3), 2.0))
    assert np.isnan(res.value) and "no variation" in res.reason
    res = krippendorff_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]]))
    assert np.isnan(res.value) and "no item has 2 or more ratings" in res.reason
    assert (res.n_items, res.n_dropped_nan) == (0, 2)
    with pytest.raises(ValueError, match="at least 2 raters"):
        krippendorff_alpha(np.ones((4, 1)))
    with pytest.raises(ValueError, match="scale must be one of"):
        krippendorff_alpha(np.ones((4, 2)), scale="cardinal")
    Y = np.array([[1.0, 1, 1], [2, 2, np.nan], [1, 2, 3], [4, np.nan, np.nan]])
    res = share_all_agree(Y)
    assert res.value == pytest.approx(2 / 3) and (res.n_items, res.n_dropped_nan) == (3, 1)
    res = share_all_agree(np.array([[1.0, np.nan]]))
    assert np.isnan(res.value) and "no item has 2 or more" in res.reason


# ----------------------------------------------------------------------------- kappa


def test_cohen_kappa_textbook_and_twin():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> kappa = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b).value == pytest.approx(0.4)
    rng = np.random.default_rng(8)
    x = rng.integers(1, 6, 80)
    y = np.clip(x + rng.integers(-2, 3, 80), 1, 5)
    for w in KAPPA_WEIGHTS:
        assert cohen_kappa(x, y, weights=w).value == pytest.approx(kappa_twin(list(x), list(y), w))
    xf = x.astype(float)
    xf[:5] = np.nan
    res = cohen_kappa(xf, y)
    assert res.value == pytest.approx(kappa_twin(list(x[5:]), list(y[5:])))
    assert (res.n_items, res.n_dropped_nan) == (75, 5)
    verdicts = np.array(["A", "B", "tie", None, "A"], dtype=object)
    assert cohen_kappa(verdicts, ["A", "B", "tie", "A", "A"]).value == pytest.approx(1.0)
    same = cohen_kappa(["A"] * 4, ["A"] * 4)
    assert np.isnan(same.value) and "single category" in same.reason
    few = cohen_kappa(["A", None], ["B", "A"])
    assert np.isnan(few.value) and "at least 2 items rated by both" in few.reason
    with pytest.raises(ValueError, match="must align"):
        cohen_kappa([1, 2], [1, 2, 3])


def test_fleiss_kappa_wikipedia_example_and_labels():
    # Fleiss (1971) style example from Wikipedia: 10 subjects, 14 raters, 5 categories.
    counts = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    assert round(fleiss_kappa(counts).value, 3) == 0.210
    labels = np.array([np.repeat(np.arange(5), row) for row in counts])
    assert fleiss_kappa(labels=labels).value == pytest.approx(fleiss_kappa(counts).value)
    # Two raters: Fleiss' kappa equals Scott's pi, computed by hand here.
    a = np.array([1, 1, 2, 2, 3, 1])
    b = np.array([1, 2, 2, 2, 3, 3])
    po = np.mean(a == b)
    pj = np.array([np.mean(np.r_[a, b] == c) for c in (1, 2, 3)])
    pi = (po - (pj**2).sum()) / (1 - (pj**2).sum())
    assert fleiss_kappa(labels=np.column_stack([a, b])).value == pytest.approx(pi)
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa(np.array([[1, 1], [2, 1]]))
    with pytest.raises(ValueError, match="exactly one"):
        fleiss_kappa()
    one = fleiss_kappa(np.array([[3, 0], [3, 0]]))
    assert np.isnan(one.value) and "one category" in one.reason
    single = fleiss_kappa(np.array([[1, 2]]))
    assert np.isnan(single.value) and "at least 2 items" in single.reason
    missing = fleiss_kappa(labels=np.full((3, 2), None))
    assert np.isnan(missing.value) and "all missing" in missing.reason


# ------------------------------------------------------------------------ baseline, consistency


def test_human_baseline_is_each_annotator_against_mean_of_others():
    _, h, ctx, sysl = panel_data()
    rng = np.random.default_rng(9)
    R = np.clip(h[:, None] + rng.integers(-1, 2, (h.size, 3)), 1, 5).astype(float)
    R[5, 1] = np.nan
    for unit in ("overall", "system"):
        res = human_baseline(R, contexts=ctx, systems=sysl, unit=unit, method="kendall")
        for a in range(3):
            others = np.nanmean(np.delete(R, a, axis=1), axis=1)
            want = correlation(R[:, a], others, unit=unit, method="kendall", systems=sysl)
            assert res.values[a] == pytest.approx(want.value, abs=1e-12)
        assert res.mean == pytest.approx(res.values.mean())
    ok = np.isfinite(R[:, 1])
    res = human_baseline(R, unit="overall", method="spearman")
    assert res.values[1] == pytest.approx(
        stats.spearmanr(R[ok, 1], R[ok][:, [0, 2]].mean(axis=1)).statistic
    )
    assert res.results[1].n_dropped_nan == 1
    with pytest.raises(ValueError, match="at least 2 annotators"):
        human_baseline(R[:, :1], unit="overall")


def test_self_consistency_icc_and_identical_share():
    S = np.array([[3.0, 3, 3], [4, 4, 5], [1, 1, 1], [5, 4, np.nan], [2, 2, 3], [4, 4, 4]])
    res = self_consistency(S)
    complete = S[np.isfinite(S).all(axis=1)]
    assert res.icc.value == pytest.approx(icc(complete, "ICC2k").value)
    assert res.share_identical == pytest.approx(3 / 6)
    assert (res.n_items_icc, res.n_dropped_nan, res.n_nan_samples, res.n_samples) == (5, 1, 1, 3)
    assert res.icc.n_dropped_nan == 1
    with pytest.raises(ValueError, match="at least 2 samples"):
        self_consistency(S[:, :1])

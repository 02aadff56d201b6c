"""Judge-human correlations (ranking/agreement/correlations.py) against scipy on the pooled,
per-system and per-context data, and their context-bootstrap intervals against literal
resampling."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from ranking import correlation, icc
from ranking.agreement import METHODS, UNITS
from ranking.agreement import segments as sg
from tests.ranking.agreement_twins import scipy_corr


@pytest.mark.parametrize("method", METHODS)
def test_correlation_units_match_scipy(panel, method):
    j, h, ctx, sysl = panel
    ok = np.isfinite(j)
    res = correlation(j, h, unit="overall", method=method, contexts=ctx)
    assert res.value == pytest.approx(scipy_corr(j[ok], h[ok], method), abs=1e-12)
    assert (res.n_used, res.n_dropped_nan) == (ok.sum(), 4)

    res = correlation(j, h, unit="system", method=method, systems=sysl)
    names = np.unique(sysl)
    mj = [j[ok & (sysl == s)].mean() for s in names]
    mh = [h[ok & (sysl == s)].mean() for s in names]
    assert res.value == pytest.approx(scipy_corr(mj, mh, method), abs=1e-12)
    assert res.n_units == len(names)

    res = correlation(j, h, unit="item", method=method, contexts=ctx)
    per = []
    for c in range(24):
        m = ok & (ctx == c)
        per.append(scipy_corr(j[m], h[m], method) if np.ptp(h[m]) and np.ptp(j[m]) else np.nan)
    per = np.array(per)
    np.testing.assert_allclose(res.per_context, per, atol=1e-12)
    assert res.value == pytest.approx(np.nanmean(per), abs=1e-12)
    assert res.n_units + res.n_skipped == 24


def test_kendall_tau_c_is_selectable(panel):
    j, h, ctx, _ = panel
    ok = np.isfinite(j)
    b = correlation(j, h, unit="overall", method="kendall", variant="b")
    c = correlation(j, h, unit="overall", method="kendall", variant="c")
    assert c.value == pytest.approx(stats.kendalltau(j[ok], h[ok], variant="c").statistic)
    assert b.value != pytest.approx(c.value)


@pytest.mark.parametrize("variant", ["b", "c"])
def test_pooled_kendall_value_and_pvalue_are_scipys_public_function(variant):
    # correlation() calls scipy's Kendall without its dispatch layer: the same numbers as
    # the public stats.kendalltau, exactly, for the exact (small, untied) and asymptotic
    # (tied or long) p-values
    rng = np.random.default_rng(3)
    for n in (3, 5, 10, 30, 40, 200, 960):
        for tied in (False, True):
            j = rng.integers(1, 6, n).astype(float) if tied else rng.normal(size=n)
            h = rng.normal(size=n) + (j if n > 5 else 0.0)
            res = correlation(j, h, unit="overall", method="kendall", variant=variant)
            ref = stats.kendalltau(j, h, variant=variant)
            assert (res.value, res.pvalue) == (float(ref.statistic), float(ref.pvalue))


@pytest.mark.parametrize("unit", UNITS)
def test_bootstrap_interval_is_percentile_of_context_resamples(panel, unit):
    j, h, ctx, sysl = panel
    n_boot = 60
    kw = dict(unit=unit, method="kendall", contexts=ctx, systems=sysl)
    res = correlation(j, h, n_boot=n_boot, random_state=11, **kw)
    again = correlation(j, h, n_boot=n_boot, random_state=11, **kw)
    assert (res.lower, res.upper) == (again.lower, again.upper)
    assert res.lower <= res.value <= res.upper
    ok = np.isfinite(j)
    reps = []
    if unit == "item":
        used = np.flatnonzero(np.isfinite(res.per_context))
        draws = np.random.default_rng(11).integers(0, used.size, size=(n_boot, used.size))
        reps = [res.per_context[used[d]].mean() for d in draws]
    else:
        draws = np.random.default_rng(11).integers(0, 24, size=(n_boot, 24))
        for d in draws:
            rows = np.concatenate([np.flatnonzero(ok & (ctx == c)) for c in d])
            if unit == "overall":
                reps.append(stats.kendalltau(j[rows], h[rows]).statistic)
            else:
                names = np.unique(sysl)
                mj = [j[rows][sysl[rows] == s].mean() for s in names]
                mh = [h[rows][sysl[rows] == s].mean() for s in names]
                reps.append(stats.kendalltau(mj, mh).statistic)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert (res.lower, res.upper) == (pytest.approx(lo, abs=1e-10), pytest.approx(hi, abs=1e-10))


def test_nan_judge_outputs_are_dropped_and_counted_not_imputed():
    h = np.array([1.0, 2, 3, 4, 5, 6])
    j = np.array([1.0, np.nan, 2, 4, np.nan, 5])
    res = correlation(j, h, unit="overall", method="pearson")
    assert (res.n_used, res.n_dropped_nan) == (4, 2)
    assert res.value == pytest.approx(stats.pearsonr([1, 2, 4, 5], [1, 3, 4, 6]).statistic)


def test_item_level_counts_skipped_contexts_with_reason():
    ctx = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    h = np.array([1.0, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3])
    j = np.array([1.0, 2, 3, 2, 2, 2, 3, 2, 1, np.nan, np.nan, 1])
    res = correlation(j, h, unit="item", method="spearman", contexts=ctx)
    assert res.value == pytest.approx(0.0)  # mean of +1 and -1
    assert (res.n_units, res.n_skipped, res.n_dropped_nan, res.n_used) == (2, 2, 2, 6)
    assert "2 of 4 contexts skipped" in res.reason
    assert "constant judge scores" in res.reason and "fewer than 2 valid" in res.reason


@pytest.mark.parametrize(
    ("judge", "human", "needle"),
    [
        ([3.0, 3, 3, 3], [1.0, 2, 3, 4], "judge scores are constant"),
        ([1.0, 2, 3, 4], [2.0, 2, 2, 2], "human scores are constant"),
        ([1.0, 2, np.nan, np.nan], [1.0, 2, 3, 4], "fewer than 3 valid items"),
        ([np.nan] * 4, [1.0, 2, 3, 4], "all 4 judge scores are NaN"),
    ],
)
def test_degenerate_inputs_give_nan_with_reason(judge, human, needle):
    for method in METHODS:
        res = correlation(judge, human, unit="overall", method=method, n_boot=20)
        assert np.isnan(res.value) and np.isnan(res.lower) and needle in res.reason


def test_bad_shapes_and_options_raise_clear_errors():
    with pytest.raises(ValueError, match="has 3 values but the judge scores have 4"):
        correlation([1, 2, 3, 4], [1, 2, 3], unit="overall")
    with pytest.raises(ValueError, match="pass contexts="):
        correlation([1, 2, 3], [1, 2, 3], unit="item")
    with pytest.raises(ValueError, match="pass systems="):
        correlation([1, 2, 3], [1, 2, 3], unit="system")
    with pytest.raises(ValueError, match="method must be one of"):
        correlation([1, 2, 3], [1, 2, 3], unit="overall", method="cosine")
    with pytest.raises(ValueError, match="infinite"):
        correlation([1, np.inf, 3], [1, 2, 3], unit="overall")
    with pytest.raises(ValueError, match="contexts has 2 labels"):
        correlation([1, 2, 3], [1, 2, 3], unit="overall", contexts=[0, 1])
    with pytest.raises(ValueError, match="empty"):
        correlation([], [], unit="overall")


def test_unit_and_confidence_are_named_for_what_they_are():
    # `level` used to mean the aggregation unit here, a confidence level elsewhere and a
    # measurement scale in alpha: each concept now has its own name, and the result says
    # which unit it was computed at.
    res = correlation([1.0, 2, 3, 4], [1.0, 3, 2, 4], unit="overall", n_boot=10, confidence=0.8)
    assert res.unit == "overall"
    with pytest.raises(ValueError, match="unit must be one of"):
        correlation([1.0, 2, 3], [1.0, 2, 3], unit="document")
    with pytest.raises(ValueError, match="confidence must lie strictly between 0 and 1"):
        correlation([1.0, 2, 3], [1.0, 2, 3], unit="overall", confidence=95)
    with pytest.raises(TypeError):
        correlation([1.0, 2, 3], [1.0, 2, 3], level="overall")


def test_system_level_needs_three_systems():
    res = correlation(
        [1.0, 2, 3, 4],
        [1.0, 3, 2, 4],
        unit="system",
        systems=["a", "a", "b", "b"],
        method="kendall",
    )
    assert np.isnan(res.value) and "fewer than 3 valid systems" in res.reason


def test_degenerate_input_gives_nan_with_a_reason_and_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flat = correlation([1.0, 1, 1, 1], [1.0, 2, 3, 4], unit="overall", n_boot=10)
        item = correlation([1.0, 1, 2, 2], [1.0, 2, 3, 4], unit="item", contexts=[0, 0, 1, 1])
        same = icc(np.full((4, 3), 2.0))
    assert np.isnan([flat.value, flat.lower, flat.upper, flat.pvalue]).all()
    assert "constant" in flat.reason
    assert np.isnan(item.value) and np.isnan(item.per_context).all()
    assert item.n_skipped == 2 and "2 of 2 contexts skipped" in item.reason
    assert np.isnan([same.value, same.lower, same.upper]).all()
    assert same.reason == "all ratings equal 2; ICC undefined"


def test_snap_ties_restores_ties_broken_by_summation_order():
    a = np.array([0.1 + 0.2, 0.3, 1.0, np.nan, 2.0 + 1e-6])
    got = sg._snap_ties(a)
    assert got[0] == got[1] == pytest.approx(0.3) and got[2] == 1.0 and np.isnan(got[3])
    assert got[4] == 2.0 + 1e-6  # a real difference stays
    # System level sees the tie whatever order the means were summed in: a and b hold the
    # same scores in reverse order, whose float sums differ in the last bit.
    vals = np.array([0.9, 0.0, 0.7, 0.2, 0.2, 0.7, 0.0, 0.9, 0.1, 0.1, 0.1, 0.2])
    assert vals[:4].sum() != vals[4:8].sum()
    systems = np.repeat(["a", "b", "c"], 4)
    human = np.array([1.0, 2, 3, 4, 1, 2, 3, 5, 1, 1, 1, 1])
    res = correlation(vals, human, unit="system", method="kendall", systems=systems)
    assert res.value == pytest.approx(
        stats.kendalltau([0.45, 0.45, 0.125], [2.5, 2.75, 1.0]).statistic
    )

"""Tests of ranking/agreement.py against scipy, the krippendorff package, published tables and
slow formula-level twins written here."""

from __future__ import annotations

import itertools
import warnings

import krippendorff
import numpy as np
import pytest
from scipy import stats

from ranking import agreement as ag

# ----------------------------------------------------------------------------- slow twins


def scipy_corr(x, y, method, variant="b"):
    if method == "spearman":
        return stats.spearmanr(x, y).statistic
    if method == "kendall":
        return stats.kendalltau(x, y, variant=variant).statistic
    return stats.pearsonr(x, y).statistic


def kendall_counts_loop(x, y):
    """Concordant minus discordant pairs and ties, by the definition."""
    c = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        tx += dx == 0
        ty += dy == 0
        if dx != 0 and dy != 0:
            c += 1 if (dx > 0) == (dy > 0) else -1
    return c, tx, ty


def kendall_blocks_numpy(x, y, units, n_units):
    """Sign-product sums between units from the full (n, n) matrix."""
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    A = np.zeros((len(x), n_units))
    A[np.arange(len(x)), units] = 1.0
    return A.T @ (sx * sy) @ A


def resample_twin(x, y, units, draws):
    """The literally resampled arrays of one bootstrap replicate."""
    idx = np.concatenate([np.flatnonzero(units == u) for u in draws])
    return x[idx], y[idx]


def icc_twin(Y, kind, level_ci=0.95):
    """Shrout & Fleiss (1979) / McGraw & Wong (1996) written out with loops."""
    n, k = Y.shape
    grand = sum(Y[i, j] for i in range(n) for j in range(k)) / (n * k)
    rows = [sum(Y[i, :]) / k for i in range(n)]
    cols = [sum(Y[:, j]) / n for j in range(k)]
    bms = k * sum((r - grand) ** 2 for r in rows) / (n - 1)
    jms = n * sum((c - grand) ** 2 for c in cols) / (k - 1)
    ems = sum((Y[i, j] - rows[i] - cols[j] + grand) ** 2 for i in range(n) for j in range(k)) / (
        (n - 1) * (k - 1)
    )
    wms = sum((Y[i, j] - rows[i]) ** 2 for i in range(n) for j in range(k)) / (n * (k - 1))
    a = 1 - level_ci
    if kind in ("ICC1", "ICC1k"):
        F, d1, d2 = bms / wms, n - 1, n * (k - 1)
    else:
        F, d1, d2 = bms / ems, n - 1, (n - 1) * (k - 1)
    FL = F / stats.f.ppf(1 - a / 2, d1, d2)
    FU = F * stats.f.ppf(1 - a / 2, d2, d1)
    if kind == "ICC1":
        v = (bms - wms) / (bms + (k - 1) * wms)
        lo, hi = (FL - 1) / (FL + k - 1), (FU - 1) / (FU + k - 1)
    elif kind == "ICC1k":
        v = (bms - wms) / bms
        lo, hi = 1 - 1 / FL, 1 - 1 / FU
    elif kind == "ICC3":
        v = (bms - ems) / (bms + (k - 1) * ems)
        lo, hi = (FL - 1) / (FL + k - 1), (FU - 1) / (FU + k - 1)
    elif kind == "ICC3k":
        v = (bms - ems) / bms
        lo, hi = 1 - 1 / FL, 1 - 1 / FU
    else:
        # McGraw & Wong (1996) case 2A, Satterthwaite df for the interval.
        r = (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)
        Fj = jms / ems
        num = (k - 1) * (n - 1) * (k * r * Fj + n * (1 + (k - 1) * r) - k * r) ** 2
        den = (n - 1) * k**2 * r**2 * Fj**2 + (n * (1 + (k - 1) * r) - k * r) ** 2
        nu = num / den
        Fs = stats.f.ppf(1 - a / 2, n - 1, nu)
        Fs2 = stats.f.ppf(1 - a / 2, nu, n - 1)
        lo = n * (bms - Fs * ems) / (Fs * (k * jms + (k * n - k - n) * ems) + n * bms)
        hi = n * (Fs2 * bms - ems) / (k * jms + (k * n - k - n) * ems + n * Fs2 * bms)
        v = r
        if kind == "ICC2k":
            v = (bms - ems) / (bms + (jms - ems) / n)
            lo, hi = k * lo / (1 + (k - 1) * lo), k * hi / (1 + (k - 1) * hi)
    return v, lo, hi, F, stats.f.sf(F, d1, d2)


def williams_twin(r12, r13, r23, n):
    K = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    num = (r12 - r13) * np.sqrt((n - 1) * (1 + r23))
    den = np.sqrt(2 * K * (n - 1) / (n - 3) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3)
    t = num / den
    return t, 2 * (1 - stats.t.cdf(abs(t), n - 3))


def kappa_twin(a, b, weights=None):
    cats = sorted(set(a) | set(b))
    q, n = len(cats), len(a)
    pos = {c: i for i, c in enumerate(cats)}
    O = [[0.0] * q for _ in range(q)]
    for x, y in zip(a, b, strict=True):
        O[pos[x]][pos[y]] += 1 / n
    ra = [sum(O[i]) for i in range(q)]
    cb = [sum(O[i][j] for i in range(q)) for j in range(q)]

    def w(i, j):
        if weights is None:
            return float(i != j)
        return abs(i - j) if weights == "linear" else (i - j) ** 2

    obs = sum(w(i, j) * O[i][j] for i in range(q) for j in range(q))
    exp = sum(w(i, j) * ra[i] * cb[j] for i in range(q) for j in range(q))
    return 1 - obs / exp


def bh_twin(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p)
    adj = np.empty(m)
    prev = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        prev = min(prev, p[i] * m / rank)
        adj[i] = prev
    return adj


def tied_data(rng, n, levels=5):
    h = rng.integers(1, levels + 1, n).astype(float)
    j = np.round(h + rng.normal(0, 1.5, n))
    return j, h


# ----------------------------------------------------------------------------- kernels


def test_kendall_segments_matches_loop_on_hand_and_random_cases():
    x = np.array([1.0, 2, 2, 3, 5, 5, 1, 4])
    y = np.array([2.0, 1, 1, 3, 4, 5, 2, 2])
    cmd, tx, ty = ag._kendall_segments(x, y, np.array([0, 3]), np.array([3, 8]))
    assert (cmd[0], tx[0], ty[0]) == kendall_counts_loop(x[:3], y[:3]) == (-2, 1, 1)
    assert (cmd[1], tx[1], ty[1]) == kendall_counts_loop(x[3:], y[3:])
    rng = np.random.default_rng(1)
    # Both paths: the pair loop (short segments) and the O(n log n) count (long ones).
    for n in (2, 7, 31, ag._KENDALL_LOOP_MAX + 1, 200):
        for levels in (3, 5, 1000):
            x, y = tied_data(rng, n, levels)
            if levels == 1000:
                x = x + rng.normal(0, 1e-3, n)  # no ties in x
            cmd, tx, ty = ag._kendall_segments(x, y, np.array([0]), np.array([n]))
            assert (cmd[0], tx[0], ty[0]) == kendall_counts_loop(x, y)
    cmd, tx, ty = ag._kendall_segments(np.ones(60), np.arange(60.0), np.array([0]), np.array([60]))
    assert (cmd[0], tx[0], ty[0]) == (0, 60 * 59 // 2, 0)


def test_kendall_blocks_match_full_matrix_twin():
    rng = np.random.default_rng(2)
    x, y = tied_data(rng, 40)
    units = rng.integers(0, 6, 40)
    got = ag._kendall_blocks(x, y, units.astype(np.int64), 6)
    np.testing.assert_allclose(got, kendall_blocks_numpy(x, y, units, 6))
    # Hand-made: two units, one concordant pair across them, one tie inside unit 0.
    got = ag._kendall_blocks(
        np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), 2
    )
    np.testing.assert_allclose(got, [[0.0, 2.0], [2.0, 0.0]])


@pytest.mark.parametrize("method", ag.METHODS)
@pytest.mark.parametrize("variant", ag.KENDALL_VARIANTS)
def test_segment_corr_matches_scipy_per_context(method, variant):
    rng = np.random.default_rng(3)
    sizes = [2, 3, 5, 11, 11, 16, 40, 120]
    seg = np.repeat(np.arange(len(sizes)), sizes)
    x, y = tied_data(rng, seg.size)
    perm = rng.permutation(seg.size)  # segments need not be contiguous
    x, y, seg = x[perm], y[perm], seg[perm]
    vals, status = ag._segment_corr(x, y, seg, len(sizes), method, variant)
    for s in range(len(sizes)):
        xs, ys = x[seg == s], y[seg == s]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            assert status[s] != 0 and np.isnan(vals[s])
        else:
            assert vals[s] == pytest.approx(scipy_corr(xs, ys, method, variant), abs=1e-12)


def test_segment_corr_flags_constant_and_small_contexts():
    x = np.array([1.0, 1, 1, 2, 3, 4, 5, 1, 2, 3])
    y = np.array([1.0, 2, 3, 2, 2, 2, 5, 4, 3, 2])
    seg = np.array([0, 0, 0, 1, 1, 1, 2, 3, 3, 3])
    vals, status = ag._segment_corr(x, y, seg, 5, "spearman")
    assert status.tolist() == [ag._CONST_JUDGE, ag._CONST_HUMAN, ag._TOO_FEW, ag._OK, ag._TOO_FEW]
    assert np.isnan(vals[:3]).all() and vals[3] == pytest.approx(-1.0)


# ----------------------------------------------------------------------------- correlation


@pytest.fixture()
def panel():
    rng = np.random.default_rng(4)
    n_ctx, n_sys = 24, 8
    ctx = np.repeat(np.arange(n_ctx), n_sys)
    sysl = np.tile([f"s{i}" for i in range(n_sys)], n_ctx)
    quality = np.tile(rng.normal(0, 1, n_sys), n_ctx)
    h = np.clip(np.round(3 + quality + rng.normal(0, 1, ctx.size)), 1, 5)
    j = np.round(3 + quality + rng.normal(0, 1.2, ctx.size) + 0.3 * (h - 3), 1)
    j[[3, 50, 51, 100]] = np.nan
    return j, h, ctx, sysl


@pytest.mark.parametrize("method", ag.METHODS)
def test_correlation_levels_match_scipy(panel, method):
    j, h, ctx, sysl = panel
    ok = np.isfinite(j)
    res = ag.correlation(j, h, level="overall", method=method, contexts=ctx)
    assert res.value == pytest.approx(scipy_corr(j[ok], h[ok], method), abs=1e-12)
    assert (res.n_used, res.n_dropped_nan) == (ok.sum(), 4)

    res = ag.correlation(j, h, level="system", method=method, systems=sysl)
    names = np.unique(sysl)
    mj = [j[ok & (sysl == s)].mean() for s in names]
    mh = [h[ok & (sysl == s)].mean() for s in names]
    assert res.value == pytest.approx(scipy_corr(mj, mh, method), abs=1e-12)
    assert res.n_units == len(names)

    res = ag.correlation(j, h, level="item", method=method, contexts=ctx)
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
    b = ag.correlation(j, h, level="overall", method="kendall", variant="b")
    c = ag.correlation(j, h, level="overall", method="kendall", variant="c")
    assert c.value == pytest.approx(stats.kendalltau(j[ok], h[ok], variant="c").statistic)
    assert b.value != pytest.approx(c.value)


@pytest.mark.parametrize(
    ("method", "variant"),
    [("spearman", "b"), ("pearson", "b"), ("kendall", "b"), ("kendall", "c")],
)
def test_overall_bootstrap_replicates_equal_scipy_on_resampled_data(panel, method, variant):
    j, h, ctx, _ = panel
    ok = np.isfinite(j)
    x, y, units = j[ok], h[ok], ctx[ok]
    n_boot = 25
    W = ag._unit_weights(np.random.default_rng(7), n_boot, 24)
    reps = ag._boot_pooled(x, y, units, 24, method, variant, W)
    draws = np.random.default_rng(7).integers(0, 24, size=(n_boot, 24))
    for b in range(n_boot):
        xr, yr = resample_twin(x, y, units, draws[b])
        assert reps[b] == pytest.approx(scipy_corr(xr, yr, method, variant), abs=1e-10)


@pytest.mark.parametrize("kind", ["continuous", "many values", "few values"])
def test_kendall_bootstrap_tie_counting_paths(kind):
    # Continuous scores (no ties), many repeated values (more than units: block path) and
    # few repeated values (count path) must all equal scipy on the resampled data.
    rng = np.random.default_rng(15)
    units = np.repeat(np.arange(6), 10)
    x = rng.normal(0, 2, 60)
    x = {"continuous": x, "many values": np.round(x, 1), "few values": np.clip(np.round(x), -2, 2)}[
        kind
    ]
    y = np.round(x + rng.normal(0, 2, 60))
    W = ag._unit_weights(np.random.default_rng(2), 15, 6)
    reps = ag._boot_pooled(x, y, units, 6, "kendall", "b", W)
    draws = np.random.default_rng(2).integers(0, 6, size=(15, 6))
    for b in range(15):
        xr, yr = resample_twin(x, y, units, draws[b])
        assert reps[b] == pytest.approx(stats.kendalltau(xr, yr).statistic, abs=1e-10)
    block_path = ag._tie_terms(x, units, 6)[1] is None
    assert block_path == (kind == "many values")


@pytest.mark.parametrize("level", ag.LEVELS)
def test_bootstrap_interval_is_percentile_of_context_resamples(panel, level):
    j, h, ctx, sysl = panel
    n_boot = 60
    res = ag.correlation(
        j,
        h,
        level=level,
        method="kendall",
        contexts=ctx,
        systems=sysl,
        n_boot=n_boot,
        random_state=11,
    )
    again = ag.correlation(
        j,
        h,
        level=level,
        method="kendall",
        contexts=ctx,
        systems=sysl,
        n_boot=n_boot,
        random_state=11,
    )
    assert (res.lower, res.upper) == (again.lower, again.upper)
    assert res.lower <= res.value <= res.upper
    ok = np.isfinite(j)
    reps = []
    if level == "item":
        used = np.flatnonzero(np.isfinite(res.per_context))
        draws = np.random.default_rng(11).integers(0, used.size, size=(n_boot, used.size))
        reps = [res.per_context[used[d]].mean() for d in draws]
    else:
        draws = np.random.default_rng(11).integers(0, 24, size=(n_boot, 24))
        for d in draws:
            rows = np.concatenate([np.flatnonzero(ok & (ctx == c)) for c in d])
            if level == "overall":
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
    res = ag.correlation(j, h, level="overall", method="pearson")
    assert (res.n_used, res.n_dropped_nan) == (4, 2)
    assert res.value == pytest.approx(stats.pearsonr([1, 2, 4, 5], [1, 3, 4, 6]).statistic)


def test_item_level_counts_skipped_contexts_with_reason():
    ctx = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    h = np.array([1.0, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3])
    j = np.array([1.0, 2, 3, 2, 2, 2, 3, 2, 1, np.nan, np.nan, 1])
    res = ag.correlation(j, h, level="item", method="spearman", contexts=ctx)
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
    for method in ag.METHODS:
        res = ag.correlation(judge, human, level="overall", method=method, n_boot=20)
        assert np.isnan(res.value) and np.isnan(res.lower) and needle in res.reason


def test_bad_shapes_and_options_raise_clear_errors():
    with pytest.raises(ValueError, match="has 3 values but the judge scores have 4"):
        ag.correlation([1, 2, 3, 4], [1, 2, 3], level="overall")
    with pytest.raises(ValueError, match="pass contexts="):
        ag.correlation([1, 2, 3], [1, 2, 3], level="item")
    with pytest.raises(ValueError, match="pass systems="):
        ag.correlation([1, 2, 3], [1, 2, 3], level="system")
    with pytest.raises(ValueError, match="method must be one of"):
        ag.correlation([1, 2, 3], [1, 2, 3], level="overall", method="cosine")
    with pytest.raises(ValueError, match="infinite"):
        ag.correlation([1, np.inf, 3], [1, 2, 3], level="overall")
    with pytest.raises(ValueError, match="contexts has 2 labels"):
        ag.correlation([1, 2, 3], [1, 2, 3], level="overall", contexts=[0, 1])
    with pytest.raises(ValueError, match="empty"):
        ag.correlation([], [], level="overall")


def test_system_level_needs_three_systems():
    res = ag.correlation(
        [1.0, 2, 3, 4],
        [1.0, 3, 2, 4],
        level="system",
        systems=["a", "a", "b", "b"],
        method="kendall",
    )
    assert np.isnan(res.value) and "fewer than 3 valid systems" in res.reason


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
        assert round(ag.icc(SHROUT_FLEISS, kind).value, 2) == value
    res = ag.icc(SHROUT_FLEISS, "ICC2k")
    assert (res.F, res.df1, res.df2) == (pytest.approx(11.027, abs=1e-3), 5, 15)
    # Interval as printed by psych::ICC for this table (0.071, 0.93).
    assert (round(res.lower, 3), round(res.upper, 2)) == (0.071, 0.93)


@pytest.mark.parametrize("kind", ag.ICC_KINDS)
def test_icc_matches_formula_twin(kind):
    rng = np.random.default_rng(5)
    for Y in (
        SHROUT_FLEISS,
        rng.integers(1, 6, (30, 3)).astype(float),
        rng.normal(0, 1, (12, 5)) + rng.normal(0, 2, (12, 1)),
    ):
        res = ag.icc(Y, kind, level_ci=0.9)
        v, lo, hi, F, p = icc_twin(Y, kind, level_ci=0.9)
        np.testing.assert_allclose(
            [res.value, res.lower, res.upper, res.F, res.p],
            [v, lo, hi, F, p],
            rtol=1e-9,
            atol=1e-12,
        )


def test_icc_drops_incomplete_items_and_reports_degenerate_cases():
    Y = np.vstack([SHROUT_FLEISS, [1.0, np.nan, 2, 3]])
    res = ag.icc(Y)
    assert res.n_dropped == 1 and res.value == pytest.approx(ag.icc(SHROUT_FLEISS).value)
    const = ag.icc(np.full((5, 3), 4.0))
    assert np.isnan(const.value) and "ICC undefined" in const.reason
    few = ag.icc(SHROUT_FLEISS[:2])
    assert np.isnan(few.value) and "fewer than 3 items" in few.reason
    perfect = ag.icc(np.array([[1.0, 1, 1], [2, 2, 2], [4, 4, 4], [5, 5, 5]]))
    assert perfect.value == 1.0 and np.isnan(perfect.lower) and "residual" in perfect.reason
    with pytest.raises(ValueError, match="no rating at all"):
        ag.icc(np.column_stack([SHROUT_FLEISS, np.full(6, np.nan)]))
    with pytest.raises(ValueError, match="at least 2 raters"):
        ag.icc(SHROUT_FLEISS[:, :1])


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
    assert round(ag.krippendorff_alpha(data.T, "nominal"), 6) == 0.691358
    assert round(ag.krippendorff_alpha(data.T, "interval"), 6) == 0.810845


@pytest.mark.parametrize("level", ag.ALPHA_LEVELS)
def test_alpha_matches_krippendorff_package_on_random_data(level):
    rng = np.random.default_rng(6)
    for n_items, n_raters, p_missing in ((50, 3, 0.0), (200, 5, 0.3), (30, 8, 0.5)):
        truth = rng.integers(1, 6, (n_items, 1))
        Y = np.clip(truth + rng.integers(-1, 2, (n_items, n_raters)), 1, 5).astype(float)
        Y[rng.random(Y.shape) < p_missing] = np.nan
        want = krippendorff.alpha(reliability_data=Y.T, level_of_measurement=level)
        assert ag.krippendorff_alpha(Y, level) == pytest.approx(want, abs=1e-12)


def test_alpha_and_share_agree_bad_input():
    with pytest.raises(ValueError, match="no variation"):
        ag.krippendorff_alpha(np.full((4, 3), 2.0))
    with pytest.raises(ValueError, match="no item has 2 or more ratings"):
        ag.krippendorff_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]]))
    with pytest.raises(ValueError, match="at least 2 raters"):
        ag.krippendorff_alpha(np.ones((4, 1)))
    Y = np.array([[1.0, 1, 1], [2, 2, np.nan], [1, 2, 3], [4, np.nan, np.nan]])
    assert ag.share_all_agree(Y) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="no item has 2 or more"):
        ag.share_all_agree(np.array([[1.0, np.nan]]))


# ----------------------------------------------------------------------------- kappa


def test_cohen_kappa_textbook_and_twin():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> kappa = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert ag.cohen_kappa(a, b) == pytest.approx(0.4)
    rng = np.random.default_rng(8)
    x = rng.integers(1, 6, 80)
    y = np.clip(x + rng.integers(-2, 3, 80), 1, 5)
    for w in ag.KAPPA_WEIGHTS:
        assert ag.cohen_kappa(x, y, weights=w) == pytest.approx(kappa_twin(list(x), list(y), w))
    xf = x.astype(float)
    xf[:5] = np.nan
    assert ag.cohen_kappa(xf, y) == pytest.approx(kappa_twin(list(x[5:]), list(y[5:])))
    verdicts = np.array(["A", "B", "tie", None, "A"], dtype=object)
    assert ag.cohen_kappa(verdicts, ["A", "B", "tie", "A", "A"]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="single category"):
        ag.cohen_kappa(["A"] * 4, ["A"] * 4)
    with pytest.raises(ValueError, match="must align"):
        ag.cohen_kappa([1, 2], [1, 2, 3])


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
    assert round(ag.fleiss_kappa(counts), 3) == 0.210
    labels = np.array([np.repeat(np.arange(5), row) for row in counts])
    assert ag.fleiss_kappa(labels=labels) == pytest.approx(ag.fleiss_kappa(counts))
    # Two raters: Fleiss' kappa equals Scott's pi, computed by hand here.
    a = np.array([1, 1, 2, 2, 3, 1])
    b = np.array([1, 2, 2, 2, 3, 3])
    po = np.mean(a == b)
    pj = np.array([np.mean(np.r_[a, b] == c) for c in (1, 2, 3)])
    pi = (po - (pj**2).sum()) / (1 - (pj**2).sum())
    assert ag.fleiss_kappa(labels=np.column_stack([a, b])) == pytest.approx(pi)
    with pytest.raises(ValueError, match="same number of raters"):
        ag.fleiss_kappa(np.array([[1, 1], [2, 1]]))
    with pytest.raises(ValueError, match="exactly one"):
        ag.fleiss_kappa()
    with pytest.raises(ValueError, match="one category"):
        ag.fleiss_kappa(np.array([[3, 0], [3, 0]]))


# ------------------------------------------------------------------------ baseline, consistency


def test_human_baseline_is_each_annotator_against_mean_of_others(panel):
    _, h, ctx, sysl = panel
    rng = np.random.default_rng(9)
    R = np.clip(h[:, None] + rng.integers(-1, 2, (h.size, 3)), 1, 5).astype(float)
    R[5, 1] = np.nan
    for level in ("overall", "system"):
        res = ag.human_baseline(R, contexts=ctx, systems=sysl, level=level, method="kendall")
        for a in range(3):
            others = np.nanmean(np.delete(R, a, axis=1), axis=1)
            want = ag.correlation(R[:, a], others, level=level, method="kendall", systems=sysl)
            assert res.values[a] == pytest.approx(want.value, abs=1e-12)
        assert res.mean == pytest.approx(res.values.mean())
    ok = np.isfinite(R[:, 1])
    res = ag.human_baseline(R, level="overall", method="spearman")
    assert res.values[1] == pytest.approx(
        stats.spearmanr(R[ok, 1], R[ok][:, [0, 2]].mean(axis=1)).statistic
    )
    assert res.results[1].n_dropped_nan == 1
    with pytest.raises(ValueError, match="at least 2 annotators"):
        ag.human_baseline(R[:, :1], level="overall")


def test_self_consistency_icc_and_identical_share():
    S = np.array([[3.0, 3, 3], [4, 4, 5], [1, 1, 1], [5, 4, np.nan], [2, 2, 3], [4, 4, 4]])
    res = ag.self_consistency(S)
    complete = S[np.isfinite(S).all(axis=1)]
    assert res.icc.value == pytest.approx(ag.icc(complete, "ICC2k").value)
    assert res.share_identical == pytest.approx(3 / 6)
    assert (res.n_items_icc, res.n_dropped_items, res.n_nan, res.n_samples) == (5, 1, 1, 3)
    with pytest.raises(ValueError, match="at least 2 samples"):
        ag.self_consistency(S[:, :1])


# ----------------------------------------------------------------------------- significance


def test_welch_matches_scipy_and_hand_df():
    rng = np.random.default_rng(10)
    a = rng.normal(3, 1, 40)
    b = np.r_[rng.normal(3.5, 2, 25), np.nan]
    res = ag.welch_t(a, b)
    bb = b[:-1]
    want = stats.ttest_ind(a, bb, equal_var=False)
    va, vb = a.var(ddof=1) / a.size, bb.var(ddof=1) / bb.size
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (bb.size - 1))
    assert (res.t, res.p, res.df) == (
        pytest.approx(want.statistic),
        pytest.approx(want.pvalue),
        pytest.approx(df),
    )
    assert (res.n_a, res.n_b, res.n_dropped_nan) == (40, 25, 1)
    assert res.std_b == pytest.approx(bb.std(ddof=1))
    const = ag.welch_t([1.0, 1, 1], [2.0, 2])
    assert np.isnan(const.t) and "constant" in const.reason
    with pytest.raises(ValueError, match="group b has 1 valid"):
        ag.welch_t([1.0, 2], [1.0, np.nan])


def test_williams_matches_twin_and_hand_value():
    # Steiger (1980) style example r12=.4, r13=.5, r23=.1, n=103: t = -0.891 by eq. 7.
    t, p = ag.williams_test(0.4, 0.5, 0.1, 103)
    assert (round(t, 3), round(p, 3)) == (-0.891, 0.375)
    rng = np.random.default_rng(12)
    for _ in range(20):
        X = rng.normal(size=(50, 3)) @ rng.normal(size=(3, 3))
        C = np.corrcoef(X.T)
        got = ag.williams_test(C[0, 1], C[0, 2], C[1, 2], 50)
        np.testing.assert_allclose(got, williams_twin(C[0, 1], C[0, 2], C[1, 2], 50), atol=1e-12)
    assert ag.williams_test(0.3, 0.3, 0.5, 20) == (0.0, 1.0)
    with pytest.raises(ValueError, match="n >= 4"):
        ag.williams_test(0.3, 0.2, 0.5, 3)
    with pytest.raises(ValueError, match=r"in \[-1, 1\]"):
        ag.williams_test(1.3, 0.2, 0.5, 30)
    with pytest.raises(ValueError, match="not consistent"):
        ag.williams_test(0.9, -0.9, 0.99, 30)


def test_bh_adjust_matches_twin_and_keeps_nan():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan, 0.005])
    got = ag.bh_adjust(p)
    ok = np.isfinite(p)
    np.testing.assert_allclose(got[ok], bh_twin(p[ok]))
    assert np.isnan(got[4])
    M = np.array([[np.nan, 0.01], [0.02, np.nan]])
    assert ag.bh_adjust(M).shape == (2, 2)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ag.bh_adjust([0.5, 1.2])


@pytest.mark.parametrize("level", ag.LEVELS)
def test_permutation_test_matches_loop_twin(panel, level):
    j, h, ctx, sysl = panel
    rng = np.random.default_rng(13)
    k = np.round(h + rng.normal(0, 2.5, h.size), 1)
    n_perm = 30
    res = ag.permutation_test(
        j,
        k,
        h,
        level=level,
        method="kendall",
        contexts=ctx,
        systems=sysl,
        n_permutations=n_perm,
        random_state=3,
    )
    ok = np.isfinite(j)
    kw = dict(level=level, method="kendall", contexts=ctx[ok], systems=sysl[ok])
    r_a = ag.correlation(j[ok], h[ok], **kw).value
    r_b = ag.correlation(k[ok], h[ok], **kw).value
    assert (res.r_a, res.r_b) == (pytest.approx(r_a, abs=1e-12), pytest.approx(r_b, abs=1e-12))
    swaps = np.random.default_rng(3).random((n_perm, ok.sum())) < 0.5
    count = 0
    for s in swaps:
        A = np.where(s, k[ok], j[ok])
        B = np.where(s, j[ok], k[ok])
        d = ag.correlation(A, h[ok], **kw).value - ag.correlation(B, h[ok], **kw).value
        count += abs(d) >= abs(r_a - r_b) - 1e-12
    assert res.pvalue == pytest.approx((1 + count) / (1 + n_perm))
    assert res.n_dropped_nan == 4


def test_permutation_test_identical_judges_give_p_one():
    h = np.arange(10.0)
    j = np.array([0.0, 2, 1, 3, 5, 4, 6, 8, 7, 9])
    res = ag.permutation_test(j, j, h, level="overall", n_permutations=50, random_state=0)
    assert res.diff == 0.0 and res.pvalue == 1.0


def test_williams_matrix_matches_pairwise_tests(panel):
    j, h, ctx, sysl = panel
    rng = np.random.default_rng(14)
    S = np.column_stack([j, np.round(h + rng.normal(0, 2, h.size)), rng.normal(size=h.size)])
    S[7, 1] = np.nan
    res = ag.williams_matrix(S, h, level="overall", method="kendall")
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        m = np.isfinite(S[:, a]) & np.isfinite(S[:, b])
        ra = stats.kendalltau(S[m, a], h[m]).statistic
        rb = stats.kendalltau(S[m, b], h[m]).statistic
        rab = stats.kendalltau(S[m, a], S[m, b]).statistic
        t, p = williams_twin(ra, rb, rab, m.sum())
        assert (res.t[a, b], res.t[b, a], res.p[a, b]) == (
            pytest.approx(t),
            pytest.approx(-t),
            pytest.approx(p),
        )
        assert res.n[a, b] == m.sum()
    iu = np.triu_indices(3, 1)
    np.testing.assert_allclose(res.p_adjusted[iu], bh_twin(res.p[iu]))
    assert np.isnan(np.diag(res.t)).all()
    sys_res = ag.williams_matrix(S, h, level="system", systems=sysl)
    assert sys_res.n[0, 1] == 8
    m = np.isfinite(S[:, 0]) & np.isfinite(S[:, 1])
    means = {c: [S[m & (sysl == s), c].mean() for s in np.unique(sysl)] for c in (0, 1)}
    hm = [h[m & (sysl == s)].mean() for s in np.unique(sysl)]
    ra = stats.kendalltau(means[0], hm).statistic
    rb = stats.kendalltau(means[1], hm).statistic
    rab = stats.kendalltau(means[0], means[1]).statistic
    assert sys_res.t[0, 1] == pytest.approx(williams_twin(ra, rb, rab, 8)[0])
    const = np.column_stack([S[:, :2], np.full(h.size, 3.0)])
    res = ag.williams_matrix(const, h, level="overall")
    assert np.isnan(res.t[0, 2]) and "constant scores of judge 2" in res.reasons[(0, 2)]
    assert np.isfinite(res.t[0, 1]) and (0, 1) not in res.reasons
    with pytest.raises(ValueError, match="level='overall' or 'system'"):
        ag.williams_matrix(S, h, level="item", contexts=ctx)


def test_no_warnings_on_degenerate_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.correlation([1.0, 1, 1, 1], [1.0, 2, 3, 4], level="overall", n_boot=10)
        ag.correlation([1.0, 1, 2, 2], [1.0, 2, 3, 4], level="item", contexts=[0, 0, 1, 1])
        ag.icc(np.full((4, 3), 2.0))


def test_snap_ties_restores_ties_broken_by_summation_order():
    a = np.array([0.1 + 0.2, 0.3, 1.0, np.nan, 2.0 + 1e-6])
    got = ag._snap_ties(a)
    assert got[0] == got[1] == pytest.approx(0.3) and got[2] == 1.0 and np.isnan(got[3])
    assert got[4] == 2.0 + 1e-6  # a real difference stays
    # System level sees the tie whatever order the means were summed in: a and b hold the
    # same scores in reverse order, whose float sums differ in the last bit.
    vals = np.array([0.9, 0.0, 0.7, 0.2, 0.2, 0.7, 0.0, 0.9, 0.1, 0.1, 0.1, 0.2])
    assert vals[:4].sum() != vals[4:8].sum()
    systems = np.repeat(["a", "b", "c"], 4)
    human = np.array([1.0, 2, 3, 4, 1, 2, 3, 5, 1, 1, 1, 1])
    res = ag.correlation(vals, human, level="system", method="kendall", systems=systems)
    assert res.value == pytest.approx(
        stats.kendalltau([0.45, 0.45, 0.125], [2.5, 2.75, 1.0]).statistic
    )


# ----------------------------------------------------------------------------- score sets


def test_paired_shift_matches_scipy_ttest_rel():
    rng = np.random.default_rng(7)
    for n, level in ((40, 0.95), (7, 0.9), (200, 0.99)):
        a = rng.normal(3.0, 1.0, n)
        b = a - rng.normal(0.3, 0.8, n)
        a[rng.random(n) < 0.1] = np.nan  # unparsed: the pair is left out, not imputed
        res = ag.paired_shift(a, b, level_ci=level)
        keep = np.isfinite(a) & np.isfinite(b)
        ref = stats.ttest_rel(a[keep], b[keep])
        ci = ref.confidence_interval(level)
        assert res.shift == pytest.approx(np.mean(a[keep] - b[keep]), rel=1e-12)
        assert res.lower == pytest.approx(ci.low, rel=1e-10)
        assert res.upper == pytest.approx(ci.high, rel=1e-10)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
        assert res.n_used == keep.sum() and res.n_dropped_nan == n - keep.sum()
        assert res.reason == ""


def test_paired_shift_constant_differences_and_too_few_pairs():
    # every difference 0.5: scipy's t is undefined, but the shift is certain
    res = ag.paired_shift([1.0, 2.0, 3.5], [0.5, 1.5, 3.0])
    assert (res.shift, res.lower, res.upper, res.pvalue) == (0.5, 0.5, 0.5, 0.0)
    same = ag.paired_shift([1.0, 2.0, 4.0], [1.0, 2.0, 4.0])
    assert (same.shift, same.pvalue) == (0.0, 1.0)
    few = ag.paired_shift([1.0, np.nan, 3.0], [2.0, 2.0, np.nan])
    assert np.isnan(few.shift) and np.isnan(few.pvalue) and few.n_used == 1
    assert few.n_dropped_nan == 2 and "fewer than 2" in few.reason
    with pytest.raises(ValueError, match="must be paired"):
        ag.paired_shift([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="level_ci"):
        ag.paired_shift([1.0, 2.0], [1.0, 2.0], level_ci=1.5)


def test_kendall_matrix_matches_scipy_per_pair():
    rng = np.random.default_rng(11)
    S = rng.integers(1, 6, size=(4, 15)).astype(float)  # ties, as Likert means have
    S[2, 3] = np.nan
    got = ag.kendall_matrix(S)
    for i, j in itertools.product(range(4), repeat=2):
        keep = np.isfinite(S[i]) & np.isfinite(S[j])
        assert got[i, j] == pytest.approx(stats.kendalltau(S[i, keep], S[j, keep]).statistic)
    np.testing.assert_allclose(got, got.T)
    c = ag.kendall_matrix(S, variant="c")
    assert c[0, 1] == pytest.approx(stats.kendalltau(S[0], S[1], variant="c").statistic)


def test_kendall_matrix_per_context_is_the_mean_of_defined_taus():
    rng = np.random.default_rng(5)
    S = rng.normal(size=(3, 6, 5))
    S[1, 2] = 1.0  # a constant context: tau undefined there, left out of the mean
    S[0, 4, :3] = np.nan
    got = ag.kendall_matrix(S)
    for i, j in itertools.product(range(3), repeat=2):
        taus = []
        for c in range(6):
            keep = np.isfinite(S[i, c]) & np.isfinite(S[j, c])
            t = stats.kendalltau(S[i, c, keep], S[j, c, keep]).statistic
            if np.isfinite(t):
                taus.append(t)
        assert got[i, j] == pytest.approx(np.mean(taus))
    assert np.isnan(ag.kendall_matrix(np.ones((2, 3, 4)))).all()
    with pytest.raises(ValueError, match="n_sets"):
        ag.kendall_matrix(np.ones(5))


def test_order_matrix_by_hand_and_accuracy_against_kendall():
    from ranking.metrics import pairwise_accuracy

    got = ag.order_matrix([[3.0, 1.0, 3.0, np.nan]])
    want = np.array(
        [[np.nan, 1, 0.5, np.nan], [0, np.nan, 0, np.nan], [0.5, 1, np.nan, np.nan], [np.nan] * 4]
    )
    np.testing.assert_array_equal(got[0], want)
    # without ties, the pairwise accuracy of a ranking is (1 + Kendall tau) / 2
    rng = np.random.default_rng(2)
    s, ref = rng.normal(size=(1, 12)), rng.normal(size=(1, 12))
    acc = pairwise_accuracy(ag.order_matrix(s), ref)
    assert acc == pytest.approx((1 + stats.kendalltau(s[0], ref[0]).statistic) / 2)
    with pytest.raises(ValueError, match="n_contexts, N"):
        ag.order_matrix(np.ones(4))

"""Flat Bradley–Terry at arena scale: folding into pairs and cells, the multinomial bootstrap
over comparisons or groups, warm-started replicate fits (``ranking.bradley_terry.aggregate``)."""

import numpy as np
import pytest

from ranking import bradley_terry
from ranking._core import check_flat
from ranking.bradley_terry.aggregate import aggregate, bootstrap_cells, draw_counts, fold_pairs
from ranking.bradley_terry.flat import fit_flat
from ranking.bradley_terry.intervals import bootstrap_flat


def simulate(n_items=8, m=4000, seed=0, tie_share=0.2):
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1.5, 1.5, n_items)
    first = rng.integers(0, n_items, m)
    second = (first + rng.integers(1, n_items, m)) % n_items
    p = 1.0 / (1.0 + np.exp(-(theta[first] - theta[second])))
    y = (rng.random(m) < p).astype(float)
    y[rng.random(m) < tie_share] = 0.5
    return first, second, y, theta


def unaggregated(first, second, y, weights=None, ridge=0.0):
    ei, ej, out, w, n = check_flat(first, second, y, None, weights)
    return fit_flat(ei, ej, w * out, w, n, ridge, 10_000, 1e-10)


@pytest.mark.parametrize("ridge", [0.0, 0.5])
def test_folded_fit_equals_the_unaggregated_fit(ridge):
    first, second, y, _ = simulate(seed=1)
    w = np.random.default_rng(2).choice([1.0, 2.0], y.size)
    res = bradley_terry(first=first, second=second, outcome=y, weights=w, ridge=ridge, tol=1e-10)
    assert "aggregated from 4000 comparisons" in res.method
    ref = unaggregated(first, second, y, w, ridge)[0]
    np.testing.assert_allclose(res.scores, ref, atol=1e-8)


def test_folded_fit_keeps_components_and_the_fallback_ridge():
    # items 0-2 and 3-5 never meet; item 6 never loses (no finite MLE); item 7 never compared
    first = np.array([0, 1, 2, 0, 3, 4, 5, 3, 6, 6] * 30)
    second = np.array([1, 2, 0, 2, 4, 5, 3, 5, 0, 1] * 30)
    y = np.tile([1.0, 0.0, 1.0, 0.5, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0], 30)
    res = bradley_terry(first=first, second=second, outcome=y, n_items=8)
    assert "aggregated" in res.method
    ei, ej, out, w, _ = check_flat(first, second, y, 8)
    ref = fit_flat(ei, ej, w * out, w, 8, 0.0, 10_000, 1e-8)
    np.testing.assert_allclose(res.scores, ref[0], atol=1e-8, equal_nan=True)
    assert res.n_components == ref[5] == 2
    assert res.finite_mle is False and np.isnan(res.scores[7])


def test_no_folding_when_comparisons_hardly_repeat():
    rng = np.random.default_rng(3)
    n = 400
    first = rng.integers(0, n, 600)
    second = (first + rng.integers(1, n, 600)) % n
    y = rng.random(600)  # soft outcomes, all distinct
    assert fold_pairs(*check_flat(first, second, y, n)[:3], np.ones(600)) is None
    res = bradley_terry(first=first, second=second, outcome=y, n_items=n, ridge=1.0)
    assert "aggregated" not in res.method


def test_cells_hold_the_same_comparisons():
    first, second, y, _ = simulate(seed=4)
    ei, ej, out, w, _ = check_flat(first, second, y, None)
    cells = aggregate(ei, ej, out, w)
    assert cells.mult.sum() == y.size
    np.testing.assert_allclose(cells.p.sum(), 1.0)
    assert np.all(cells.a < cells.b)
    # one cell per (unordered pair, outcome from the first item's side)
    a = np.minimum(first, second)
    b = np.maximum(first, second)
    yc = np.where(first < second, y, 1.0 - y)
    assert cells.a.size == np.unique(np.stack([a, b, yc]), axis=1).shape[1]
    np.testing.assert_allclose((cells.wy * cells.mult).sum(), (w * yc).sum())


def test_multinomial_counts():
    first, second, y, _ = simulate(seed=5, m=2000)
    ei, ej, out, w, _ = check_flat(first, second, y, None)
    cells = aggregate(ei, ej, out, w)
    counts = draw_counts(cells, 2000, np.random.default_rng(0))
    assert np.all(counts.sum(axis=1) == 2000)
    mean = counts.mean(axis=0)
    expected = cells.p * 2000
    var = expected * (1 - cells.p)
    z = (mean - expected) / np.sqrt(var / counts.shape[0])
    assert np.abs(z).max() < 5
    # same seed, same counts; another seed, other counts
    again = draw_counts(cells, 2000, np.random.default_rng(0))
    np.testing.assert_array_equal(counts, again)
    assert not np.array_equal(counts, draw_counts(cells, 2000, np.random.default_rng(1)))


def test_group_bootstrap_equals_a_slow_twin_for_fixed_resamples():
    first, second, y, _ = simulate(seed=6, m=1500)
    rng = np.random.default_rng(7)
    groups = rng.choice(
        np.array(["ctx-a", "ctx-b", "ctx-c", "ctx-d", "ctx-e", "ctx-f"] * 5, dtype=object)
        + np.repeat(np.arange(5).astype(str), 6),
        1500,
    )
    res = bradley_terry(first=first, second=second, outcome=y, tol=1e-10)
    ei, ej, out, w, n = check_flat(first, second, y, None)
    labels, codes = np.unique(groups, return_inverse=True)
    cells = aggregate(ei, ej, out, w, groups=codes)
    assert cells.n_units == labels.size
    # the slow twin: a Python loop drawing whole groups with replacement and refitting
    B = 25
    counts = np.zeros((B, labels.size), np.int64)
    slow = np.empty((B, n))
    for b in range(B):
        pick = rng.integers(0, labels.size, labels.size)
        counts[b] = np.bincount(pick, minlength=labels.size)
        weight = counts[b][codes].astype(float)
        slow[b] = bradley_terry(
            first=first, second=second, outcome=y, weights=weight, tol=1e-10
        ).scores
    fast = bootstrap_cells(cells, n, res.scores, 0.0, 10_000, 1e-10, B, None, counts=counts)
    np.testing.assert_allclose(fast, slow, atol=1e-7)
    full = bootstrap_cells(
        cells, n, res.scores, 0.0, 10_000, 1e-10, B, None, counts=counts, chord=False
    )
    np.testing.assert_allclose(full, slow, atol=1e-7)


def test_group_bootstrap_is_wider_for_clustered_data():
    # each group is one judge mood: resampling groups must see the between-group spread
    rng = np.random.default_rng(8)
    n_groups, per = 40, 60
    first = rng.integers(0, 4, n_groups * per)
    second = (first + rng.integers(1, 4, first.size)) % 4
    mood = np.repeat(rng.normal(0, 1.5, n_groups), per)
    d = np.array([0.0, 0.3, 0.6, 0.9])[first] - np.array([0.0, 0.3, 0.6, 0.9])[second]
    d = d + mood * (first == 0) - mood * (second == 0)
    y = (rng.random(first.size) < 1 / (1 + np.exp(-d))).astype(float)
    groups = np.repeat(np.arange(n_groups), per)
    kw = dict(first=first, second=second, outcome=y, intervals="bootstrap", n_boot=300)
    plain = bradley_terry(**kw, random_state=0)
    grouped = bradley_terry(**kw, groups=groups, random_state=0)
    assert "bootstrap over 40 group(s)" in grouped.method
    assert grouped.samples.std(axis=0)[0] > 1.5 * plain.samples.std(axis=0)[0]


def test_bootstrap_over_comparisons_matches_the_old_resampling_in_distribution():
    first, second, y, _ = simulate(seed=9, m=3000)
    res = bradley_terry(
        first=first, second=second, outcome=y, intervals="bootstrap", n_boot=800, random_state=0
    )
    assert res.samples.shape == (800, 8)
    ei, ej, out, w, n = check_flat(first, second, y, None)
    old = bootstrap_flat(
        ei, ej, w * out, w, n, res.scores, 0.0, 10_000, 1e-8, 800, np.random.default_rng(1)
    )
    ratio = res.samples.std(axis=0) / old.std(axis=0)
    assert np.all((ratio > 0.85) & (ratio < 1.18)), ratio
    np.testing.assert_allclose(res.samples.mean(axis=0), old.mean(axis=0), atol=0.03)
    # the percentile intervals are those of the samples
    np.testing.assert_allclose(res.lower, np.percentile(res.samples, 2.5, axis=0))
    np.testing.assert_allclose(res.upper, np.percentile(res.samples, 97.5, axis=0))


def test_chord_fits_equal_full_newton_refits():
    first, second, y, _ = simulate(seed=10, m=600, tie_share=0.3)
    ei, ej, out, w, n = check_flat(first, second, y, None)
    res = bradley_terry(first=first, second=second, outcome=y, tol=1e-10)
    cells = aggregate(ei, ej, out, w)
    counts = draw_counts(cells, 60, np.random.default_rng(2))
    chord = bootstrap_cells(cells, n, res.scores, 0.0, 10_000, 1e-10, 60, None, counts=counts)
    full = bootstrap_cells(
        cells, n, res.scores, 0.0, 10_000, 1e-10, 60, None, counts=counts, chord=False
    )
    np.testing.assert_allclose(chord, full, atol=1e-8)
    # drawing inside the fitting loop gives the replicates of the same seeded counts
    fused = bootstrap_cells(cells, n, res.scores, 0.0, 10_000, 1e-10, 60, np.random.default_rng(2))
    np.testing.assert_array_equal(fused, chord)


def test_samples_for_P_input_and_results_seeded():
    rng = np.random.default_rng(11)
    P = rng.random((3, 4, 4))
    res = bradley_terry(P, intervals="bootstrap", n_boot=30, random_state=0)
    assert res.samples.shape == (30, 3, 4)
    first, second, y, _ = simulate(seed=12, m=500)
    a = bradley_terry(first=first, second=second, outcome=y, intervals="bootstrap",
                      n_boot=50, random_state=3)  # fmt: skip
    b = bradley_terry(first=first, second=second, outcome=y, intervals="bootstrap",
                      n_boot=50, random_state=3)  # fmt: skip
    np.testing.assert_array_equal(a.samples, b.samples)
    assert bradley_terry(first=first, second=second, outcome=y).samples is None


def test_groups_errors_are_clear():
    first, second, y, _ = simulate(seed=13, m=100)
    with pytest.raises(ValueError, match="one label per comparison"):
        bradley_terry(first=first, second=second, outcome=y, groups=np.arange(5))
    with pytest.raises(ValueError, match="groups\\[3\\]"):
        g = np.zeros(100)
        g[3] = np.nan
        bradley_terry(first=first, second=second, outcome=y, groups=g)
    with pytest.raises(ValueError, match="plain model on flat input"):
        bradley_terry(np.full((1, 3, 3), 0.5), groups=[0])


@pytest.mark.parametrize(
    "n, p", [(10_000_000, 4e-5), (400, 0.5), (1000, 0.97), (20, 0.3), (100_000, 1e-4), (3, 0.9)]
)
def test_binomial_sampler_matches_scipy(n, p):
    """BTRS (mean >= 10) and inversion (mean < 10) against the exact pmf: chi-square."""
    from numba import njit
    from scipy import stats

    from ranking.bradley_terry.multinomial import binomial, seed_stream

    @njit
    def draws(n, p, k, seed):
        st = seed_stream(seed)
        out = np.empty(k, np.int64)
        for i in range(k):
            out[i] = binomial(n, p, st)
        return out

    x = draws(n, p, 200_000, 7)
    assert x.min() >= 0 and x.max() <= n
    lo, hi = (int(v) for v in stats.binom.ppf([1e-4, 1 - 1e-4], n, p))
    ks = np.arange(lo, hi + 1)
    # counts below lo, at each k in [lo, hi], above hi
    obs = np.bincount(np.clip(x, lo - 1, hi + 1) - (lo - 1), minlength=ks.size + 2)
    pr = np.concatenate(
        [[stats.binom.cdf(lo - 1, n, p)], stats.binom.pmf(ks, n, p), [stats.binom.sf(hi, n, p)]]
    )
    e = pr * x.size
    keep = e > 5
    chi = ((obs[keep] - e[keep]) ** 2 / e[keep]).sum()
    assert stats.chi2.sf(chi, keep.sum() - 1) > 1e-3
    np.testing.assert_allclose(x.mean(), n * p, rtol=0.02, atol=0.02)


def test_folding_in_two_threads_equals_one():
    from ranking.bradley_terry.aggregate import _run_hash_serial

    first, second, y, _ = simulate(n_items=30, m=1_200_000, seed=14)
    ei, ej, out, w, _ = check_flat(first, second, y, None)
    cells = aggregate(ei, ej, out, w)  # two halves, merged
    zeros = np.zeros(ei.size, np.int64)
    _, a, b, wy, ww, cnt = _run_hash_serial(ei, ej, out, w, zeros, w.view(np.int64), True, 10**6)
    got = sorted(zip(cells.a, cells.b, cells.wy, cells.mult, strict=True))
    want = sorted(zip(a, b, wy, cnt, strict=True))
    assert got == want
    pairs = fold_pairs(ei, ej, out, w)
    assert pairs is not None and pairs[3].sum() == 1_200_000

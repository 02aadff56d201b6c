"""Comparison weights (how many games a comparison counts, Arena-Hard's 3 for a strong
verdict) in the ranking functions: win_matrix, win_ratio, position_bias, elo, bradley_terry.

Point estimates with integer weights equal those of the rows written ``weight`` times; the
bootstrap resamples a weighted row as one comparison, so its interval is not the one of the
replicated rows; "battles" count rows, never weight.
"""

from __future__ import annotations

import numpy as np
import pytest

from ranking import bradley_terry, elo, position_bias, win_matrix, win_ratio


def _games(seed=0, m=60, n=5):
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n, m)
    second = (first + rng.integers(1, n, m)) % n
    strength = np.linspace(-1, 1, n)
    p = 1 / (1 + np.exp(-(strength[first] - strength[second])))
    y = (rng.random(m) < p).astype(float)
    y[rng.random(m) < 0.15] = 0.5
    w = rng.choice([1.0, 3.0], m)
    return first, second, y, w, n


def _replicate(w, *arrays):
    reps = w.astype(np.int64)
    return [np.repeat(a, reps) for a in arrays]


def test_win_matrix_weighted_equals_replicated_rows_and_battles_count_rows():
    first, second, y, w, n = _games()
    got = win_matrix(first, second, y, n, weights=w)
    f2, s2, y2 = _replicate(w, first, second, y)
    rep = win_matrix(f2, s2, y2, n)
    np.testing.assert_allclose(got.wins, rep.wins)
    np.testing.assert_allclose(got.rate, rep.rate, equal_nan=True)
    np.testing.assert_allclose(got.weight, rep.battles)
    # battles: the rows, not the weight
    plain = win_matrix(first, second, y, n)
    np.testing.assert_array_equal(got.battles, plain.battles)
    assert got.battles.sum() == 2 * len(first)
    assert not np.allclose(got.rate, plain.rate, equal_nan=True)


def test_win_matrix_one_strong_verdict_by_hand():
    # a beats b strongly (weight 3), b beats a once: a won 3 of 4 weighted games, 2 battles
    m = win_matrix([0, 1], [1, 0], [1.0, 1.0], 2, weights=[3.0, 1.0])
    assert m.battles[0, 1] == 2
    assert m.rate[0, 1] == pytest.approx(0.75)
    assert m.weight[0, 1] == pytest.approx(4.0)


def _P_one_sample(first, second, y, n):
    """P and weights with at most one comparison per ordered pair (one context)."""
    P = np.full((1, n, n), np.nan)
    seen = set()
    keep = []
    for k, (a, b) in enumerate(zip(first, second, strict=True)):
        if (a, b) not in seen:
            seen.add((a, b))
            keep.append(k)
            P[0, a, b] = y[k]
    return P, np.asarray(keep)


def test_win_ratio_weighted_equals_replicated_tallies():
    first, second, y, w, n = _games(seed=1, m=40)
    P, keep = _P_one_sample(first, second, y, n)
    W = np.full(P.shape, np.nan)
    W[0, first[keep], second[keep]] = w[keep]
    got = win_ratio(P, tau=0.5, weights=W)[0]
    f2, s2, y2 = _replicate(w[keep], first[keep], second[keep], y[keep])
    rep = win_matrix(f2, s2, y2, n, tau=0.5)
    np.testing.assert_allclose(got, rep.wins.sum(axis=1) / rep.battles.sum(axis=1))
    # soft outcomes too, and weights of 1 change nothing
    soft = win_ratio(P, weights=W)[0]
    rep_soft = win_matrix(f2, s2, y2, n, tau=None)
    np.testing.assert_allclose(soft, rep_soft.wins.sum(axis=1) / rep_soft.battles.sum(axis=1))
    np.testing.assert_array_equal(win_ratio(P, weights=np.ones_like(P)), win_ratio(P))
    assert not np.allclose(got, win_ratio(P, tau=0.5)[0])


def test_position_bias_weighted_share():
    P = np.full((1, 3, 3), np.nan)
    P[0, 0, 1] = 1.0  # the first wins, weight 3
    P[0, 1, 0] = 0.0  # the second wins, weight 1
    P[0, 2, 0] = 0.0  # the second wins, weight 1
    W = np.full_like(P, np.nan)
    W[0, 0, 1], W[0, 1, 0], W[0, 2, 0] = 3.0, 1.0, 1.0
    assert float(position_bias(P)) == pytest.approx(1 / 3)
    assert float(position_bias(P, weights=W)) == pytest.approx(3 / 5)
    np.testing.assert_allclose(position_bias(P, weights=W, per_context=True), [3 / 5])


def test_elo_weight_scales_the_step():
    # from equal ratings a won game moves k * w * (1 - 0.5)
    res = elo([0], [1], [1.0], 2, k=4.0, weights=[3.0])
    np.testing.assert_allclose(res.scores, [1006.0, 994.0])
    first, second, y, w, n = _games(seed=2)
    np.testing.assert_array_equal(
        elo(first, second, y, n, weights=np.ones(len(y))).scores, elo(first, second, y, n).scores
    )
    # by hand: the update of each game scaled by its weight
    r = np.full(n, 1000.0)
    for a, b, s, ww in zip(first, second, y, w, strict=True):
        e = 1 / (1 + 10 ** ((r[b] - r[a]) / 400))
        r[a] += 4 * ww * (s - e)
        r[b] -= 4 * ww * (s - e)
    got = elo(first, second, y, n, weights=w, n_boot=20, random_state=0)
    np.testing.assert_allclose(got.scores, r)
    assert got.lower.shape == (n,)


def test_bradley_terry_weighted_point_and_fisher_equal_replicated():
    first, second, y, w, n = _games(seed=3, m=200)
    got = bradley_terry(
        first=first, second=second, outcome=y, n_items=n, weights=w, intervals="fisher"
    )
    f2, s2, y2 = _replicate(w, first, second, y)
    rep = bradley_terry(first=f2, second=s2, outcome=y2, n_items=n, intervals="fisher")
    np.testing.assert_allclose(got.scores, rep.scores, atol=1e-7)
    np.testing.assert_allclose(got.lower, rep.lower, atol=1e-7)
    np.testing.assert_allclose(got.upper, rep.upper, atol=1e-7)


def test_bradley_terry_bootstrap_resamples_a_weighted_row_as_one_game():
    # weight 10 on every row: as a likelihood, 10 copies of each; as a sample, one row each.
    first, second, y, _, n = _games(seed=4, m=120)
    w = np.full(len(y), 10.0)
    kw = dict(n_items=n, intervals="bootstrap", n_boot=300, random_state=0)
    got = bradley_terry(first=first, second=second, outcome=y, weights=w, **kw)
    f2, s2, y2 = _replicate(w, first, second, y)
    rep = bradley_terry(first=f2, second=s2, outcome=y2, **kw)
    plain = bradley_terry(first=first, second=second, outcome=y, **kw)
    np.testing.assert_allclose(got.scores, rep.scores, atol=1e-7)  # the same point
    width = got.upper - got.lower
    # 120 games, not 1,200: the interval of the weighted rows is that of the rows alone
    # (a constant weight scales the likelihood, not the sample), about sqrt(10) times
    # the width of the replicated rows'
    np.testing.assert_allclose(width, plain.upper - plain.lower, rtol=1e-6)
    ratio = width / (rep.upper - rep.lower)
    assert np.all(ratio > 2.0), ratio


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf])
def test_bad_weights_are_refused(bad):
    first, second, y = [0, 1, 2], [1, 2, 0], [1.0, 0.0, 0.5]
    w = [1.0, bad, 1.0]
    # the value as a user reads it ('= inf', not numpy's 'np.float64(inf)')
    with pytest.raises(ValueError, match=rf"weights\[1\] = {float(bad)!r} \(1 bad"):
        win_matrix(first, second, y, 3, weights=w)
    with pytest.raises(ValueError, match=r"weights\[1\]"):
        elo(first, second, y, 3, weights=w)
    P = np.full((1, 3, 3), np.nan)
    P[0, 0, 1] = P[0, 1, 2] = 1.0
    W = np.ones_like(P)
    W[0, 1, 2] = bad
    with pytest.raises(ValueError, match=r"weights\[\(0, 1, 2\)\]"):
        win_ratio(P, weights=W)
    with pytest.raises(ValueError, match=r"weights\[\(0, 1, 2\)\]"):
        position_bias(P, weights=W)
    W[0, 1, 2] = 1.0
    W[0, 2, 1] = bad  # no comparison there: ignored
    win_ratio(P, weights=W)


def test_weights_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match="shape"):
        win_matrix([0, 1], [1, 0], [1.0, 0.0], 2, weights=[1.0])
    with pytest.raises(ValueError, match="shape"):
        elo([0, 1], [1, 0], [1.0, 0.0], 2, weights=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="shape"):
        win_ratio(np.full((1, 2, 2), 0.5), weights=np.ones((1, 3, 3)))


def test_budget_win_ratio_counts_weights_and_spends_one_comparison_each():
    from ranking import budget_curves, spearman

    rng = np.random.default_rng(5)
    n_ctx, n = 6, 5
    P = rng.choice([0.0, 0.5, 1.0], size=(n_ctx, n, n))
    P[:, np.arange(n), np.arange(n)] = np.nan
    W = rng.choice([1.0, 3.0], size=P.shape)
    ref = rng.normal(size=(n_ctx, n))
    full = n * (n - 1)
    kw = dict(budgets=[full // 2, full], strategies=("random",), debias=(False,), n_draws=3)
    for tau in (None, 0.5):
        got = budget_curves(P, ref, tau=tau, weights=W, random_state=0, **kw)
        plain = budget_curves(P, ref, tau=tau, random_state=0, **kw)
        ones = budget_curves(P, ref, tau=tau, weights=np.ones_like(P), random_state=0, **kw)
        np.testing.assert_array_equal(ones.mean, plain.mean)
        # the whole budget: every comparison seen, each with its weight
        expected = np.mean(spearman(win_ratio(P, tau=tau, weights=W), ref))
        assert got.mean[0, 0, -1] == pytest.approx(expected)
        assert got.mean[0, 0, -1] != pytest.approx(plain.mean[0, 0, -1])
    # every method takes the weights now (tests/ranking/test_budget*.py)
    poe = budget_curves(P, ref, method="poe", weights=W, random_state=0, **kw)
    assert poe.mean[0, 0, -1] != pytest.approx(
        budget_curves(P, ref, method="poe", random_state=0, **kw).mean[0, 0, -1]
    )

"""Transitivity: circular triads, Kendall–Babington Smith zeta, cycles, BT disagreement."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ranking import PooledStat, bradley_terry, transitivity

# ---------------------------------------------------------------- slow twin (itertools)


def _twin(P, tau=0.5, max_cycles=50):
    """Loops over itertools.combinations: counts, complete flags and every cycle."""
    P = np.asarray(P, dtype=float)
    n_ctx, n, _ = P.shape
    taus = np.broadcast_to(np.asarray(tau, dtype=float), (n_ctx,))
    circ, checked, n_cand, complete, cycles = [], [], [], [], []
    for c in range(n_ctx):
        edge, strength = {}, {}
        for i, j in itertools.combinations(range(n), 2):
            vals = []
            if math.isfinite(P[c, i, j]):
                vals.append(P[c, i, j])
            if math.isfinite(P[c, j, i]):
                vals.append(1.0 - P[c, j, i])
            if not vals:
                continue
            m = 0.0
            for v in vals:
                m += v
            m /= len(vals)
            d = 1 if m > taus[c] else (-1 if m < taus[c] else 0)
            edge[i, j], edge[j, i] = d, -d
            strength[i, j] = strength[j, i] = abs(m - 0.5)
        present = sorted({i for i, _ in edge})
        n_cand.append(len(present))
        complete.append(
            all(edge.get((i, j), 0) != 0 for i, j in itertools.combinations(present, 2))
        )
        n_c = n_t = 0
        for i, j, k in itertools.combinations(range(n), 3):
            es = [edge.get(e, 0) for e in ((i, j), (j, k), (k, i))]
            if 0 in es:
                continue
            n_t += 1
            if es[0] == es[1] == es[2]:
                n_c += 1
                a, b = (j, k) if es[0] == 1 else (k, j)
                s = min(strength[i, j], strength[j, k], strength[k, i])
                cycles.append((-s, c, i, j, k, a, b))
        circ.append(n_c)
        checked.append(n_t)
    cycles.sort()
    cycles = cycles[:max_cycles]
    return (
        np.array(circ),
        np.array(checked),
        np.array(n_cand),
        np.array(complete),
        [(c, i, a, b, -s) for s, c, i, _, _, a, b in cycles],
    )


def _random_P(rng, n_ctx, n, holes=0.2, grid=4):
    """Probabilities on a coarse grid (so ties at tau happen), with holes."""
    P = rng.random((n_ctx, n, n))
    if grid is not None:
        P = np.round(P * grid) / grid
    P[rng.random(P.shape) < holes] = np.nan
    idx = np.arange(n)
    P[:, idx, idx] = np.nan
    return P


def _tournament(n, beats):
    """Hard P of a tournament, both orders: beats(i, j) -> i beats j."""
    P = np.full((n, n), np.nan)
    for i, j in itertools.permutations(range(n), 2):
        P[i, j] = 1.0 if beats(i, j) else 0.0
    return P


def _cycle_list(r):
    cy = r.cycles
    return [
        (int(c), int(i), int(j), int(k), float(s))
        for c, i, j, k, s in zip(
            cy["context"], cy["i"], cy["j"], cy["k"], cy["strength"], strict=True
        )
    ]


# ---------------------------------------------------------------- the twin


@pytest.mark.parametrize("holes, grid", [(0.25, 4), (0.0, None), (0.05, 10)])
@pytest.mark.parametrize("tau", [0.5, 0.6, "per-context"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_itertools_twin(seed, tau, holes, grid):
    rng = np.random.default_rng(seed)
    P = _random_P(rng, 12, 7, holes=holes, grid=grid)
    P[3] = np.nan  # a context without any comparison
    P[4] = np.nan
    P[4, 0, 1] = 0.75  # two candidates only
    P[5, :, 4:] = np.nan  # one order only for some pairs
    t = rng.choice([0.25, 0.5, 0.75], size=12) if tau == "per-context" else tau
    r = transitivity(P, tau=t, max_cycles=1000)
    circ, checked, n_cand, complete, cycles = _twin(P, t, max_cycles=1000)
    np.testing.assert_array_equal(r.n_circular, circ)
    np.testing.assert_array_equal(r.n_triads, checked)
    np.testing.assert_array_equal(r.n_candidates, n_cand)
    assert _cycle_list(r) == cycles
    assert r.total_circular == circ.sum() and r.total_triads == checked.sum()
    zeta_defined = complete & (n_cand >= 3)
    np.testing.assert_array_equal(np.isfinite(r.zeta), zeta_defined)
    n = n_cand[zeta_defined]
    denom = np.where(n % 2 == 1, n**3 - n, n**3 - 4 * n)
    np.testing.assert_allclose(r.zeta[zeta_defined], 1 - 24 * circ[zeta_defined] / denom)
    if holes == 0.0:
        assert zeta_defined[[0, 1, 2, 6, 7]].all()
    # truncation keeps the strongest, in the same order
    r5 = transitivity(P, tau=t, max_cycles=5)
    assert _cycle_list(r5) == cycles[:5]


def test_cycles_are_real_cycles_strongest_first():
    rng = np.random.default_rng(7)
    P = _random_P(rng, 30, 8, holes=0.1, grid=20)
    r = transitivity(P, max_cycles=40)
    s = r.cycles["strength"]
    assert len(s) == min(40, r.total_circular) and np.all(np.diff(s) <= 0)
    for c, i, j, k in zip(*(r.cycles[key] for key in "context i j k".split()), strict=True):
        assert i < j and i < k

        def m(a, b, c=c):
            vals = [v for v in (P[c, a, b], 1 - P[c, b, a]) if np.isfinite(v)]
            return np.mean(vals)

        assert m(i, j) > 0.5 and m(j, k) > 0.5 and m(k, i) > 0.5


# ---------------------------------------------------------------- Kendall–Babington Smith


@pytest.mark.parametrize("n", [3, 4, 5, 8, 9])
def test_kbs_identity_on_complete_tournaments(n):
    rng = np.random.default_rng(n)
    Ps = []
    for _ in range(20):
        up = rng.random((n, n)) < 0.5
        Ps.append(_tournament(n, lambda i, j, up=up: up[i, j] if i < j else not up[j, i]))
    P = np.stack(Ps)
    r = transitivity(P)
    a = (np.nansum(P, axis=2) + np.nansum(1 - P, axis=1)) / 2  # wins of i (both orders)
    c = n * (n - 1) * (2 * n - 1) / 12 - 0.5 * (a**2).sum(axis=1)
    np.testing.assert_allclose(r.n_circular, c)
    assert np.all(r.n_triads == math.comb(n, 3))
    denom = n**3 - n if n % 2 else n**3 - 4 * n
    np.testing.assert_allclose(r.zeta, 1 - 24 * c / denom)
    assert np.all((r.zeta >= 0) & (r.zeta <= 1))


@pytest.mark.parametrize("n", [3, 4, 6, 7, 16])
def test_transitive_tournament_has_zeta_one(n):
    P = _tournament(n, lambda i, j: i < j)
    r = transitivity(P)
    assert r.n_circular[0] == 0 and r.zeta[0] == 1.0 and r.total_triads == math.comb(n, 3)
    assert len(r.cycles["i"]) == 0 and r.circular_share == 0.0


@pytest.mark.parametrize("n", [3, 5, 7, 11])
def test_regular_tournament_is_least_consistent(n):
    h = (n - 1) // 2
    P = _tournament(n, lambda i, j: (j - i) % n <= h)
    r = transitivity(P, max_cycles=10_000)
    assert r.n_circular[0] == (n**3 - n) // 24
    assert r.zeta[0] == pytest.approx(0.0, abs=1e-12)
    assert len(r.cycles["i"]) == (n**3 - n) // 24


@pytest.mark.parametrize("n", [4, 6, 8])
def test_even_near_regular_tournament_reaches_zeta_zero(n):
    # score sequence as even as possible (n/2 candidates with n/2 wins, n/2 with n/2 - 1)
    h = n // 2
    P = _tournament(n, lambda i, j: (j - i) % n < h if (j - i) % n != h else i < j)
    r = transitivity(P)
    assert r.n_circular[0] == (n**3 - 4 * n) // 24
    assert r.zeta[0] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("n", [3, 6, 10])
def test_injected_cycle_gives_exactly_one(n):
    # transitive 0 > 1 > ... except that 2 beats 0: the one cycle 0 > 1 > 2 > 0
    P = _tournament(n, lambda i, j: not (i < j) if {i, j} == {0, 2} else i < j)
    r = transitivity(P)
    assert r.n_circular[0] == 1 and r.total_circular == 1
    assert _cycle_list(r) == [(0, 0, 1, 2, 0.5)]
    denom = n**3 - n if n % 2 else n**3 - 4 * n
    assert r.zeta[0] == pytest.approx(1 - 24 / denom)


# ---------------------------------------------------------------- BT disagreement


def test_bt_disagreement_zero_for_transitive_hard_P():
    n = 6
    P = np.stack([_tournament(n, lambda i, j: i < j), _tournament(n, lambda i, j: i > j)])
    r = transitivity(P)
    np.testing.assert_array_equal(r.bt_disagreement, [0.0, 0.0])
    assert r.bt_disagreement_pooled == 0.0 and r.n_judged.tolist() == [30, 30]


def test_bt_disagreement_counts_against_its_own_fit():
    rng = np.random.default_rng(3)
    P = _random_P(rng, 15, 6, holes=0.3, grid=8)
    r = transitivity(P, tau=0.5)
    th = bradley_terry(P).scores
    expect = []
    for c in range(15):
        d = n_j = 0.0
        for i, j in itertools.permutations(range(6), 2):
            p = P[c, i, j]
            if not np.isfinite(p):
                continue
            dec = 1.0 if p > 0.5 else (0.0 if p < 0.5 else 0.5)
            diff = th[c, i] - th[c, j]
            h = 1.0 if diff > 1e-9 else (0.0 if diff < -1e-9 else 0.5)
            d += abs(dec - h)
            n_j += 1
        expect.append(d / n_j)
    np.testing.assert_allclose(r.bt_disagreement, expect)
    # the caller's scores are used as given
    r2 = transitivity(P, scores=th)
    np.testing.assert_allclose(r2.bt_disagreement, expect)
    flipped = transitivity(P, scores=-th)
    assert np.all(flipped.bt_disagreement >= r.bt_disagreement)


def test_one_cycle_of_three_bt_disagreement():
    P = np.full((3, 3), np.nan)
    P[0, 1], P[1, 2], P[2, 0] = 0.9, 0.9, 0.9  # symmetric cycle: equal scores, all ties
    r = transitivity(P)
    assert r.n_circular[0] == 1 and r.zeta[0] == 0.0
    assert r.bt_disagreement[0] == pytest.approx(0.5)


# ---------------------------------------------------------------- holes and edge cases


def test_holes_all_nan_and_small_contexts():
    P = np.full((4, 5, 5), np.nan)
    P[0] = _tournament(5, lambda i, j: i < j)
    P[1, 0, 1], P[1, 1, 0] = 0.8, 0.3  # two candidates
    P[3] = _tournament(5, lambda i, j: i < j)
    P[3, 0, 4] = P[3, 4, 0] = np.nan  # one pair never compared
    r = transitivity(P)
    assert r.n_candidates.tolist() == [5, 2, 0, 5]
    assert r.n_triads.tolist() == [10, 0, 0, 7]
    assert r.zeta[0] == 1.0 and np.isnan(r.zeta[1:]).all()
    assert "fewer than 3" in r.reasons["zeta"] and "[1]" in r.reasons["zeta"]
    assert "no comparison" in r.reasons["zeta"] and "not a complete" in r.reasons["zeta"]
    assert np.isnan(r.bt_disagreement[2]) and np.isfinite(r.bt_disagreement[[0, 1, 3]]).all()
    assert "[2]" in r.reasons["bt_disagreement"]
    assert isinstance(r.mean_zeta, PooledStat) and r.mean_zeta.n_contexts == 1
    assert r.circular_share.n_skipped == 2


def test_ties_are_not_checked_and_break_completeness():
    P = _tournament(4, lambda i, j: i < j)
    P[0, 1] = P[1, 0] = 0.5  # a tie
    r = transitivity(P)
    assert r.n_triads[0] == 2 and np.isnan(r.zeta[0])


def test_everything_nan_is_not_an_error():
    r = transitivity(np.full((2, 4, 4), np.nan))
    assert r.total_triads == 0 and np.isnan(r.circular_share) and np.isnan(r.mean_zeta)
    assert np.isnan(r.bt_disagreement_pooled) and np.isnan(r.bt_disagreement).all()
    assert {"circular_share", "mean_zeta", "bt_disagreement_pooled"} <= set(r.reasons)
    assert len(r.cycles["context"]) == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(P=np.full((2, 3), 0.5)), "shape"),
        (dict(P=np.full((3, 3), 1.5)), r"\[0, 1\]"),
        (dict(P=np.full((3, 3), 0.5), tau=2.0), "tau"),
        (dict(P=np.full((3, 3), 0.5), max_cycles=-1), "max_cycles"),
        (dict(P=np.full((3, 3), 0.5), max_cycles=2.5), "max_cycles"),
        (dict(P=np.full((3, 3), 0.5), scores=np.zeros(3)), "scores"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        transitivity(**kwargs)

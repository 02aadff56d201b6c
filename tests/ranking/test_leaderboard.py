"""ranking.leaderboard: battles and win rates tallied one comparison at a time, competition
ranks and the comparison of two rankings against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ranking import competition_ranks, rank_change, win_matrix


def _by_hand(first, second, outcome, n, tau):
    wins = np.zeros((n, n))
    battles = np.zeros((n, n), dtype=int)
    for a, b, y in zip(first, second, outcome, strict=True):
        if tau is not None:
            y = 1.0 if y > tau else (0.0 if y < tau else 0.5)
        wins[a, b] += y
        wins[b, a] += 1.0 - y
        battles[a, b] += 1
        battles[b, a] += 1
    return wins, battles


@pytest.mark.parametrize("tau", [0.5, 0.3, None])
def test_win_matrix_matches_a_count_one_battle_at_a_time(tau):
    rng = np.random.default_rng(0)
    n, m = 6, 300
    first = rng.integers(0, n, m)
    second = (first + rng.integers(1, n, m)) % n  # never itself
    outcome = rng.choice([0.0, 0.5, 1.0, 0.3, 0.8], m)
    got = win_matrix(first, second, outcome, n, tau=tau)
    wins, battles = _by_hand(first, second, outcome, n, tau)
    np.testing.assert_allclose(got.wins, wins)
    np.testing.assert_array_equal(got.battles, battles)
    off = ~np.eye(n, dtype=bool)
    np.testing.assert_allclose((got.wins + got.wins.T)[off], battles[off])
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got.rate, np.where(battles > 0, wins / battles, np.nan))


def test_win_matrix_pairs_that_never_met_are_nan():
    got = win_matrix([0, 1], [1, 0], [1.0, 0.5], 3)
    assert got.battles[0, 1] == 2 and got.wins[0, 1] == 1.5 and got.wins[1, 0] == 0.5
    assert np.isnan(got.rate[0, 2]) and np.isnan(got.rate[2, 1]) and np.isnan(got.rate[0, 0])


def test_win_matrix_refuses_bad_input():
    with pytest.raises(ValueError, match="outcome"):
        win_matrix([0], [1], [np.nan], 2)
    with pytest.raises(ValueError, match="itself"):
        win_matrix([0], [0], [1.0], 2)
    with pytest.raises(ValueError, match="out of range"):
        win_matrix([0], [3], [1.0], 2)


def test_competition_ranks_agree_with_scipy_min_ranks():
    rng = np.random.default_rng(1)
    s = rng.choice([0.1, 0.5, 0.9, 1.3], 20)
    np.testing.assert_array_equal(competition_ranks(s), stats.rankdata(-s, method="min"))
    r = competition_ranks([1.0, np.nan, 2.0])
    assert r[0] == 2 and np.isnan(r[1]) and r[2] == 1


def test_rank_change_counts_moves_and_correlates_like_scipy():
    rng = np.random.default_rng(2)
    a = rng.normal(size=12)
    b = a + rng.normal(scale=0.5, size=12)
    got = rank_change(a, b)
    ra, rb = stats.rankdata(-a, method="min"), stats.rankdata(-b, method="min")
    np.testing.assert_array_equal(got.change, ra - rb)
    assert got.n_moved == int((ra != rb).sum())
    assert got.spearman == pytest.approx(stats.spearmanr(a, b).statistic)
    assert got.kendall == pytest.approx(stats.kendalltau(a, b).statistic)
    same = rank_change(a, 2 * a + 1)
    assert same.n_moved == 0 and same.spearman == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same length"):
        rank_change([1.0, 2.0], [1.0])

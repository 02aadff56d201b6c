"""Arena-style tallies over one item set: who beat whom, and how often.

Flat comparisons (``first[k]`` shown before ``second[k]``, outcome = the first item's win:
1, 0, 0.5 for a tie, or a probability) pooled over every context, as for a systems
leaderboard: :func:`win_matrix` counts the battles of every pair of items and the share each
one won, in either presentation order; :func:`rank_change` compares two orders of the same
items (raw and debiased rankings).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ranking._core.checks import check_flat, check_weights
from ranking._core.decisions import decide
from ranking.agreement.metrics import kendall, spearman

__all__ = ["WinMatrix", "win_matrix", "RankChange", "rank_change", "competition_ranks"]


@dataclass(frozen=True)
class WinMatrix:
    """Pairwise tallies of a set of items.

    Attributes
    ----------
    wins : ndarray, shape (n_items, n_items)
        ``wins[i, j]``: battles of i against j that i won (a tie counts half), whichever of
        the two was shown first, each counted with its weight.
    battles : ndarray of int64, shape (n_items, n_items)
        ``battles[i, j]``: comparisons between i and j in either order (symmetric).
    rate : ndarray, shape (n_items, n_items)
        ``wins / weight``: the weighted share of their battles that i won; NaN where i and j
        never met (and on the diagonal).
    weight : ndarray, shape (n_items, n_items)
        ``weight[i, j]``: the summed weight of the battles between i and j (symmetric; equal
        to ``battles`` without weights). ``battles`` counts comparisons, never weight.
    """

    wins: np.ndarray
    battles: np.ndarray
    rate: np.ndarray
    weight: np.ndarray | None = None


def win_matrix(first, second, outcome, n_items=None, *, tau=0.5, weights=None) -> WinMatrix:
    """Battles and win rates between every two items.

    Parameters
    ----------
    first, second : array_like of int
        Item indices of the candidate shown first and second, one entry per comparison.
    outcome : array_like of float
        The first item's result: 1 = win, 0 = loss, 0.5 = tie, or a probability in [0, 1].
    n_items : int, optional
        Number of items (default: largest index + 1).
    tau : float or None, default 0.5
        Decision threshold (``ranking.decide``): a battle is won when the outcome is above
        tau, half won at tau. None: count the outcome itself (soft wins).
    weights : array_like of float, optional
        How many games each comparison counts (a finite number > 0; default 1 each;
        Arena-Hard: 3 for a strong verdict). Wins and ``weight`` add the weights;
        ``battles`` still counts each comparison once.

    Returns
    -------
    WinMatrix
        ``wins + wins.T == weight`` off the diagonal (``== battles`` without weights).

    Raises
    ------
    ValueError
        Bad arrays (``ranking._core.checks.check_flat``), tau outside [0, 1], or a weight
        that is not a finite number > 0.

    Examples
    --------
    >>> m = win_matrix([0, 1, 0], [1, 0, 2], [1.0, 1.0, 0.0], 3)
    >>> m.battles[0, 1], m.wins[0, 1], m.rate[0, 2]
    (np.int64(2), np.float64(1.0), np.float64(0.0))
    """
    w = check_weights(weights, np.shape(outcome))
    first, second, outcome, _, n_items = check_flat(first, second, outcome, n_items)
    y = outcome if tau is None else decide(outcome, tau)
    ones = np.ones(len(y)) if w is None else w
    wins = np.zeros((n_items, n_items))
    battles = np.zeros((n_items, n_items), dtype=np.int64)
    weight = np.zeros((n_items, n_items))
    np.add.at(wins, (first, second), ones * y)
    np.add.at(wins, (second, first), ones * (1.0 - y))
    np.add.at(battles, (first, second), 1)
    np.add.at(weight, (first, second), ones)
    battles = battles + battles.T
    weight = weight + weight.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(battles > 0, wins / np.where(battles > 0, weight, 1.0), np.nan)
    return WinMatrix(wins, battles, rate, weight)


def competition_ranks(scores) -> np.ndarray:
    """Ranks 1 = best (highest score); equal scores share the best rank; NaN stays NaN.

    Examples
    --------
    >>> competition_ranks([0.2, 0.9, 0.2, np.nan])
    array([ 2.,  1.,  2., nan])
    """
    s = np.asarray(scores, dtype=np.float64)
    out = np.full(s.shape, np.nan)
    ok = np.isfinite(s)
    v = s[ok]
    # 1 + number of strictly better scores
    out[ok] = 1.0 + (v[None, :] > v[:, None]).sum(axis=1)
    return out


@dataclass(frozen=True)
class RankChange:
    """How a second ranking of the same items differs from a first.

    Attributes
    ----------
    before, after : ndarray
        Competition ranks (1 = best) of each item in each ranking.
    change : ndarray
        ``before - after``: positive = the item moved up.
    n_moved : int
        Items whose rank changed (items unranked in either ranking are not counted).
    spearman, kendall : float
        Rank correlations between the two score vectors (Kendall's tau-b); NaN when
        undefined (fewer than two items, or one ranking all tied).
    """

    before: np.ndarray
    after: np.ndarray
    change: np.ndarray
    n_moved: int
    spearman: float
    kendall: float


def rank_change(before, after) -> RankChange:
    """Compare two score vectors of the same items (higher = better).

    Parameters
    ----------
    before, after : array_like of float, shape (n_items,)
        Scores of the same items; NaN for an item not ranked.

    Returns
    -------
    RankChange

    Raises
    ------
    ValueError
        The two vectors differ in shape or are not 1-D.
    """
    a = np.asarray(before, dtype=np.float64)
    b = np.asarray(after, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"before and after must be 1-D of the same length; got {a.shape} and {b.shape}"
        )
    ra, rb = competition_ranks(a), competition_ranks(b)
    change = ra - rb
    moved = int((np.isfinite(change) & (change != 0)).sum())
    return RankChange(ra, rb, change, moved, float(spearman(a, b)), float(kendall(a, b)))

"""Rank intervals, Chatbot Arena's rank rule, separability and "significantly better".

A leaderboard is only as good as its uncertainty. From bootstrap replicates of the scores (or,
without replicates, from any score intervals such as Fisher's) this module says for every item
the range of ranks it could plausibly hold, the rank Chatbot Arena would print (one plus the
number of items that are significantly better), which pairs are significantly ordered, and
the share of pairs whose intervals do not overlap (Arena-Hard's *separability*).

Conventions: ranks are competition ranks, 1 = best (highest score); items with a NaN score are
unranked and get rank 0, low 0, high 0 and never count as better or worse than anything.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ranking._core.score_checks import check_confidence

__all__ = ["RankIntervals", "rank_intervals"]


@dataclass(frozen=True)
class RankIntervals:
    """Result of :func:`rank_intervals`.

    Attributes
    ----------
    rank : ndarray of int, shape (n,)
        Competition rank of the scores, 1 = best; 0 where the score is NaN.
    low : ndarray of int, shape (n,)
        Best plausible rank (1 = best); 0 where unranked.
    high : ndarray of int, shape (n,)
        Worst plausible rank; 0 where unranked.
    arena_rank : ndarray of int, shape (n,)
        Chatbot Arena's rule: 1 + the number of items whose lower bound is above this item's
        upper bound; 0 where unranked.
    better : ndarray of bool, shape (n, n)
        ``better[i, j]``: item i is significantly better than item j.
    separability : float
        Share of pairs of ranked items whose score intervals do not overlap (NaN with fewer
        than two ranked items).
    method : str
        "bootstrap" (from replicates) or "intervals" (from the given score bounds).
    confidence : float
        The coverage the intervals were computed at.
    """

    rank: np.ndarray
    low: np.ndarray
    high: np.ndarray
    arena_rank: np.ndarray
    better: np.ndarray
    separability: float
    method: str
    confidence: float


def rank_intervals(scores, lower=None, upper=None, *, samples=None, confidence=0.95):
    """Rank intervals, Arena ranks, separability and the "significantly better" matrix.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Point scores, higher = better; NaN = unranked item.
    lower, upper : array_like of float, shape (n,), optional
        Score interval bounds (e.g. ``BTResult.lower``/``upper``). Required without
        ``samples``; with ``samples`` they default to the percentile intervals of the samples.
    samples : array_like of float, shape (n_boot, n), optional
        Bootstrap replicates of the scores (``BTResult.samples`` of a flat fit, or one
        context's slice of a P fit). NaN entries (an item absent from a replicate) are left
        out of that item's statistics.
    confidence : float, default 0.95
        Coverage of the rank intervals and of the pairwise decisions.

    Returns
    -------
    RankIntervals

    Notes
    -----
    With ``samples``: each replicate is ranked (competition ranks among the items ranked by
    ``scores``); an item's rank interval is the (inverted-CDF) percentile interval of its
    replicate ranks, widened if needed to contain its point rank. ``better[i, j]`` holds when
    the lower percentile of theta_i - theta_j over the replicates is above 0, i.e. when the
    share of replicates with theta_i <= theta_j is below (1 - confidence) / 2.

    Without samples: low = 1 + #{j: lower_j > upper_i}, high = n - #{j: upper_j < lower_i}
    (n ranked items) and ``better[i, j] = lower_i > upper_j``.

    In both cases ``arena_rank`` = 1 + #{j: lower_j > upper_i} and separability is the share
    of pairs i < j with lower_i > upper_j or lower_j > upper_i.

    Raises
    ------
    ValueError
        Mismatched shapes, missing bounds without samples, or a bad confidence.

    Examples
    --------
    >>> r = rank_intervals([3.0, 2.0, 0.0], lower=[2.5, 1.0, -1.0], upper=[3.5, 2.6, 0.5])
    >>> r.rank.tolist(), r.low.tolist(), r.high.tolist(), r.arena_rank.tolist()
    ([1, 2, 3], [1, 1, 3], [2, 2, 3], [1, 1, 3])
    >>> r.better.astype(int).tolist()
    [[0, 0, 1], [0, 0, 1], [0, 0, 0]]
    >>> round(r.separability, 3)
    0.667
    """
    check_confidence(confidence)
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"scores must be one-dimensional; got shape {s.shape}")
    n = s.size
    ranked = np.isfinite(s)
    a = (1.0 - float(confidence)) / 2.0
    if samples is not None:
        S = np.asarray(samples, dtype=np.float64)
        if S.ndim != 2 or S.shape[1] != n or S.shape[0] < 1:
            raise ValueError(
                f"samples must have shape (n_boot, {n}) matching scores; got {S.shape}"
            )
        S = np.where(ranked[None, :], S, np.nan)
        if lower is None or upper is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                lo_q = np.nanquantile(S, a, axis=0)
                hi_q = np.nanquantile(S, 1.0 - a, axis=0)
            lower = lo_q if lower is None else lower
            upper = hi_q if upper is None else upper
    lo_s, hi_s = _bounds(lower, upper, n)
    rank = _competition(s)
    usable = ranked & np.isfinite(lo_s) & np.isfinite(hi_s)
    above = usable[None, :] & usable[:, None] & (lo_s[None, :] > hi_s[:, None])  # [i, j]: j > i
    arena = np.where(ranked, 1 + above.sum(axis=1), 0)
    if samples is not None:
        low, high = _replicate_rank_bounds(S, ranked, a)
        low = np.where(ranked, np.minimum(low, rank), 0)
        high = np.where(ranked, np.maximum(high, rank), 0)
        better = _replicate_better(S, ranked, a)
        method = "bootstrap"
    else:
        n_ranked = int(ranked.sum())
        below = usable[None, :] & usable[:, None] & (hi_s[None, :] < lo_s[:, None])
        low = np.where(ranked, 1 + above.sum(axis=1), 0)
        high = np.where(ranked, n_ranked - below.sum(axis=1), 0)
        better = above.T.copy()
        method = "intervals"
    sep = _separability(above, ranked)
    return RankIntervals(
        rank=rank,
        low=low.astype(np.int64),
        high=high.astype(np.int64),
        arena_rank=arena.astype(np.int64),
        better=better,
        separability=sep,
        method=method,
        confidence=float(confidence),
    )


def _bounds(lower, upper, n):
    if lower is None or upper is None:
        raise ValueError(
            "rank_intervals needs score intervals: pass lower= and upper= (e.g. a fit with "
            "intervals='fisher') or samples= (bootstrap replicates)"
        )
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if lo.shape != (n,) or hi.shape != (n,):
        raise ValueError(
            f"lower and upper must have the scores' shape ({n},); got {lo.shape} and {hi.shape}"
        )
    return lo, hi


def _competition(s):
    out = np.zeros(s.size, np.int64)
    ok = np.isfinite(s)
    v = s[ok]
    out[ok] = 1 + (v[None, :] > v[:, None]).sum(axis=1)
    return out


def _replicate_ranks(S):
    """Competition ranks of every replicate (row); NaN where the replicate's score is NaN."""
    B, n = S.shape
    order = np.sort(S, axis=1)  # NaN last
    k = np.isfinite(S).sum(axis=1)
    R = np.full((B, n), np.nan)
    for b in range(B):
        row = order[b, : k[b]]
        ok = np.isfinite(S[b])
        # 1 + number of strictly larger scores
        R[b, ok] = k[b] - np.searchsorted(row, S[b, ok], side="right") + 1
    return R


def _replicate_rank_bounds(S, ranked, a):
    R = _replicate_ranks(S)
    low = np.zeros(S.shape[1], np.int64)
    high = np.zeros(S.shape[1], np.int64)
    for i in np.flatnonzero(ranked):
        r = R[:, i]
        r = r[np.isfinite(r)]
        if r.size:
            low[i], high[i] = np.quantile(r, [a, 1.0 - a], method="inverted_cdf")
    return low, high


def _replicate_better(S, ranked, a, chunk=64):
    """better[i, j]: share of replicates (both defined) with S_i <= S_j is below ``a``."""
    n = S.shape[1]
    not_above = np.zeros((n, n))
    both = np.zeros((n, n))
    fin = np.isfinite(S)
    for start in range(0, S.shape[0], chunk):
        blk = S[start : start + chunk]
        f = fin[start : start + chunk].astype(np.float64)
        d = np.einsum("bi,bj->ij", f, f)
        with np.errstate(invalid="ignore"):
            le = (blk[:, :, None] <= blk[:, None, :]).astype(np.float64)
        not_above += le.sum(axis=0)
        both += d
    with np.errstate(invalid="ignore", divide="ignore"):
        share = not_above / both
    better = (both > 0) & (share < a)
    better &= ranked[:, None] & ranked[None, :]
    np.fill_diagonal(better, False)
    return better


def _separability(above, ranked):
    m = int(ranked.sum())
    if m < 2:
        return float("nan")
    # above[i, j] and above[j, i] cannot both hold; each separated pair counted once
    return float(above.sum()) / (m * (m - 1) / 2.0)

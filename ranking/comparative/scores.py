"""Win-ratio scores from pairwise judgements (Liusie, Manakul, Gales 2024).

For a context with candidates 1..N the judge gives p_ij = P(i shown first beats j shown
second). The win-ratio of item i is its wins over its comparisons, counting every present
comparison it took part in, as the first or as the second candidate. A win is the soft
outcome p itself (``tau=None``) or the hard decision at a threshold tau
(``ranking._core.decisions``).
"""

from __future__ import annotations

import numpy as np

from ranking._core.checks import as_P, check_tau, weights_on
from ranking._core.decisions import _decide_rows


def _win_ratio(P, taus, weights=None):
    """Win-ratio of a checked P (diagonal NaN); ``taus`` None for soft outcomes; ``weights``
    checked (0 where P has no comparison) or None (each comparison counts 1)."""
    n_contexts, n_items, _ = P.shape
    present = np.isfinite(P)
    if taus is None:
        d = np.where(present, P, 0.0)
    else:
        d = _decide_rows(P.reshape(n_contexts, -1), taus).reshape(P.shape)
        d = np.where(present, d, 0.0)
    lost = np.where(present, 1.0 - d, 0.0)  # lost[c, i, u]: u's win as the second candidate
    if weights is not None:
        d = d * weights
        lost = lost * weights
    # Each item's wins are added one comparison after the other in the order of a loop over
    # the pairs (i, j) row by row: as the second candidate of the rows i < u, its own row,
    # then as the second of the rows i > u. Soft scores that are equal in exact arithmetic
    # then stay equal (ties), whatever the pages rank them with.
    wins = np.zeros((n_contexts, n_items))
    for i in range(n_items):
        wins[:, i + 1 :] += lost[:, i, i + 1 :]
    for j in range(n_items):
        wins += d[:, :, j]
    for i in range(n_items):
        wins[:, :i] += lost[:, i, :i]
    if weights is None:
        counts = present.sum(axis=2) + present.sum(axis=1)
    else:
        counts = weights.sum(axis=2) + weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, wins / counts, np.nan)


def win_ratio(P, tau=None, weights=None):
    """Win-ratio score of every candidate in every context.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that candidate i, shown first, beats j, shown second; NaN
        where the pair was not compared in that order (and for padding candidates).
    tau : None, float or array_like of shape (n_contexts,), default None
        None: soft outcomes, p counts as the first candidate's (fractional) win and 1 - p as
        the second's. A threshold (or one per context): hard decisions
        (``ranking.decide``), the first candidate wins if p > tau, loses if p < tau, and a
        tie (p == tau) gives each side half a win.
    weights : array_like of float, optional
        P's shape: how many games each comparison counts (a finite number > 0 where P has
        one, ignored elsewhere; default 1 each). Wins and comparisons are then summed with
        these weights: weighted wins / weighted games.

    Returns
    -------
    ndarray, shape (n_contexts, N)
        wins / comparisons over every present comparison the candidate took part in, first or
        second (each with its weight); NaN for a candidate without any comparison (e.g. padding, or every candidate
        of a context whose comparisons are all NaN).

    Raises
    ------
    ValueError
        Wrong shape, N < 2, values outside [0, 1], tau outside [0, 1] (or of the wrong
        shape), or a weight of a comparison that is not a finite number > 0.

    Examples
    --------
    A 3-cycle (a beats b beats c beats a) gives every candidate the same score.

    >>> P = np.full((3, 3), np.nan); P[0, 1] = P[1, 2] = P[2, 0] = 0.9
    >>> win_ratio(P, tau=0.5)
    array([[0.5, 0.5, 0.5]])
    """
    P = as_P(P)
    w = weights_on(P, weights)
    return _win_ratio(P, check_tau(tau, P=P, allow_none=True, broadcast=True), w)

"""Win-ratio scores from pairwise judgements (Liusie, Manakul, Gales 2024).

For a context with candidates 1..N the judge gives p_ij = P(i shown first beats j shown
second). The win-ratio of item i is its wins over its comparisons, counting every present
comparison it took part in, as the first or as the second candidate. A win is the soft
outcome p itself (``tau=None``) or the hard decision at a threshold tau
(``ranking._core.decisions``).
"""

from __future__ import annotations

import math

import numpy as np

from ranking._core.checks import as_P, check_tau
from ranking._core.decisions import _decide
from ranking._core.jit import njit


@njit
def _win_ratio_kernel(P, taus, soft):
    n_contexts, n_items, _ = P.shape
    out = np.empty((n_contexts, n_items))
    wins = np.empty(n_items)
    counts = np.empty(n_items)
    for c in range(n_contexts):
        wins[:] = 0.0
        counts[:] = 0.0
        for i in range(n_items):
            for j in range(n_items):
                p = P[c, i, j]
                if i == j or not math.isfinite(p):
                    continue
                d = p if soft else _decide(p, taus[c])
                wins[i] += d
                wins[j] += 1.0 - d
                counts[i] += 1.0
                counts[j] += 1.0
        for i in range(n_items):
            out[c, i] = wins[i] / counts[i] if counts[i] > 0.0 else np.nan
    return out


def win_ratio(P, tau=None):
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

    Returns
    -------
    ndarray, shape (n_contexts, N)
        wins / comparisons over every present comparison the candidate took part in, first or
        second; NaN for a candidate without any comparison (e.g. padding, or every candidate
        of a context whose comparisons are all NaN).

    Raises
    ------
    ValueError
        Wrong shape, N < 2, values outside [0, 1], or tau outside [0, 1] (or of the wrong
        shape).

    Examples
    --------
    A 3-cycle (a beats b beats c beats a) gives every candidate the same score.

    >>> P = np.full((3, 3), np.nan); P[0, 1] = P[1, 2] = P[2, 0] = 0.9
    >>> win_ratio(P, tau=0.5)
    array([[0.5, 0.5, 0.5]])
    """
    P = as_P(P)
    taus = check_tau(tau, P=P, allow_none=True, broadcast=True)
    if taus is None:
        return _win_ratio_kernel(P, np.zeros(P.shape[0]), True)
    return _win_ratio_kernel(P, taus, False)

"""The decision rule: a hard verdict from a probability and a threshold tau.

For a comparison with p = P(first beats second) and threshold tau the first candidate wins
(1) when p > tau, loses (0) when p < tau, and a tie (p == tau) is half a win each (0.5).
Every function of ``ranking`` that decides uses this rule: the array code calls
:func:`decide` (or :func:`_decide_rows` on checked arrays), the compiled budget grid its own
scalar copy (``ranking.budget.grid._decide``). A tau per context (shape
(n_contexts,)) applies one threshold to each context of P, e.g. a balanced threshold per
context against position bias.

Functions that turn P into scores (``win_ratio``, ``bradley_terry``, ``ml_ranking``,
``budget_curves``) take ``tau=None`` for soft outcomes y = p and a tau for y = decide(P, tau).
"""

from __future__ import annotations

import numpy as np

from .checks import check_tau

__all__ = ["decide"]


def _decide_rows(p, taus):
    """decide on (n_rows, m) with one tau per row; NaN stays NaN (no checks: vectorised)."""
    t = np.asarray(taus, dtype=np.float64)[:, None]
    out = np.where(p > t, 1.0, np.where(p < t, 0.0, 0.5))
    out[~np.isfinite(p)] = np.nan
    return out


def decide(P, tau):
    """Hard decisions 1 / 0 / 0.5 from probabilities at threshold ``tau``; NaN stays NaN.

    Parameters
    ----------
    P : array_like of float
        Probabilities in [0, 1] (NaN where not compared), any shape: an (n_contexts, N, N)
        P, one (N, N) context, or flat outcomes.
    tau : float or array_like of shape (n_contexts,)
        The threshold, or one per context: then P must have a leading context axis
        (``P.ndim >= 2``; a tau per row of a 2-D P).

    Returns
    -------
    ndarray of float64, shape of P
        1 where p > tau, 0 where p < tau, 0.5 where p == tau, NaN where p is NaN.

    Raises
    ------
    ValueError
        Values outside [0, 1] or infinite, tau outside [0, 1], or a per-context tau whose
        length is not P's number of contexts.

    Examples
    --------
    >>> decide([0.2, 0.5, 0.9, np.nan], 0.5)
    array([0. , 0.5, 1. , nan])
    >>> decide([[0.6, 0.6], [0.6, 0.6]], [0.5, 0.7])
    array([[1., 1.],
           [0., 0.]])
    """
    p = np.asarray(P, dtype=np.float64)
    if np.isinf(p).any():
        raise ValueError("P contains infinite values; use NaN for pairs not compared")
    finite = np.isfinite(p)
    if (finite & ((p < 0.0) | (p > 1.0))).any():
        raise ValueError("P holds probabilities, so values must lie in [0, 1]")
    if p.size == 0:
        check_tau(tau, p.shape[0] if p.ndim >= 2 else None)
        return p.copy()
    t = check_tau(tau, P=p if p.ndim >= 2 else None)
    rows = p.reshape(p.shape[0], -1) if np.ndim(t) else p.reshape(1, -1)
    taus = np.asarray(t, dtype=np.float64).reshape(-1)
    return _decide_rows(np.ascontiguousarray(rows), taus).reshape(p.shape)

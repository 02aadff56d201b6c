"""Position bias of a pairwise judge: measure it, check swap consistency, correct it.

An unbiased judge shown every pair in both orders wins half of its comparisons in the first
position. ``position_bias`` measures that share, ``balanced_threshold`` finds the decision
threshold tau that brings it back to 0.5, and ``debias`` applies the equivalent weight
alpha to the probabilities themselves: p' = alpha p / (alpha p + 1 - p), so that p' > 0.5
exactly when p > tau for alpha = (1 - tau) / tau (Liusie, Manakul, Gales 2024).

A context with nothing usable (all NaN: every answer about that item unparsed, say) is
skipped by the pooled values and counted in their ``n_skipped``; per-context values are NaN
there, and a pooled value with no usable context at all is NaN with a ``reason`` (the
convention of ``ranking._core.pooled``). Position bias and swap consistency are hard by nature:
they decide at ``tau`` (0.5 by default, or one per context) with ``ranking.decide``'s rule.
"""

from __future__ import annotations

import numpy as np

from ranking._core.checks import as_P, check_tau, weights_on
from ranking._core.decisions import _decide_rows
from ranking._core.pooled import PooledStat, pooled
from ranking._core.pooled import per_context as per_context_values


def _decisions(P, taus):
    """Decisions of a checked P (diagonal NaN) at one tau per context; NaN where absent."""
    return _decide_rows(P.reshape(P.shape[0], -1), taus).reshape(P.shape)


def _position_bias_counts(P, taus, weights=None):
    """Per context: (first-position wins, comparisons), each comparison counted with its
    weight when ``weights`` (checked, 0 where P has no comparison) are given."""
    d = _decisions(P, taus)
    present = np.isfinite(d)
    if weights is not None:
        return np.where(present, weights * d, 0.0).sum(axis=(1, 2)), weights.sum(axis=(1, 2))
    return np.where(present, d, 0.0).sum(axis=(1, 2)), present.sum(axis=(1, 2)).astype(float)


def _swap_consistency_counts(P, taus):
    """Per context: (agreeing pairs, pairs judged in both orders)."""
    d = _decisions(P, taus)
    iu, ju = np.triu_indices(P.shape[1], k=1)
    # Chance that i beats j in each order; a tie is a coin flip (0.5), so the two decisions
    # agree with probability d1 e + (1 - d1)(1 - e).
    d1 = d[:, iu, ju]
    e = 1.0 - d[:, ju, iu]
    both = np.isfinite(d1) & np.isfinite(e)
    agree = np.where(both, d1 * e + (1.0 - d1) * (1.0 - e), 0.0)
    return agree.sum(axis=1), both.sum(axis=1).astype(float)


def _balanced_from_sorted(v):
    """Balanced threshold of the sorted present values ``v`` (see ``balanced_threshold``)."""
    v = np.asarray(v, dtype=np.float64)
    return float(_balanced_rows(v[None], np.array([v.shape[0]]))[0])


def _balanced_rows(v, n):
    """Balanced threshold of every row of ``v`` (sorted, its first ``n`` values present,
    ``n`` >= 1; the rest is ignored)."""
    rows = np.arange(v.shape[0])
    half = n // 2
    even = n % 2 == 0
    lo = v[rows, np.maximum(half - 1, 0)]
    hi = v[rows, np.minimum(half, v.shape[1] - 1)]
    # t is a present value: it wins half for each value equal to it.
    t = np.where(even, lo, hi)
    present = np.arange(v.shape[1])[None, :] < n[:, None]
    n_below = (present & (v < t[:, None])).sum(axis=1)
    n_above = (present & (v > t[:, None])).sum(axis=1)
    up = np.where(n_above > 0, v[rows, np.minimum(n - n_above, v.shape[1] - 1)], t)
    down = np.where(n_below > 0, v[rows, np.maximum(n_below - 1, 0)], t)
    best = _closest_to_balanced(n, n_below, n_above, t, up, down)
    with np.errstate(invalid="ignore"):
        return np.where(even & (lo != hi), 0.5 * (lo + hi), best)


def _closest_to_balanced(n, n_below, n_above, t, up, down):
    """The threshold, among ``t`` and its midpoints to the neighbouring values, that splits
    ``n`` comparisons closest to half and half (element-wise over arrays).

    ``t`` is one of the ``n`` values, ``n_below`` and ``n_above`` count the values strictly
    below and above it, and ``up`` / ``down`` are the next distinct values above and below
    (ignored where that count is 0). A threshold at ``t`` wins half for each value equal to
    it; the balance is measured in half comparisons (2 * first-position wins - n), and ties
    keep ``t``, then the midpoint above. ``ranking.budget.grid`` has the compiled twin.
    """
    n_equal = n - n_above - n_below
    err = np.abs(2 * n_above + n_equal - n)
    e_up = np.abs(2 * n_above - n)
    e_dn = np.abs(2 * (n_above + n_equal) - n)
    take_up = (n_above > 0) & (e_up < err)
    err = np.where(take_up, e_up, err)
    take_dn = (n_below > 0) & (e_dn < err)
    return np.where(take_dn, 0.5 * (down + t), np.where(take_up, 0.5 * (t + up), t))


def _balanced_threshold_values(P, per_context):
    """Thresholds per context (NaN for a context without comparisons) or pooled (NaN if
    none at all), and the number of comparisons per context."""
    n_contexts = P.shape[0]
    flat = P.reshape(n_contexts, -1)
    present = np.isfinite(flat)
    counts = present.sum(axis=1).astype(float)
    if per_context:
        v = np.sort(np.where(present, flat, np.inf), axis=1)
        n = present.sum(axis=1)
    else:
        v = np.sort(flat[present])[None]
        n = np.array([v.shape[1]])
    out = np.full(v.shape[0], np.nan)
    has = n > 0
    if has.any():
        out[has] = _balanced_rows(v[has], n[has])
    return out, counts


def _pooled_or_per_context(num, den, per_context, undefined):
    if per_context:
        return per_context_values(num, den)
    return pooled(num, den, undefined)


def position_bias(P, tau=0.5, per_context=False, weights=None):
    """Share of present comparisons won by the candidate shown first.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that i (shown first) beats j (shown second); NaN where not
        compared.
    tau : float or array_like of shape (n_contexts,), default 0.5
        Decision threshold, or one per context: the first candidate wins if p > tau; a tie
        (p == tau) counts half.
    per_context : bool, default False
        Return one share per context instead of the share pooled over all comparisons.
    weights : array_like of float, optional
        P's shape: how many games each comparison counts (a finite number > 0 where P has
        one; ignored elsewhere; default 1 each). The share is then the weighted share:
        first-position wins times their weights over the summed weights.

    Returns
    -------
    PooledStat or ndarray of shape (n_contexts,)
        P(A). An unbiased judge on a symmetric comparison set gives 0.5. Pooled: a float
        with ``n_contexts`` / ``n_skipped``, contexts without any comparison (all NaN) being
        skipped (``ranking._core.pooled``); NaN with a ``reason`` when no context has one. Per
        context: NaN for those contexts.

    Raises
    ------
    ValueError
        Bad P, tau or weights.
    """
    P = as_P(P, allow_empty=True)
    w = weights_on(P, weights)
    firsts, counts = _position_bias_counts(P, check_tau(tau, P=P, broadcast=True), w)
    return _pooled_or_per_context(firsts, counts, per_context, "P has no comparison")


def swap_consistency(P, tau=0.5, per_context=False):
    """Share of pairs judged in both orders whose two decisions agree.

    A pair {i, j} counts when both P[c, i, j] and P[c, j, i] are present. The decisions agree
    when i beats j in both orders or j beats i in both (hard decisions at ``tau``). A tie
    (p == tau) is treated as a coin flip, so a pair with a tie in either order counts as half
    an agreement: the agreement of a pair is d e + (1 - d)(1 - e) with d, e in {0, 0.5, 1}
    the chances that i wins in each order.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        Pairwise probabilities, NaN where not compared.
    tau : float or array_like of shape (n_contexts,), default 0.5
        Decision threshold, or one per context.
    per_context : bool, default False
        One share per context (NaN for a context without any pair judged in both orders).

    Returns
    -------
    PooledStat or ndarray of shape (n_contexts,)
        Pooled: a float with ``n_contexts`` / ``n_skipped``; contexts without a pair judged
        in both orders (an all-NaN context among them) are skipped (``ranking._core.pooled``).
        NaN with a ``reason`` when no pair at all was judged in both orders.

    Raises
    ------
    ValueError
        Bad P or tau.
    """
    P = as_P(P, allow_empty=True)
    agree, counts = _swap_consistency_counts(P, check_tau(tau, P=P, broadcast=True))
    return _pooled_or_per_context(
        agree,
        counts,
        per_context,
        "swap_consistency needs pairs judged in both orders; P has none "
        "(use a 'symmetric' or 'all' comparison set)",
    )


def balanced_threshold(P, per_context=False):
    """The decision threshold tau that makes ``position_bias`` 0.5.

    The present probabilities are sorted and tau is taken between the order statistics
    around the median: the midpoint of the two middle values for an even count, the middle
    value itself for an odd count (a comparison exactly at tau counts half). With distinct
    values this balances the first-position wins exactly: position_bias(P, tau) == 0.5.

    Ties at the median (typical of hard verdicts, where p is 0, 0.5 or 1) can make exact
    balance impossible. Then tau is the median value or the midpoint to the next distinct
    value above or below it, whichever gives the share closest to 0.5 (the median value on
    a draw); the share is then off by at most half the number of comparisons tied at the
    median value.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        Pairwise probabilities, NaN where not compared.
    per_context : bool, default False
        One threshold per context instead of one over all comparisons.

    Returns
    -------
    PooledStat or ndarray of shape (n_contexts,)
        Pooled: a float with ``n_contexts`` / ``n_skipped``, contexts without any comparison
        (all NaN) being skipped (``ranking._core.pooled``); NaN with a ``reason`` when no context
        has one. Per context: NaN for those contexts.

    Raises
    ------
    ValueError
        Bad P.
    """
    P = as_P(P, allow_empty=True)
    out, counts = _balanced_threshold_values(P, bool(per_context))
    if per_context:
        return out
    n_used = int((counts > 0).sum())
    if n_used == 0:
        return PooledStat.undefined("P has no comparison", P.shape[0])
    return PooledStat(float(out[0]), n_used, P.shape[0] - n_used)


def alpha_for_tau(tau):
    """The debiasing weight alpha equivalent to the threshold ``tau``.

    alpha = (1 - tau) / tau, so that ``debias(p, alpha) > 0.5`` exactly when p > tau.

    Parameters
    ----------
    tau : float or array_like
        Threshold(s) strictly between 0 and 1.

    Returns
    -------
    float or ndarray
    """
    t = np.asarray(tau, dtype=np.float64)
    if t.size == 0:
        raise ValueError("tau is empty")
    if not np.all((t > 0.0) & (t < 1.0)):
        raise ValueError(
            "alpha_for_tau needs 0 < tau < 1 (tau = 0 or 1 has no finite positive alpha); "
            f"got {tau!r}"
        )
    alpha = (1.0 - t) / t
    return float(alpha) if alpha.ndim == 0 else alpha


def debias(P, alpha):
    """Reweight pairwise probabilities against position bias: p' = alpha p / (alpha p + 1 - p).

    alpha < 1 shrinks the first candidate's chances (a judge that favours the first
    position), alpha > 1 raises them; alpha = 1 leaves P unchanged. ``alpha_for_tau(tau)``
    gives the weight for which a 0.5 threshold on p' takes the same decisions as ``tau`` on p
    (up to rounding for p exactly equal to tau).

    Parameters
    ----------
    P : array_like of float
        Probabilities in [0, 1], NaN where not compared: any shape (a flat array of p values,
        an (N, N) matrix or (n_contexts, N, N)).
    alpha : float or array_like
        Positive, finite weight: a scalar, or one per context (shape (n_contexts,)) for a 3-D
        P, or any array broadcastable to P.

    Returns
    -------
    ndarray
        p' with the shape of P; NaN stays NaN.
    """
    p = np.asarray(P, dtype=np.float64)
    if p.size == 0:
        raise ValueError(f"P is empty (shape {p.shape})")
    finite = np.isfinite(p)
    if np.isinf(p).any():
        raise ValueError("P contains infinite values; use NaN for pairs not compared")
    if (finite & ((p < 0.0) | (p > 1.0))).any():
        raise ValueError("P holds probabilities, so values must lie in [0, 1]")
    a = np.asarray(alpha, dtype=np.float64)
    if a.size == 0:
        raise ValueError("alpha is empty")
    if not np.all(np.isfinite(a) & (a > 0.0)):
        raise ValueError(f"alpha must be positive and finite; got {alpha!r}")
    if a.ndim == 1 and p.ndim == 3:
        if a.shape[0] != p.shape[0]:
            raise ValueError(
                f"alpha of shape {a.shape} does not fit P of shape {p.shape}: pass a scalar "
                f"or one alpha per context ({p.shape[0]})"
            )
        a = a[:, None, None]
    try:
        a = np.broadcast_to(a, p.shape)
    except ValueError as err:
        raise ValueError(
            f"alpha of shape {np.shape(alpha)} does not fit P of shape {p.shape}: pass a "
            "scalar or one alpha per context"
        ) from err
    num = a * p
    return num / (num + (1.0 - p))

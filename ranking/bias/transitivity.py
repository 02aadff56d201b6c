"""Transitivity of a judge's preferences: circular triads, consistence, and its own BT fit.

For every context the judge's majority preference between candidates i < j is
m_ij = mean of the available P[c, i, j] and 1 - P[c, j, i] (both presentation orders, so the
first-slot bias cancels where both were judged), and the edge is ``decide(m_ij, tau)``: i beats
j (1), j beats i (0) or a tie (0.5). The edge of a pair is decided once, on the pair in candidate
order (i < j), so a threshold tau != 0.5 cannot make both candidates win.

* A **triad** (three candidates) is checked when its three pairs are compared and none is a
  tie; it is **circular** when its edges form a cycle (i > j > k > i).
* The **Kendall–Babington Smith coefficient of consistence** (Kendall & Babington Smith 1940)
  of a complete tournament without ties among n candidates, with c circular triads, is
  zeta = 1 - 24 c / (n^3 - n) for odd n and 1 - 24 c / (n^3 - 4 n) for even n: 1 for a
  transitive tournament, 0 for the most circular one. There c equals
  n (n - 1)(2 n - 1) / 12 - 1/2 sum_i a_i^2 (a_i: wins of i). The candidates of a context are
  those with at least one comparison (P padded with NaN for shorter contexts is fine).
* **Disagreement with the judge's own Bradley–Terry fit**: the context's soft Bradley–Terry
  scores (``ranking.bradley_terry`` with ``tau=None``) are fitted, and every judged ordered
  comparison P[c, i, j] decided at tau (1 / 0.5 / 0) is compared with the sign of
  theta_i - theta_j (1 / 0.5 on equal scores / 0); the disagreement is |decision - sign|, so a
  tie counts 1/2. A transitive judge consistent with its scores disagrees on nothing.

Counting is vectorised numpy over contexts: matrix products for the triads (O(n_contexts N^3)),
blocks of triples for listing the cycles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ranking._core.checks import as_P, check_tau
from ranking._core.decisions import _decide_rows
from ranking._core.pooled import PooledStat
from ranking.bradley_terry.fit import bradley_terry

__all__ = ["TransitivityResult", "transitivity"]

#: Score differences of the BT fit smaller than this count as equal (a tie of the fit).
SCORE_TIE = 1e-9


@dataclass(frozen=True)
class TransitivityResult:
    """Result of :func:`transitivity`.

    Attributes
    ----------
    n_candidates : ndarray of int, shape (n_contexts,)
        Candidates with at least one comparison in the context.
    n_circular : ndarray of int, shape (n_contexts,)
        Circular triads of the majority preferences.
    n_triads : ndarray of int, shape (n_contexts,)
        Triads checked: all three pairs compared, none a tie.
    zeta : ndarray of float, shape (n_contexts,)
        Kendall–Babington Smith coefficient of consistence; NaN unless the context is a
        complete tournament without ties on at least 3 candidates (``reasons["zeta"]``).
    bt_disagreement : ndarray of float, shape (n_contexts,)
        Share of the context's judged ordered comparisons whose decision at tau disagrees
        with the sign of its Bradley–Terry score difference (ties 1/2); NaN without any.
    n_judged : ndarray of int, shape (n_contexts,)
        Judged ordered comparisons (finite P[c, i, j]) behind ``bt_disagreement``.
    total_circular, total_triads : int
        Sums over contexts.
    circular_share : PooledStat
        total_circular / total_triads over the contexts with a checked triad.
    mean_zeta : PooledStat
        Mean of the finite zeta.
    bt_disagreement_pooled : PooledStat
        Disagreements over all judged ordered comparisons.
    cycles : dict of ndarray
        ``context``, ``i``, ``j``, ``k`` (i > j > k > i, i the smallest index of the three) and
        ``strength`` (min over the three edges of |m - 0.5|), strongest first (ties: by
        context, i, then the smaller and the larger of j and k), at most ``max_cycles``.
    tau : ndarray of float, shape (n_contexts,)
        The thresholds used.
    reasons : dict of str
        Field -> why some or all of its values are NaN.
    """

    n_candidates: np.ndarray
    n_circular: np.ndarray
    n_triads: np.ndarray
    zeta: np.ndarray
    bt_disagreement: np.ndarray
    n_judged: np.ndarray
    total_circular: int
    total_triads: int
    circular_share: PooledStat
    mean_zeta: PooledStat
    bt_disagreement_pooled: PooledStat
    cycles: dict
    tau: np.ndarray
    reasons: dict


#: Most (context, i, j, k) triples looked at in one vectorised block of the cycle listing.
_TRIPLE_BLOCK = 1 << 22


def _edges(P, taus):
    """Majority edges of every context: E (1: i beats j, -1: j beats i, 0: tie, 2: not
    compared; antisymmetric, int8), strengths S = |m - 0.5| and the candidates compared.

    Each pair is decided once, in candidate order (i < j), and mirrored."""
    n_ctx, n, _ = P.shape
    b = P.transpose(0, 2, 1)
    fa = np.isfinite(P)
    fb = np.isfinite(b)
    k = fa.astype(np.int64) + fb
    with np.errstate(invalid="ignore", divide="ignore"):
        m = (np.where(fa, P, 0.0) + np.where(fb, 1.0 - b, 0.0)) / k
    d = _decide_rows(m.reshape(n_ctx, -1), taus).reshape(m.shape)
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    e = np.where(upper, np.where(d == 1.0, 1, np.where(d == 0.0, -1, 0)), 0)
    E = (e - e.transpose(0, 2, 1)).astype(np.int8)
    compared = k > 0
    E[~compared] = 2
    s = np.where(upper & compared, np.abs(m - 0.5), 0.0)
    return E, s + s.transpose(0, 2, 1), compared.any(axis=2)


def _counts(E, present):
    """(circular, checked, complete-and-tie-free) per context from the edges."""
    won = (E == 1).astype(np.float64)
    definite = won + won.transpose(0, 2, 1)  # a compared pair that is not a tie
    # a directed 3-cycle appears 3 times on the diagonal of won^3, a triangle of definite
    # edges 6 times on that of definite^3 (exact: small integers in float64)
    circ = np.trace(won @ won @ won, axis1=1, axis2=2) / 3.0
    checked = np.trace(definite @ definite @ definite, axis1=1, axis2=2) / 6.0
    n_cand = present.sum(axis=1)
    complete = definite.sum(axis=(1, 2)) / 2.0 == n_cand * (n_cand - 1) / 2
    return circ.round().astype(np.int64), checked.round().astype(np.int64), n_cand, complete


def _cycles(E, S, circ):
    """Every circular triad: (context, i, j, k) with i > j > k > i, i the smallest index, in
    the order of context, i, then the smaller and the larger of j and k; and its strength."""
    n = E.shape[1]
    i, j, k = (a.ravel() for a in np.meshgrid(*(np.arange(n),) * 3, indexing="ij"))
    keep = (i < j) & (j < k)
    i, j, k = i[keep], j[keep], k[keep]
    parts = []
    todo = np.flatnonzero(circ > 0)
    step = max(1, _TRIPLE_BLOCK // max(1, i.shape[0]))
    for c0 in range(0, todo.shape[0], step):
        ctx = todo[c0 : c0 + step]
        e_ij = E[ctx][:, i, j]
        cyc = ((e_ij == 1) | (e_ij == -1)) & (E[ctx][:, j, k] == e_ij) & (E[ctx][:, k, i] == e_ij)
        cc, t = np.nonzero(cyc)
        fwd = e_ij[cc, t] == 1  # i > j > k > i, else i > k > j > i
        c = ctx[cc]
        ti, tj, tk = i[t], j[t], k[t]
        st = np.minimum(S[c, ti, tj], np.minimum(S[c, tj, tk], S[c, tk, ti]))
        parts.append((c, ti, np.where(fwd, tj, tk), np.where(fwd, tk, tj), st))
    if not parts:
        parts.append(tuple(np.zeros(0, np.int64) for _ in range(4)) + (np.zeros(0),))
    cols = [np.concatenate([p[q] for p in parts]) for q in range(5)]
    return tuple(col.astype(np.int64) for col in cols[:4]) + (cols[4],)


def _disagreement(P, taus, theta):
    """Per context: (summed |decision - sign of the score difference|, judged comparisons)."""
    d = _decide_rows(P.reshape(P.shape[0], -1), taus).reshape(P.shape)
    diff = theta[:, :, None] - theta[:, None, :]
    h = np.where(diff > SCORE_TIE, 1.0, np.where(diff < -SCORE_TIE, 0.0, 0.5))
    judged = np.isfinite(d)
    dis = np.where(judged, np.abs(d - h), 0.0).sum(axis=(1, 2))
    return dis, judged.sum(axis=(1, 2)).astype(np.int64)


def _strongest(strength, n):
    """Indices of the ``n`` largest strengths, strongest first; equal strengths keep their
    order (the kernel's: context, i, then the smaller and the larger of j and k)."""
    if n == 0 or strength.size == 0:
        return np.zeros(0, np.int64)
    if strength.size > n:
        cut = np.partition(strength, strength.size - n)[strength.size - n]
        keep = np.flatnonzero(strength >= cut)
    else:
        keep = np.arange(strength.size)
    return keep[np.argsort(-strength[keep], kind="stable")][:n]


def _where(mask):
    idx = np.flatnonzero(mask)
    more = f" and {idx.size - 10} more" if idx.size > 10 else ""
    return f"context(s) {idx[:10].tolist()}{more}"


def _zeta(circ, n_cand, complete):
    n = n_cand.astype(np.float64)
    denom = np.where(n_cand % 2 == 1, n**3 - n, n**3 - 4 * n)
    ok = complete & (n_cand >= 3)
    zeta = np.full(circ.shape, np.nan)
    zeta[ok] = 1.0 - 24.0 * circ[ok] / denom[ok]
    parts = []
    if (n_cand == 0).any():
        parts.append(f"{_where(n_cand == 0)}: no comparison at all")
    few = (n_cand > 0) & (n_cand < 3)
    if few.any():
        parts.append(f"{_where(few)}: fewer than 3 candidates compared, so no triad")
    inc = (n_cand >= 3) & ~complete
    if inc.any():
        parts.append(
            f"{_where(inc)}: not a complete tournament without ties (a pair not compared or "
            "a tie), where the coefficient of consistence is not defined"
        )
    return zeta, "; ".join(parts)


def _scores(arr, has, scores):
    """The BT scores per context: the caller's (checked) or a soft fit of the usable ones."""
    if scores is not None:
        theta = np.asarray(scores, dtype=np.float64)
        if theta.shape != arr.shape[:2]:
            raise ValueError(
                f"scores must have shape (n_contexts, N) = {arr.shape[:2]}; got {theta.shape}"
            )
        return np.ascontiguousarray(theta)
    theta = np.zeros(arr.shape[:2])
    if has.all():
        theta[:] = bradley_terry(arr, tol=1e-6).scores
    elif has.any():
        theta[has] = bradley_terry(arr[has], tol=1e-6).scores
    return theta


def _pooled(num, den, n_used, n_ctx, reason):
    if n_used == 0 or den == 0:
        return PooledStat.undefined(reason, n_ctx)
    return PooledStat(float(num / den), n_used, n_ctx - n_used)


def transitivity(P, *, tau=0.5, max_cycles=50, scores=None) -> TransitivityResult:
    """Circular triads, coefficient of consistence and BT disagreement of a judge, per context.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that i (shown first) beats j (shown second); NaN where not
        compared (a context may be all NaN).
    tau : float or array_like of shape (n_contexts,), default 0.5
        Decision threshold (``ranking.decide``), or one per context, for the majority edges
        and the decisions compared with the Bradley–Terry fit.
    max_cycles : int, default 50
        Most cycles listed in ``cycles`` (the strongest).
    scores : array_like of shape (n_contexts, N), optional
        The judge's Bradley–Terry scores per context when the caller has them already
        (``bradley_terry(P).scores``); fitted here otherwise (soft, ``tau=None``).

    Returns
    -------
    TransitivityResult
        Per-context counts, zeta and BT disagreement, pooled values, the strongest cycles.

    Raises
    ------
    ValueError
        Bad shape, values outside [0, 1], bad tau, a negative ``max_cycles`` or ``scores`` of
        the wrong shape.

    Examples
    --------
    >>> P = np.full((3, 3), np.nan)
    >>> P[0, 1], P[1, 2], P[2, 0] = 0.9, 0.8, 0.7  # 0 > 1 > 2 > 0
    >>> r = transitivity(P)
    >>> int(r.n_circular[0]), float(r.zeta[0]), r.cycles["i"].tolist()
    (1, 0.0, [0])
    """
    if isinstance(max_cycles, bool) or not isinstance(max_cycles, int | np.integer):
        raise ValueError(f"max_cycles must be an int >= 0; got {max_cycles!r}")
    if max_cycles < 0:
        raise ValueError(f"max_cycles must be an int >= 0; got {max_cycles!r}")
    arr = as_P(P, allow_empty=True)
    n_ctx = arr.shape[0]
    taus = check_tau(tau, P=arr, broadcast=True)
    E, S, present = _edges(arr, taus)
    circ, checked, n_cand, complete = _counts(E, present)
    zeta, zeta_reason = _zeta(circ, n_cand, complete)

    ctx, ii, jj, kk, st = _cycles(E, S, circ)
    order = _strongest(st, max_cycles)
    cycles = {"context": ctx[order], "i": ii[order], "j": jj[order], "k": kk[order]}
    cycles["strength"] = st[order]

    has = np.isfinite(arr).reshape(n_ctx, -1).any(axis=1)
    theta = _scores(arr, has, scores)
    dis, n_judged = _disagreement(arr, taus, theta)
    bt_dis = np.full(n_ctx, np.nan)
    bt_dis[has] = dis[has] / n_judged[has]

    reasons = {}
    if zeta_reason:
        reasons["zeta"] = zeta_reason
    if not has.all():
        reasons["bt_disagreement"] = f"{_where(~has)}: no comparison at all"
    total_c, total_t = int(circ.sum()), int(checked.sum())
    circular_share = _pooled(
        total_c,
        total_t,
        int((checked > 0).sum()),
        n_ctx,
        "no triad with all three pairs compared and none a tie",
    )
    fz = np.isfinite(zeta)
    mean_zeta = _pooled(
        zeta[fz].sum(),
        fz.sum(),
        int(fz.sum()),
        n_ctx,
        "no context is a complete tournament without ties on at least 3 candidates",
    )
    pooled_dis = _pooled(dis.sum(), n_judged.sum(), int(has.sum()), n_ctx, "P has no comparison")
    for name, value in (
        ("circular_share", circular_share),
        ("mean_zeta", mean_zeta),
        ("bt_disagreement_pooled", pooled_dis),
    ):
        if value.reason:
            reasons[name] = value.reason
    return TransitivityResult(
        n_candidates=n_cand,
        n_circular=circ,
        n_triads=checked,
        zeta=zeta,
        bt_disagreement=bt_dis,
        n_judged=n_judged,
        total_circular=total_c,
        total_triads=total_t,
        circular_share=circular_share,
        mean_zeta=mean_zeta,
        bt_disagreement_pooled=pooled_dis,
        cycles=cycles,
        tau=taus,
        reasons=reasons,
    )

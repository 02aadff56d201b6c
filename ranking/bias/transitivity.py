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

Counting is a numba kernel over contexts, O(n_contexts N^3 / 6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ranking._core.checks import as_P, check_tau
from ranking._core.decisions import _decide
from ranking._core.jit import njit
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


@njit
def _edges(P, c, tau, E, S):
    """Majority edges of context c into E (1: i beats j, -1: j beats i, 0: tie, 2: not
    compared; antisymmetric) and strengths |m - 0.5| into S; returns the candidate count."""
    n = P.shape[1]
    present = np.zeros(n, np.bool_)
    for i in range(n):
        E[i, i] = 2
        for j in range(i + 1, n):
            a = P[c, i, j]
            b = P[c, j, i]
            s = 0.0
            k = 0
            if math.isfinite(a):
                s += a
                k += 1
            if math.isfinite(b):
                s += 1.0 - b
                k += 1
            if k == 0:
                E[i, j] = 2
                E[j, i] = 2
                continue
            present[i] = True
            present[j] = True
            m = s / k
            d = _decide(m, tau)
            e = 1 if d == 1.0 else (-1 if d == 0.0 else 0)
            E[i, j] = e
            E[j, i] = -e
            S[i, j] = abs(m - 0.5)
            S[j, i] = S[i, j]
    return present


@njit
def _context_counts(E, present):
    """(circular, checked, complete-and-tie-free) for one context's edges."""
    n = E.shape[0]
    circ = 0
    checked = 0
    complete = True
    for i in range(n):
        if not present[i]:
            continue
        for j in range(i + 1, n):
            if not present[j]:
                continue
            e_ij = E[i, j]
            if e_ij == 2 or e_ij == 0:
                complete = False
                continue
            for k in range(j + 1, n):
                e_jk = E[j, k]
                e_ki = E[k, i]
                if e_jk == 2 or e_jk == 0 or e_ki == 2 or e_ki == 0:
                    continue
                checked += 1
                if e_ij == e_jk and e_jk == e_ki:
                    circ += 1
    return circ, checked, complete


@njit
def _count_kernel(P, taus):
    n_ctx, n, _ = P.shape
    circ = np.zeros(n_ctx, np.int64)
    checked = np.zeros(n_ctx, np.int64)
    n_cand = np.zeros(n_ctx, np.int64)
    complete = np.zeros(n_ctx, np.bool_)
    E = np.empty((n, n), np.int8)
    S = np.zeros((n, n))
    for c in range(n_ctx):
        present = _edges(P, c, taus[c], E, S)
        circ[c], checked[c], complete[c] = _context_counts(E, present)
        n_cand[c] = present.sum()
    return circ, checked, n_cand, complete


@njit
def _cycles_kernel(P, taus, offsets, total):
    """Every circular triad: (context, i, j, k) with i > j > k > i, i the smallest index."""
    n_ctx, n, _ = P.shape
    ctx = np.empty(total, np.int64)
    ii = np.empty(total, np.int64)
    jj = np.empty(total, np.int64)
    kk = np.empty(total, np.int64)
    st = np.empty(total)
    E = np.empty((n, n), np.int8)
    S = np.zeros((n, n))
    for c in range(n_ctx):
        if offsets[c + 1] == offsets[c]:
            continue
        _edges(P, c, taus[c], E, S)
        r = offsets[c]
        for i in range(n):
            for j in range(i + 1, n):
                e_ij = E[i, j]
                if e_ij == 2 or e_ij == 0:
                    continue
                for k in range(j + 1, n):
                    if E[j, k] != e_ij or E[k, i] != e_ij:
                        continue
                    ctx[r] = c
                    ii[r] = i
                    # i > j > k > i when i beats j, else i > k > j > i
                    jj[r] = j if e_ij == 1 else k
                    kk[r] = k if e_ij == 1 else j
                    st[r] = min(S[i, j], min(S[j, k], S[k, i]))
                    r += 1
    return ctx, ii, jj, kk, st


@njit
def _disagreement_kernel(P, taus, theta):
    n_ctx, n, _ = P.shape
    dis = np.zeros(n_ctx)
    cnt = np.zeros(n_ctx, np.int64)
    for c in range(n_ctx):
        for i in range(n):
            for j in range(n):
                p = P[c, i, j]
                if i == j or not math.isfinite(p):
                    continue
                diff = theta[c, i] - theta[c, j]
                h = 1.0 if diff > SCORE_TIE else (0.0 if diff < -SCORE_TIE else 0.5)
                dis[c] += abs(_decide(p, taus[c]) - h)
                cnt[c] += 1
    return dis, cnt


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
    circ, checked, n_cand, complete = _count_kernel(arr, taus)
    zeta, zeta_reason = _zeta(circ, n_cand, complete)

    offsets = np.concatenate([[0], np.cumsum(circ)])
    ctx, ii, jj, kk, st = _cycles_kernel(arr, taus, offsets, int(offsets[-1]))
    order = _strongest(st, max_cycles)
    cycles = {"context": ctx[order], "i": ii[order], "j": jj[order], "k": kk[order]}
    cycles["strength"] = st[order]

    has = np.isfinite(arr).reshape(n_ctx, -1).any(axis=1)
    theta = _scores(arr, has, scores)
    dis, n_judged = _disagreement_kernel(arr, taus, theta)
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

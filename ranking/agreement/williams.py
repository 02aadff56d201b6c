"""Williams' test of two dependent correlations, between every pair of judges, with
Benjamini-Hochberg adjustment.

Two-sided (the judges' correlations with the humans differ) or one-sided (Moon's test of an
increase, as in Chhun et al. 2024): see :data:`ALTERNATIVES`. Results carry ``.statistic``
and ``.pvalue``, NaN with a ``reason`` when the data leave the test undefined; shape
problems and impossible inputs raise ``ValueError``. Reached as ``ranking.agreement.significance``'s
names too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ranking._core.score_checks import as_labels, as_matrix, as_scores, check_choice, label_codes

from .segments import (
    _CONST_HUMAN,
    _CONST_JUDGE,
    _OK,
    _TOO_FEW,
    MIN_POOLED,
    _segment_corr,
    _snap_ties,
)

__all__ = [
    "ALTERNATIVES",
    "WilliamsResult",
    "WilliamsMatrixResult",
    "williams_test",
    "williams_matrix",
    "bh_adjust",
]

#: The alternatives of the Williams tests: "two-sided" (the correlations differ), "greater"
#: (judge j correlates more with the humans than judge k; Moon's one-sided test as in HANNA),
#: "less" (judge j correlates less).
ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' test of two dependent correlations: t on ``df`` = n - 3 degrees of freedom.

    ``alternative`` is the hypothesis the p-value tests (see :data:`ALTERNATIVES`).
    """

    statistic: float
    pvalue: float
    df: float
    reason: str = ""
    alternative: str = "two-sided"


@dataclass(frozen=True, eq=False)
class WilliamsMatrixResult:
    """Williams tests between every pair of judges against the same human scores.

    ``r_human[j]`` is judge j's correlation with the humans (on all items judge j has);
    for a pair (j, k) the test uses the items both judges and the humans have:
    ``r_human_pair[j, k]`` is judge j's correlation with the humans on those items,
    ``r_between`` the judge-judge correlation, ``statistic[j, k]`` the t statistic (positive
    when judge j agrees more with humans; ``statistic[k, j] = -statistic[j, k]``),
    ``pvalue[j, k]`` the p-value of ``alternative`` for row judge j against column judge k
    (two-sided: symmetric; "greater": j correlates more; "less": j correlates less),
    ``pvalue_adjusted`` the Benjamini-Hochberg adjusted p over the family of all tests (the
    unordered pairs when two-sided, the ordered pairs (j, k), j != k, when one-sided), ``n``
    the items (or systems) used, ``reasons[(j, k)]`` (j < k) why a pair is NaN. Diagonals are
    NaN.
    """

    r_human: np.ndarray
    r_human_pair: np.ndarray
    r_between: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    pvalue_adjusted: np.ndarray
    n: np.ndarray
    reasons: dict
    alternative: str = "two-sided"


# ----------------------------------------------------------------------------- Williams, BH


def _t_pvalue(t: float, df: float, alternative: str) -> float:
    """The p-value of a t statistic on ``df`` degrees of freedom under ``alternative``."""
    if alternative == "greater":
        return float(stats.t.sf(t, df))
    if alternative == "less":
        return float(stats.t.cdf(t, df))
    return float(2.0 * stats.t.sf(abs(t), df))


def williams_test(r_jh, r_kh, r_jk, n, alternative="two-sided"):
    """Williams' test for two dependent correlations sharing one variable.

    Tests whether judge j and judge k correlate equally with the humans h, given the
    judge-judge correlation ``r_jk``, over ``n`` items (Williams 1959; Steiger 1980 eq. 7; as
    used by WMT, Graham & Baldwin 2014):

        t = (r_jh - r_kh) sqrt((n - 1)(1 + r_jk))
            / sqrt(2 (n - 1)/(n - 3) |R| + ((r_jh + r_kh)/2)^2 (1 - r_jk)^3),
        |R| = 1 - r_jh^2 - r_kh^2 - r_jk^2 + 2 r_jh r_kh r_jk,

    with n - 3 degrees of freedom.

    Parameters
    ----------
    r_jh, r_kh : float
        Judge j's and judge k's correlation with the humans.
    r_jk : float
        The correlation between the two judges.
    n : int
        The items (or systems) the three correlations are taken over.
    alternative : {"two-sided", "greater", "less"}
        "two-sided": the correlations differ, p = 2 P(T > |t|); "greater": judge j
        correlates more with the humans (the one-sided test of an increase, Moon 2019, used
        by HANNA), p = P(T > t); "less": judge j correlates less, p = P(T < t).

    Returns
    -------
    WilliamsResult
        The statistic t (positive when judge j agrees more) and the p-value of
        ``alternative``; NaN with a reason when a correlation is NaN (undefined), n < 4, or
        the correlations cannot come from one data set (the variance term is not positive).

    Raises
    ------
    ValueError
        A correlation outside [-1, 1], ``n`` not a whole number, or an unknown alternative.
    """
    check_choice(alternative, ALTERNATIVES, "alternative")
    rs = np.array([r_jh, r_kh, r_jk], dtype=np.float64)
    if (np.abs(rs) > 1).any():
        raise ValueError(f"correlations must be finite and in [-1, 1]; got {rs.tolist()}")
    if int(n) != n:
        raise ValueError(f"n must be a whole number of items; got {n!r}")
    nan = np.nan
    if np.isnan(rs).any():
        reason = f"a correlation is NaN (undefined); got {rs.tolist()}"
        return WilliamsResult(nan, nan, nan, reason, alternative)
    if n < 4:
        reason = f"Williams' test needs n >= 4 items (df = n - 3); got {n!r}"
        return WilliamsResult(nan, nan, nan, reason, alternative)
    r12, r13, r23 = rs
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    var = 2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    if var <= 0:
        if r12 == r13:
            p0 = 1.0 if alternative == "two-sided" else 0.5
            return WilliamsResult(0.0, p0, float(n - 3), "", alternative)
        reason = (
            f"correlations r_jh={r12}, r_kh={r13}, r_jk={r23} are not consistent with one "
            "data set (non-positive variance term); Williams' test is undefined"
        )
        return WilliamsResult(nan, nan, float(n - 3), reason, alternative)
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(var)
    p = _t_pvalue(t, n - 3, alternative)
    return WilliamsResult(float(t), p, float(n - 3), "", alternative)


def bh_adjust(pvalues):
    """Benjamini-Hochberg adjusted p-values (``scipy.stats.false_discovery_control``).

    Any shape; NaN entries stay NaN and do not count in the family.

    Raises
    ------
    ValueError
        A p-value outside [0, 1].
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ((p[ok] < 0) | (p[ok] > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    if ok.any():
        out[ok] = stats.false_discovery_control(p[ok], method="bh")
    return out


def williams_matrix(
    scores,
    human,
    unit="overall",
    method="kendall",
    variant="b",
    systems=None,
    names=None,
    alternative="two-sided",
):
    """Williams' test between every pair of judges, with Benjamini-Hochberg adjustment.

    Parameters
    ----------
    scores : array_like of shape (n_items, n_judges)
        Judge scores (NaN unparsed), aligned with ``human`` (n_items,).
    unit : {"overall", "system"}
        Correlations over all items pooled (n = items) or over system means (n = systems).
    method, variant, systems
        As in :func:`ranking.agreement.correlation` (``systems`` needed for
        ``unit="system"``).
    names : sequence of str, optional
        Judge names used in the ``reasons`` messages (default "judge <column>").
    alternative : {"two-sided", "greater", "less"}
        As in :func:`williams_test`, for row judge j against column judge k.

    Returns
    -------
    WilliamsMatrixResult
        The BH family is every test of this call: the judge pairs when two-sided, the
        ordered pairs when one-sided. Correlations come from the same vectorised formulas
        as item level (equal to scipy's; checked in tests).
    """
    check_choice(alternative, ALTERNATIVES, "alternative")
    if unit == "item":
        raise ValueError(
            "Williams' test compares correlations over one sample of items; an average of "
            "per-context correlations has no such n: use unit='overall' or 'system'"
        )
    check_choice(unit, ("overall", "system"), "unit")
    S = as_matrix(scores, "scores")
    h = as_scores(human, "human", n=S.shape[0])
    n_items, n_j = S.shape
    if n_j < 2:
        raise ValueError(f"Williams' test compares judges; scores has {n_j} column(s)")
    if systems is not None:
        systems = as_labels(systems, n_items, "systems")
    if unit == "system":
        if systems is None:
            raise ValueError("unit='system' averages per system: pass systems=")
        sys_codes, sys_labels = label_codes(systems)
        n_sys = sys_labels.shape[0]
    valid_h = np.isfinite(h)
    valid = np.isfinite(S)

    # Every correlation the tests need, computed in one batched call (the per-pair scipy
    # calls dominated this function): judge j vs humans on its own items, and for each pair
    # j vs humans, k vs humans and j vs k on the items the pair shares.
    jobs = [(a, None, valid[:, a] & valid_h) for a in range(n_j)]
    pairs = [(a, b) for a in range(n_j) for b in range(a + 1, n_j)]
    for a, b in pairs:
        mask = valid[:, a] & valid[:, b] & valid_h
        jobs += [(a, None, mask), (b, None, mask), (a, b, mask)]
    xs, ys, segs, sizes = [], [], [], []
    for k, (a, b, mask) in enumerate(jobs):
        x = S[mask, a]
        y = h[mask] if b is None else S[mask, b]
        if unit == "system":
            codes = sys_codes[mask]
            cnt = np.bincount(codes, minlength=n_sys).astype(np.float64)
            seen = cnt > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                x = _snap_ties(np.bincount(codes, x, n_sys)[seen] / cnt[seen])
                y = _snap_ties(np.bincount(codes, y, n_sys)[seen] / cnt[seen])
        xs.append(x)
        ys.append(y)
        segs.append(np.full(x.shape[0], k))
        sizes.append(x.shape[0])
    values, status = _segment_corr(
        np.concatenate(xs),
        np.concatenate(ys),
        np.concatenate(segs),
        len(jobs),
        method,
        variant,
        min_items=MIN_POOLED,
    )
    what = "systems" if unit == "system" else "items"
    label = [f"judge {a}" for a in range(n_j)] if names is None else [str(v) for v in names]
    if len(label) != n_j:
        raise ValueError(f"names has {len(label)} entries for {n_j} judge columns")
    text = {
        _TOO_FEW: f"fewer than {MIN_POOLED} valid {what}",
        _CONST_JUDGE: "constant scores of {a}",
        _CONST_HUMAN: "constant scores of {b}",
    }

    def why(k):
        a, b, _ = jobs[k]
        return text[int(status[k])].format(a=label[a], b="humans" if b is None else label[b])

    r_h = values[:n_j]
    shape = (n_j, n_j)
    r_jk = np.full(shape, np.nan)
    r_pair = np.full(shape, np.nan)
    T = np.full(shape, np.nan)
    P = np.full(shape, np.nan)
    N = np.zeros(shape, dtype=np.int64)
    reasons = {}
    for i, (a, b) in enumerate(pairs):
        ka, kb, kab = n_j + 3 * i, n_j + 3 * i + 1, n_j + 3 * i + 2
        n_pair = sizes[kab]
        N[a, b] = N[b, a] = n_pair
        r_jk[a, b] = r_jk[b, a] = values[kab]
        r_pair[a, b], r_pair[b, a] = values[ka], values[kb]
        bad = [why(k) for k in (ka, kb, kab) if status[k] != _OK]
        if bad:
            reasons[(a, b)] = "; ".join(dict.fromkeys(bad))
            continue
        res = williams_test(values[ka], values[kb], values[kab], n_pair, alternative)
        if res.reason:
            reasons[(a, b)] = res.reason
            continue
        T[a, b], T[b, a] = res.statistic, -res.statistic
        P[a, b] = res.pvalue
        P[b, a] = _t_pvalue(-res.statistic, res.df, alternative)
    P_adj = np.full(shape, np.nan)
    if alternative == "two-sided":
        iu = np.triu_indices(n_j, 1)
        P_adj[iu] = bh_adjust(P[iu])
        P_adj.T[iu] = P_adj[iu]
    else:
        off = ~np.eye(n_j, dtype=bool)
        P_adj[off] = bh_adjust(P[off])
    return WilliamsMatrixResult(r_h, r_pair, r_jk, T, P, P_adj, N, reasons, alternative)

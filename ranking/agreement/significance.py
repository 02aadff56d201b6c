"""Significance tests for judges and score sets: Welch, Williams + Benjamini-Hochberg
(:mod:`ranking.agreement.williams`, re-exported here), a seeded permutation test, and the paired
shift between two sets of scores.

Every test returns a result with ``.statistic`` and ``.pvalue``, NaN together with a
``reason`` when the data leave the test undefined (too few items, constant scores); shape
problems and impossible inputs raise ``ValueError``. Conventions as in
:mod:`ranking.agreement.correlations`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ranking._core.checks import check_random_state
from ranking._core.score_checks import (
    as_labels,
    as_scores,
    check_confidence,
    label_codes,
)

from .correlations import check_options
from .segments import (
    _OK,
    MIN_POOLED,
    _rows_corr,
    _segment_corr,
    _snap_ties,
)
from .williams import (
    ALTERNATIVES,
    WilliamsMatrixResult,
    WilliamsResult,
    bh_adjust,
    williams_matrix,
    williams_test,
)

__all__ = [
    "WelchResult",
    "WilliamsResult",
    "WilliamsMatrixResult",
    "PermutationResult",
    "PairedShiftResult",
    "welch_t",
    "williams_test",
    "williams_matrix",
    "bh_adjust",
    "permutation_test",
    "paired_shift",
    "ALTERNATIVES",
]


@dataclass(frozen=True)
class WelchResult:
    """Welch's two-sample t-test with the group summaries (std with ddof=1).

    ``statistic`` is t, ``df`` the Welch-Satterthwaite degrees of freedom.
    """

    statistic: float
    pvalue: float
    df: float
    mean_a: float
    mean_b: float
    std_a: float
    std_b: float
    n_a: int
    n_b: int
    n_dropped_nan: int = 0
    reason: str = ""


@dataclass(frozen=True)
class PairedShiftResult:
    """Mean paired difference ``a - b`` with its Student t interval and the paired t-test.

    ``shift`` is the mean difference over the ``n_used`` pairs where both scores are finite,
    ``lower``/``upper`` the ``confidence`` t interval, ``statistic`` the paired t (NaN when
    every difference is the same) and ``pvalue`` its two-sided p-value; ``n_dropped_nan``
    pairs were left out; ``reason`` says why the values are NaN ("" when they are not).
    """

    shift: float
    lower: float
    upper: float
    statistic: float
    pvalue: float
    n_used: int
    n_dropped_nan: int
    reason: str = ""


@dataclass(frozen=True)
class PermutationResult:
    """Permutation test of corr(judge_a, human) - corr(judge_b, human).

    ``statistic`` is the observed difference ``r_a - r_b``.
    """

    statistic: float
    pvalue: float
    r_a: float
    r_b: float
    n_used: int
    n_dropped_nan: int
    n_permutations: int
    reason: str = ""


# ----------------------------------------------------------------------------- two groups


def welch_t(a, b):
    """Welch's t-test between two groups (``scipy.stats.ttest_ind(equal_var=False)``).

    NaN values are left out and counted. Returns the statistic, two-sided p-value,
    Welch-Satterthwaite degrees of freedom and the group means / standard deviations
    (ddof=1) / sizes; the test is NaN with a reason when a group has fewer than 2 valid
    values or both groups are constant.

    Raises
    ------
    ValueError
        An input that is not 1-D, or infinite values.
    """
    xa = as_scores(a, "a")
    xb = as_scores(b, "b")
    n_dropped = int(np.isnan(xa).sum() + np.isnan(xb).sum())
    xa, xb = xa[np.isfinite(xa)], xb[np.isfinite(xb)]
    nan = np.nan
    summary = dict(
        mean_a=float(xa.mean()) if xa.shape[0] else nan,
        mean_b=float(xb.mean()) if xb.shape[0] else nan,
        std_a=float(xa.std(ddof=1)) if xa.shape[0] > 1 else nan,
        std_b=float(xb.std(ddof=1)) if xb.shape[0] > 1 else nan,
        n_a=int(xa.shape[0]),
        n_b=int(xb.shape[0]),
        n_dropped_nan=n_dropped,
    )
    for name, g in (("a", xa), ("b", xb)):
        if g.shape[0] < 2:
            reason = f"group {name} has {g.shape[0]} valid value(s); Welch needs >= 2"
            return WelchResult(nan, nan, nan, **summary, reason=reason)
    if summary["std_a"] == 0.0 and summary["std_b"] == 0.0:
        reason = "both groups are constant; the t statistic is undefined"
        return WelchResult(nan, nan, nan, **summary, reason=reason)
    res = stats.ttest_ind(xa, xb, equal_var=False)
    return WelchResult(float(res.statistic), float(res.pvalue), float(res.df), **summary)


def paired_shift(a, b, confidence=0.95):
    """Mean of the paired differences ``a - b``, with a t interval and the paired t-test.

    The same as ``scipy.stats.ttest_rel(a, b)`` and its ``confidence_interval(confidence)``
    on the pairs where both scores are finite (e.g. one template's mean score per item
    against a baseline template's). When every difference is the same, the t statistic is
    undefined (NaN), but the answer is not: the interval collapses onto the mean and the
    p-value is 1 for a zero shift, 0 otherwise.

    Parameters
    ----------
    a, b : array_like of shape (n_items,)
        Paired scores; NaN marks a missing or unparsed score and its pair is left out.
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    PairedShiftResult
        NaN values with a reason when fewer than 2 pairs have both scores.

    Raises
    ------
    ValueError
        Inputs that are not 1-D, differ in length or hold infinite values; ``confidence``
        outside (0, 1).
    """
    confidence = check_confidence(confidence)
    xa = as_scores(a, "a")
    xb = as_scores(b, "b")
    if xa.shape[0] != xb.shape[0]:
        raise ValueError(f"a has {xa.shape[0]} scores, b has {xb.shape[0]}; they must be paired")
    d = xa - xb
    keep = np.isfinite(d)
    d = d[keep]
    n_used, n_dropped = int(d.shape[0]), int((~keep).sum())
    nan = np.nan
    if n_used < 2:
        reason = "fewer than 2 items rated under both"
        return PairedShiftResult(nan, nan, nan, nan, nan, n_used, n_dropped, reason)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n_used - 1)) * sd / np.sqrt(n_used)
    if sd > 0:
        res = stats.ttest_1samp(d, 0.0)
        t, pvalue = float(res.statistic), float(res.pvalue)
    else:  # constant differences: scipy returns NaN, the sign of the shift is certain
        t, pvalue = nan, 1.0 if mean == 0 else 0.0
    return PairedShiftResult(mean, mean - half, mean + half, t, pvalue, n_used, n_dropped)


# ----------------------------------------------------------------------------- permutation


def _unit_codes(unit, contexts, systems, valid):
    """Codes of the groups an aggregation unit needs, restricted to the valid items."""
    if unit == "item":
        if contexts is None:
            raise ValueError("unit='item' correlates within each context: pass contexts=")
        codes, labels = label_codes(contexts[valid])
        return codes, labels.shape[0]
    if unit == "system":
        if systems is None:
            raise ValueError("unit='system' averages per system: pass systems=")
        codes, labels = label_codes(systems[valid])
        return codes, labels.shape[0]
    return None, 0


def _stat_rows(J, h, unit, codes, n_groups, method, variant):
    """Correlation of every row of ``J`` (n_rows, n) with ``h`` per ``unit``."""
    n_rows, n = J.shape
    if unit == "overall":
        seg = np.repeat(np.arange(n_rows), n)
        vals, _ = _segment_corr(
            J.ravel(), np.tile(h, n_rows), seg, n_rows, method, variant, min_items=MIN_POOLED
        )
        return vals
    if unit == "system":
        # Sums in item order then one division and tie snapping, as correlation() does.
        counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
        cell = (np.arange(n_rows)[:, None] * n_groups + codes[None, :]).ravel()
        JM = _snap_ties(
            np.bincount(cell, J.ravel(), n_rows * n_groups).reshape(n_rows, n_groups) / counts
        )
        hm = _snap_ties(np.bincount(codes, h, n_groups) / counts)
        return _rows_corr(JM, np.broadcast_to(hm, (n_rows, n_groups)).copy(), method, variant)
    seg = (np.arange(n_rows)[:, None] * n_groups + codes[None, :]).ravel()
    vals, status = _segment_corr(
        J.ravel(), np.tile(h, n_rows), seg, n_rows * n_groups, method, variant
    )
    vals = vals.reshape(n_rows, n_groups)
    ok = (status == _OK).reshape(n_rows, n_groups)
    with np.errstate(invalid="ignore"):
        return np.where(
            ok.any(axis=1), np.where(ok, vals, 0.0).sum(axis=1) / ok.sum(axis=1), np.nan
        )


def permutation_test(
    judge_a,
    judge_b,
    human,
    unit="item",
    method="spearman",
    variant="b",
    contexts=None,
    systems=None,
    n_permutations=1000,
    random_state=None,
):
    """Seeded permutation test for corr(judge_a, human) - corr(judge_b, human).

    Under the null hypothesis the two judges are exchangeable, so each permutation swaps
    the two judges' scores on every item independently with probability 1/2 and recomputes
    the difference. Items where any of the three scores is NaN are left out and counted.

    Returns
    -------
    PermutationResult
        ``statistic`` = r_a - r_b and the two-sided p-value ``(1 + #{|d*| >= |d|}) /
        (1 + n_permutations)``; NaN with a reason when the difference is undefined.

    Raises
    ------
    ValueError
        As :func:`ranking.agreement.correlation`, or ``n_permutations`` < 1.
    """
    check_options(unit, method, variant)
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer; got {n_permutations!r}")
    a = as_scores(judge_a, "judge_a")
    b = as_scores(judge_b, "judge_b", n=a.shape[0])
    h = as_scores(human, "human", n=a.shape[0])
    n = a.shape[0]
    if contexts is not None:
        contexts = as_labels(contexts, n, "contexts")
    if systems is not None:
        systems = as_labels(systems, n, "systems")
    valid = np.isfinite(a) & np.isfinite(b) & np.isfinite(h)
    n_dropped = int(n - valid.sum())
    codes, n_groups = _unit_codes(unit, contexts, systems, valid)
    a, b, h = a[valid], b[valid], h[valid]
    n_used = int(valid.sum())
    obs = _stat_rows(np.stack([a, b]), h, unit, codes, n_groups, method, variant)
    diff = float(obs[0] - obs[1])
    if not np.isfinite(diff):
        return PermutationResult(
            np.nan,
            np.nan,
            float(obs[0]),
            float(obs[1]),
            n_used,
            n_dropped,
            int(n_permutations),
            "a correlation is undefined (too few items or constant scores)",
        )
    rng = check_random_state(random_state)
    n_perm = int(n_permutations)
    # Bounded memory: about 2 million scores per chunk.
    chunk = max(1, 2_000_000 // max(n_used, 1))
    extreme = 0
    n_defined = 0
    tol = 1e-12 * max(1.0, abs(diff))
    done = 0
    while done < n_perm:
        m = min(chunk, n_perm - done)
        swap = rng.random((m, n_used)) < 0.5
        A = np.where(swap, b, a)
        B = np.where(swap, a, b)
        d = _stat_rows(A, h, unit, codes, n_groups, method, variant) - _stat_rows(
            B, h, unit, codes, n_groups, method, variant
        )
        fin = np.isfinite(d)
        n_defined += int(fin.sum())
        extreme += int((np.abs(d[fin]) >= abs(diff) - tol).sum())
        done += m
    reason = ""
    if n_defined < n_perm:
        reason = f"{n_perm - n_defined} of {n_perm} permutations undefined and left out"
    p = (1.0 + extreme) / (1.0 + n_defined)
    return PermutationResult(
        diff, float(p), float(obs[0]), float(obs[1]), n_used, n_dropped, n_perm, reason
    )

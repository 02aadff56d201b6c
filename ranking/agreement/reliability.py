"""Reliability of raters: ICC, Krippendorff's alpha, kappas (the human baseline and a judge's
self-consistency: :mod:`ranking.agreement.baseline`).

Rating matrices are (n_items, n_raters) with NaN for a missing or unparsed rating; the raters
may be annotators, judges, or K samples of one judge. The conventions are those of
:mod:`ranking.agreement.correlations`: estimates expose ``.value``, the ICC's F test ``.statistic``
and ``.pvalue``; shape problems raise ``ValueError``, data that leave a coefficient undefined give
NaN with a ``reason``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ranking._core.score_checks import (
    as_label_vector,
    as_matrix,
    category_codes,
    check_choice,
    check_confidence,
    missing_labels,
)

__all__ = [
    "AgreementResult",
    "ICCResult",
    "icc",
    "krippendorff_alpha",
    "share_all_agree",
    "cohen_kappa",
    "fleiss_kappa",
    "ICC_KINDS",
    "ALPHA_SCALES",
    "KAPPA_WEIGHTS",
]

ICC_KINDS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
ALPHA_SCALES = ("nominal", "ordinal", "interval", "ratio")
KAPPA_WEIGHTS = (None, "linear", "quadratic")


@dataclass(frozen=True)
class AgreementResult:
    """An agreement coefficient (Krippendorff's alpha, a kappa, a share of agreement).

    ``value`` is NaN with a ``reason`` when the data leave it undefined; ``n_items`` items
    entered it and ``n_dropped_nan`` were left out for missing ratings.
    """

    value: float
    n_items: int
    n_dropped_nan: int = 0
    reason: str = ""


@dataclass(frozen=True)
class ICCResult:
    """An intraclass correlation (Shrout & Fleiss 1979) with its F test and interval.

    ``statistic`` is the F statistic on (``df1``, ``df2``) degrees of freedom and ``pvalue``
    its p-value; ``n_dropped_nan`` items were left out because a rating was NaN.
    """

    value: float
    lower: float
    upper: float
    statistic: float
    df1: float
    df2: float
    pvalue: float
    kind: str = "ICC2k"
    n_items: int = 0
    n_raters: int = 0
    n_dropped_nan: int = 0
    reason: str = ""


# ----------------------------------------------------------------------------- ICC


def _anova_two_way(Y):
    n, k = Y.shape
    grand = Y.mean()
    row_m = Y.mean(axis=1)
    col_m = Y.mean(axis=0)
    ss_rows = k * ((row_m - grand) ** 2).sum()
    ss_cols = n * ((col_m - grand) ** 2).sum()
    # Residuals directly rather than by subtraction, so perfect agreement gives ~0, not noise.
    ss_err = ((Y - row_m[:, None] - col_m[None, :] + grand) ** 2).sum()
    ss_within = ((Y - row_m[:, None]) ** 2).sum()
    msr = ss_rows / (n - 1)
    msc = ss_cols / (k - 1)
    mse = ss_err / ((n - 1) * (k - 1))
    msw = ss_within / (n * (k - 1))
    return msr, msc, mse, msw


def icc(ratings, kind="ICC2k", confidence=0.95):
    """Intraclass correlation of Shrout & Fleiss (1979) with its F test and interval.

    Parameters
    ----------
    ratings : array_like of shape (n_items, n_raters)
        Every rater rates every item; items with a NaN rating are left out (counted in
        ``n_dropped_nan``), as in pingouin's ``nan_policy="omit"`` and psych's complete cases.
    kind : {"ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"}
        1: one-way random; 2: two-way random, absolute agreement; 3: two-way mixed,
        consistency; "k": reliability of the mean of the k raters.
    confidence : float
        Coverage of the F-based interval (the formulas of pingouin / psych; ICC2 uses the
        Satterthwaite degrees of freedom of McGraw & Wong 1996).

    Returns
    -------
    ICCResult
        NaN value with a ``reason`` when fewer than 3 complete items remain or the ratings do
        not vary; NaN interval with a reason when the residual variance is zero.

    Raises
    ------
    ValueError
        Not 2-D, fewer than 2 raters, a rater column with no rating at all, unknown kind.
    """
    check_choice(kind, ICC_KINDS, "kind")
    confidence = check_confidence(confidence)
    Y = as_matrix(ratings)
    n_all, k = Y.shape
    if k < 2:
        raise ValueError(f"ICC needs at least 2 raters (columns); got {k}")
    empty_cols = np.flatnonzero(~np.isfinite(Y).any(axis=0))
    if n_all and empty_cols.size:
        raise ValueError(
            f"rater column(s) {empty_cols.tolist()} have no rating at all; drop them first"
        )
    complete = np.isfinite(Y).all(axis=1)
    Y = Y[complete]
    n = Y.shape[0]
    base = dict(kind=kind, n_items=n, n_raters=k, n_dropped_nan=n_all - n)
    nan = np.nan
    if n < 3:
        reason = f"fewer than 3 items rated by every rater ({n})"
        return ICCResult(nan, nan, nan, nan, nan, nan, nan, reason=reason, **base)
    msr, msc, mse, msw = _anova_two_way(Y)
    alpha = 1.0 - confidence
    one_way = kind in ("ICC1", "ICC1k")
    df1 = n - 1.0
    df2 = n * (k - 1.0) if one_way else (n - 1.0) * (k - 1.0)
    if np.ptp(Y) == 0.0:
        reason = f"all ratings equal {float(Y[0, 0]):g}; ICC undefined"
        return ICCResult(nan, nan, nan, nan, df1, df2, nan, reason=reason, **base)
    # Exact structure checks: no within-item spread (one-way), or raters differing only by
    # a constant offset (two-way), leave no error variance for the F test.
    if one_way:
        no_error = bool(np.all(np.ptp(Y, axis=1) == 0.0))
    else:
        no_error = bool(np.all(np.ptp(Y - Y[:, :1], axis=0) == 0.0))
    if no_error:
        mse = msw = 0.0
    denom_err = msw if one_way else mse
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "ICC1":
            value = (msr - msw) / (msr + (k - 1) * msw)
        elif kind == "ICC1k":
            value = (msr - msw) / msr
        elif kind == "ICC2":
            value = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        elif kind == "ICC2k":
            value = (msr - mse) / (msr + (msc - mse) / n)
        elif kind == "ICC3":
            value = (msr - mse) / (msr + (k - 1) * mse)
        else:
            value = (msr - mse) / msr
    value = float(value)
    if denom_err == 0.0:
        reason = "residual variance is zero; the F-based interval is undefined"
        return ICCResult(value, nan, nan, np.inf, df1, df2, 0.0, reason=reason, **base)
    F = msr / denom_err
    p = float(stats.f.sf(F, df1, df2))
    fq = stats.f.ppf(1 - alpha / 2, df1, df2)
    fq_rev = stats.f.ppf(1 - alpha / 2, df2, df1)
    if kind in ("ICC1", "ICC3", "ICC1k", "ICC3k"):
        f_lo = F / fq
        f_hi = F * fq_rev
        if kind.endswith("k"):
            lower, upper = 1 - 1 / f_lo, 1 - 1 / f_hi
        else:
            lower = (f_lo - 1) / (f_lo + k - 1)
            upper = (f_hi - 1) / (f_hi + k - 1)
    else:
        icc2 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        fj = msc / mse
        vn = (k - 1) * (n - 1) * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
        vd = (n - 1) * k**2 * icc2**2 * fj**2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
        v = vn / vd
        f2u = stats.f.ppf(1 - alpha / 2, n - 1, v)
        f2l = stats.f.ppf(1 - alpha / 2, v, n - 1)
        lower = n * (msr - f2u * mse) / (f2u * (k * msc + (k * n - k - n) * mse) + n * msr)
        upper = n * (f2l * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f2l * msr)
        if kind == "ICC2k":
            lower = lower * k / (1 + lower * (k - 1))
            upper = upper * k / (1 + upper * (k - 1))
    return ICCResult(value, float(lower), float(upper), float(F), df1, float(df2), p, **base)


# ----------------------------------------------------------------------------- alpha, agreement


def krippendorff_alpha(ratings, scale="interval"):
    """Krippendorff's alpha from the coincidence matrix.

    Parameters
    ----------
    ratings : array_like of shape (n_items, n_raters)
        Numeric ratings, NaN where a rater did not rate an item. Items with fewer than 2
        ratings are not pairable and are left out (as in Krippendorff 2011; counted in
        ``n_dropped_nan``).
    scale : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement (difference function). Ordinal distances use the values that
        occur in the data as the ordered scale.

    Returns
    -------
    AgreementResult
        ``value`` = ``1 - D_observed / D_expected``; NaN with a reason when no item has 2 or
        more ratings or all pairable ratings are one value (no variation to agree on).

    Raises
    ------
    ValueError
        Not 2-D, fewer than 2 raters, unknown scale.
    """
    check_choice(scale, ALPHA_SCALES, "scale")
    Y = as_matrix(ratings)
    if Y.shape[1] < 2:
        raise ValueError(f"Krippendorff's alpha needs at least 2 raters; got {Y.shape[1]}")
    m_u = np.isfinite(Y).sum(axis=1)
    pairable = m_u >= 2
    Y = Y[pairable]
    m_u = m_u[pairable]
    counts = dict(n_items=int(Y.shape[0]), n_dropped_nan=int((~pairable).sum()))
    if Y.shape[0] == 0:
        reason = "no item has 2 or more ratings; Krippendorff's alpha is undefined"
        return AgreementResult(np.nan, reason=reason, **counts)
    finite = np.isfinite(Y)
    values, inv = np.unique(Y[finite], return_inverse=True)
    n_v = values.shape[0]
    if n_v < 2:
        reason = (
            f"every pairable rating equals {values[0]!r}; Krippendorff's alpha is undefined "
            "(no variation)"
        )
        return AgreementResult(np.nan, reason=reason, **counts)
    rows = np.nonzero(finite)[0]
    coinc = np.zeros((Y.shape[0], n_v))
    np.add.at(coinc, (rows, inv), 1.0)
    inv_m = 1.0 / (m_u - 1.0)
    o = (coinc * inv_m[:, None]).T @ coinc
    o[np.diag_indices(n_v)] -= (coinc * inv_m[:, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    n_tot = n_c.sum()
    delta2 = _alpha_distance(values, n_c, scale)
    d_obs = (o * delta2).sum()
    d_exp = (np.outer(n_c, n_c) * delta2).sum()
    return AgreementResult(float(1.0 - (n_tot - 1.0) * d_obs / d_exp), **counts)


def _alpha_distance(values, n_c, scale):
    a = values[:, None]
    b = values[None, :]
    if scale == "nominal":
        return (a != b).astype(np.float64)
    if scale == "interval":
        return (a - b) ** 2
    if scale == "ratio":
        s = a + b
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(s == 0, 0.0, ((a - b) / s) ** 2)
        return d
    cs = np.cumsum(n_c)
    idx = np.arange(values.shape[0])
    lo = np.minimum(idx[:, None], idx[None, :])
    hi = np.maximum(idx[:, None], idx[None, :])
    between = cs[hi] - cs[lo] + n_c[lo]
    d = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    d[idx, idx] = 0.0
    return d


def share_all_agree(ratings):
    """Share of items on which every (non-NaN) rating is identical.

    Items with fewer than 2 ratings are left out (counted in ``n_dropped_nan``). Equality is
    exact (ratings are compared as given; round them first if they carry noise).

    Returns
    -------
    AgreementResult
        NaN with a reason when no item has 2 or more ratings.

    Raises
    ------
    ValueError
        Not 2-D.
    """
    Y = as_matrix(ratings)
    keep = np.isfinite(Y).sum(axis=1) >= 2
    counts = dict(n_items=int(keep.sum()), n_dropped_nan=int((~keep).sum()))
    if not keep.any():
        reason = "no item has 2 or more ratings; the share of agreement is undefined"
        return AgreementResult(np.nan, reason=reason, **counts)
    Y = Y[keep]
    hi = np.nanmax(Y, axis=1)
    lo = np.nanmin(Y, axis=1)
    return AgreementResult(float(np.mean(hi == lo)), **counts)


# ----------------------------------------------------------------------------- kappas


def cohen_kappa(a, b, weights=None):
    """Cohen's kappa between two raters, optionally weighted.

    Parameters
    ----------
    a, b : array_like of shape (n_items,)
        Labels (numbers or strings); NaN or None marks a missing label, and items where
        either rater is missing are left out (counted in ``n_dropped_nan``).
    weights : {None, "linear", "quadratic"}
        Disagreement weights by the distance between category positions in the sorted
        category list (as scikit-learn), for ordinal labels.

    Returns
    -------
    AgreementResult
        NaN with a reason when fewer than 2 items are labelled by both or both raters used
        one and the same category throughout.

    Raises
    ------
    ValueError
        Lengths differ, labels of types that cannot be ordered, unknown weights.
    """
    check_choice(weights, KAPPA_WEIGHTS, "weights")
    a = as_label_vector(a, "a")
    b = as_label_vector(b, "b")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"a has {a.shape[0]} labels, b has {b.shape[0]}; they must align")
    keep = ~(missing_labels(a) | missing_labels(b))
    a, b = a[keep], b[keep]
    counts = dict(n_items=int(a.shape[0]), n_dropped_nan=int((~keep).sum()))
    if a.shape[0] < 2:
        reason = f"Cohen's kappa needs at least 2 items rated by both; got {a.shape[0]}"
        return AgreementResult(np.nan, reason=reason, **counts)
    cats, codes = category_codes(np.concatenate([a, b]))
    ca, cb = codes[: a.shape[0]], codes[a.shape[0] :]
    q = cats.shape[0]
    O = np.zeros((q, q))
    np.add.at(O, (ca, cb), 1.0)
    O /= O.sum()
    E = np.outer(O.sum(axis=1), O.sum(axis=0))
    idx = np.arange(q)
    if weights is None:
        Wt = (idx[:, None] != idx[None, :]).astype(np.float64)
    elif weights == "linear":
        Wt = np.abs(idx[:, None] - idx[None, :]).astype(np.float64)
    else:
        Wt = ((idx[:, None] - idx[None, :]) ** 2).astype(np.float64)
    expected = (Wt * E).sum()
    if expected == 0.0:
        reason = (
            "Cohen's kappa is undefined: both raters used the single category "
            f"{cats[0]!r} throughout"
        )
        return AgreementResult(np.nan, reason=reason, **counts)
    return AgreementResult(float(1.0 - (Wt * O).sum() / expected), **counts)


def fleiss_kappa(counts=None, *, labels=None):
    """Fleiss' kappa for many raters.

    Parameters
    ----------
    counts : array_like of shape (n_items, n_categories), optional
        How many raters put item i in category c; every row must have the same total
        (the same number of raters per item), at least 2.
    labels : array_like of shape (n_items, n_raters), optional
        Raw labels instead of counts (NaN / None for missing); every item must have the
        same number of labels. Give exactly one of ``counts`` and ``labels``.

    Returns
    -------
    AgreementResult
        NaN with a reason when every label is missing, fewer than 2 items are given, or all
        ratings fall in one category.

    Raises
    ------
    ValueError
        Both or neither input given, unequal raters per item, fewer than 2 raters per item,
        negative or fractional counts.
    """
    if (counts is None) == (labels is None):
        raise ValueError("give exactly one of counts= (n_items, n_categories) or labels=")
    if labels is not None:
        L = np.asarray(labels, dtype=object if np.asarray(labels).dtype.kind in "OUS" else None)
        if L.ndim != 2:
            raise ValueError(f"labels must have shape (n_items, n_raters); got {L.shape}")
        flat = L.ravel()
        miss = missing_labels(flat)
        if miss.all():
            return AgreementResult(np.nan, 0, L.shape[0], "labels are all missing")
        cats, codes = category_codes(flat[~miss])
        rows = np.repeat(np.arange(L.shape[0]), L.shape[1])[~miss]
        C = np.zeros((L.shape[0], cats.shape[0]))
        np.add.at(C, (rows, codes), 1.0)
    else:
        C = np.asarray(counts, dtype=np.float64)
        if C.ndim != 2:
            raise ValueError(f"counts must have shape (n_items, n_categories); got {C.shape}")
        if not np.isfinite(C).all() or (C < 0).any() or (C != np.round(C)).any():
            raise ValueError("counts must be non-negative whole numbers")
    n_items = C.shape[0]
    if n_items < 2:
        reason = f"Fleiss' kappa needs at least 2 items; got {n_items}"
        return AgreementResult(np.nan, n_items, reason=reason)
    m = C.sum(axis=1)
    if not np.all(m == m[0]):
        bad = np.flatnonzero(m != m[0])[:10].tolist()
        raise ValueError(
            f"Fleiss' kappa needs the same number of raters per item; item 0 has {int(m[0])}, "
            f"items {bad} differ; drop or complete them"
        )
    m = m[0]
    if m < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 raters per item; got {int(m)}")
    P_i = ((C * C).sum(axis=1) - m) / (m * (m - 1))
    p_j = C.sum(axis=0) / (n_items * m)
    P_e = float((p_j * p_j).sum())
    if P_e >= 1.0:
        reason = "Fleiss' kappa is undefined: every rating falls in one category"
        return AgreementResult(np.nan, n_items, reason=reason)
    return AgreementResult(float((P_i.mean() - P_e) / (1.0 - P_e)), n_items)

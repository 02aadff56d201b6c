"""How often a judge is right, with honest intervals, and whether one judge is right more
often than another on the same pairs.

- :func:`wilson_interval`: the Wilson score interval of a proportion (Wilson 1927), also for
  a fractional count of successes (a pair judged in both orders whose orders disagree counts
  1/2);
- :func:`mcnemar`: two judges' right/wrong on the same items, McNemar's exact test (the
  two-sided binomial test of the discordant items at 1/2) and the difference of their
  accuracies with Newcombe's score interval for paired proportions (Newcombe 1998, method
  10: the Wilson limits of each accuracy combined with the phi correlation of the two);
- :func:`paired_difference_interval`: that interval alone, from the four counts.

Undefined results (no item, no discordant item) are NaN or exact limits with a ``reason``,
never an error; impossible inputs (negative counts, a proportion outside [0, 1], arrays of
different lengths) raise ``ValueError``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ranking._core.score_checks import check_confidence

__all__ = [
    "McNemarResult",
    "mcnemar",
    "paired_difference_interval",
    "wilson_interval",
]


def _z(confidence: float) -> float:
    return float(stats.norm.ppf(0.5 + check_confidence(confidence) / 2.0))


def wilson_interval(successes, n, confidence=0.95):
    """Wilson score interval of ``successes`` out of ``n`` (scalars or arrays, broadcast).

    Parameters
    ----------
    successes : float or array_like
        Successes; may be fractional (the closed form is applied to the effective count).
    n : float or array_like
        Trials; 0 gives NaN limits.
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    (low, high) : floats, or ndarrays of the broadcast shape
        Equal to ``scipy.stats.binomtest(k, n).proportion_ci(confidence, method="wilson")``
        for whole counts.

    Raises
    ------
    ValueError
        A negative or NaN count, ``successes > n``, or ``confidence`` outside (0, 1).

    Examples
    --------
    >>> low, high = wilson_interval(8, 10)
    >>> round(low, 4), round(high, 4)
    (0.4902, 0.9433)
    """
    z = _z(confidence)
    k = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    if np.isnan(k).any() or np.isnan(m).any():
        raise ValueError("successes and n must be numbers, not NaN")
    if (k < 0).any() or (m < 0).any():
        raise ValueError("successes and n must not be negative")
    if (k > m * (1 + 1e-12)).any():
        raise ValueError("successes must not exceed n")
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.clip(k / m, 0.0, 1.0)
        denom = 1.0 + z * z / m
        centre = (p + z * z / (2.0 * m)) / denom
        half = z * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m)) / denom
        low = np.where(m > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
        high = np.where(m > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    # exact limits at the ends (the closed form can miss 0 or 1 by a rounding error)
    low = np.where((m > 0) & (k == 0), 0.0, low)
    high = np.where((m > 0) & (k == m), 1.0, high)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def _check_counts(*counts) -> tuple[int, ...]:
    out = []
    for c in counts:
        if isinstance(c, bool) or not float(c).is_integer() or c < 0:
            raise ValueError(f"counts must be whole numbers >= 0; got {c!r}")
        out.append(int(c))
    return tuple(out)


def paired_difference_interval(both_right, only_a, only_b, both_wrong, confidence=0.95):
    """Newcombe's score interval (1998, method 10) of ``accuracy_b - accuracy_a`` on paired
    items.

    Parameters
    ----------
    both_right, only_a, only_b, both_wrong : int
        Items both judges got right, only A, only B, neither.
    confidence : float, default 0.95

    Returns
    -------
    (low, high) : float
        Within [-1, 1] and around ``(only_b - only_a) / n``; NaN when there is no item.

    Notes
    -----
    With p_b, p_a the two accuracies, (l_b, u_b) and (l_a, u_a) their Wilson intervals and
    phi the correlation of the 2x2 table (0 when a margin is empty), the limits are
    d - sqrt((p_b - l_b)^2 - 2 phi (p_b - l_b)(u_a - p_a) + (u_a - p_a)^2) and
    d + sqrt((u_b - p_b)^2 - 2 phi (u_b - p_b)(p_a - l_a) + (p_a - l_a)^2).

    Raises
    ------
    ValueError
        A count that is negative or not whole; ``confidence`` outside (0, 1).
    """
    e, g, f, h = _check_counts(both_right, only_a, only_b, both_wrong)
    n = e + f + g + h
    if n == 0:
        return math.nan, math.nan
    p_b, p_a = (e + f) / n, (e + g) / n
    l_b, u_b = wilson_interval(e + f, n, confidence)
    l_a, u_a = wilson_interval(e + g, n, confidence)
    denom = (e + f) * (g + h) * (e + g) * (f + h)
    phi = (e * h - f * g) / math.sqrt(denom) if denom > 0 else 0.0
    d = p_b - p_a
    delta = math.sqrt(
        max((p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2, 0.0)
    )
    eps = math.sqrt(
        max((u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2, 0.0)
    )
    return max(d - delta, -1.0), min(d + eps, 1.0)


@dataclass(frozen=True)
class McNemarResult:
    """Two judges right or wrong on the same items (see :func:`mcnemar`).

    Attributes
    ----------
    n : int
        Items with an outcome for both judges.
    both_right, only_a, only_b, both_wrong : int
        The 2x2 table: right by both, by A only, by B only, by neither.
    accuracy_a, accuracy_b : float
        Share of the ``n`` items each judge got right.
    difference, lower, upper : float
        ``accuracy_b - accuracy_a`` and its Newcombe interval (:func:`paired_difference_interval`).
    pvalue : float
        McNemar's exact two-sided p: the binomial test of ``only_b`` out of the discordant
        items at 1/2 (1 when there is no discordant item); NaN when ``n == 0``.
    confidence : float
        Coverage of the interval.
    n_dropped_nan : int
        Items left out because either judge has no outcome there.
    reason : str
        Why a value is NaN or the test says nothing ("" otherwise).
    """

    n: int
    both_right: int
    only_a: int
    only_b: int
    both_wrong: int
    accuracy_a: float
    accuracy_b: float
    difference: float
    lower: float
    upper: float
    pvalue: float
    confidence: float
    n_dropped_nan: int = 0
    reason: str = ""

    @property
    def n_discordant(self) -> int:
        """Items exactly one judge got right: the only ones the test reads."""
        return self.only_a + self.only_b


def _outcomes(x, name) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    ok = np.isfinite(arr)
    if not np.isin(arr[ok], (0.0, 1.0)).all():
        raise ValueError(f"{name} must hold 1 (right), 0 (wrong) or NaN (no outcome)")
    if np.isinf(arr).any():
        raise ValueError(f"{name} must not hold infinite values")
    return arr


def mcnemar(a, b, confidence=0.95) -> McNemarResult:
    """McNemar's exact test of two judges on the same items, with the accuracy difference.

    Parameters
    ----------
    a, b : array_like of shape (n_items,)
        1 where the judge is right, 0 where it is wrong, NaN where it has no outcome (the
        item is then left out for both).
    confidence : float, default 0.95
        Coverage of the interval of the difference.

    Returns
    -------
    McNemarResult
        ``pvalue`` equals ``scipy.stats.binomtest(only_b, only_a + only_b, 0.5).pvalue``.

    Raises
    ------
    ValueError
        Inputs that are not 1-D, differ in length or hold values other than 0, 1 and NaN;
        ``confidence`` outside (0, 1).

    Examples
    --------
    >>> r = mcnemar([1, 1, 0, 1, 0, 1], [1, 0, 0, 0, 0, 0])
    >>> r.only_a, r.only_b, round(r.pvalue, 3)
    (3, 0, 0.25)
    """
    confidence = check_confidence(confidence)
    xa, xb = _outcomes(a, "a"), _outcomes(b, "b")
    if xa.shape != xb.shape:
        raise ValueError(f"a has {xa.shape[0]} outcomes, b has {xb.shape[0]}; they must be paired")
    keep = np.isfinite(xa) & np.isfinite(xb)
    xa, xb = xa[keep], xb[keep]
    n = int(keep.sum())
    dropped = int((~keep).sum())
    e = int(((xa == 1) & (xb == 1)).sum())
    g = int(((xa == 1) & (xb == 0)).sum())
    f = int(((xa == 0) & (xb == 1)).sum())
    h = n - e - f - g
    nan = math.nan
    if n == 0:
        return McNemarResult(
            0, 0, 0, 0, 0, nan, nan, nan, nan, nan, nan, confidence, dropped,
            "no item has an outcome for both judges",
        )  # fmt: skip
    low, high = paired_difference_interval(e, g, f, h, confidence)
    if f + g == 0:
        pvalue, reason = 1.0, "no discordant item: the judges are right on the same items"
    else:
        pvalue = float(min(1.0, 2.0 * stats.binom.cdf(min(f, g), f + g, 0.5)))
        reason = ""
    return McNemarResult(
        n=n,
        both_right=e,
        only_a=g,
        only_b=f,
        both_wrong=h,
        accuracy_a=(e + g) / n,
        accuracy_b=(e + f) / n,
        difference=(f - g) / n,
        lower=low,
        upper=high,
        pvalue=pvalue,
        confidence=confidence,
        n_dropped_nan=dropped,
        reason=reason,
    )

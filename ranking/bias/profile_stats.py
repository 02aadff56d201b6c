"""Small statistics behind ``ranking.position_profile``: checks, Wilson intervals, the
multinomial bootstrap of category counts, and quantile bins of the quality gap.

The bootstrap trick: a statistic that depends on the resampled units only through how many
units fall in each of a few categories (primacy / recency / consistent pairs; the distinct
values of a per-group share) is bootstrapped exactly by drawing those category counts from a
multinomial with the observed shares, ``rng.multinomial(n, counts / n, size=n_boot)``; that is
the distribution of the counts under resampling the units with replacement, at a cost that
does not grow with the number of units.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.stats import norm

__all__ = [
    "check_n_boot",
    "check_probabilities",
    "gap_bins",
    "multinomial_draws",
    "wilson",
]


def check_probabilities(values, name):
    """1-D float64 array of probabilities in [0, 1] (NaN allowed); ValueError otherwise."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one entry per pair); got shape {arr.shape}")
    if np.isinf(arr).any():
        k = int(np.flatnonzero(np.isinf(arr))[0])
        raise ValueError(f"{name}[{k}] is infinite; use NaN for an order that was not judged")
    bad = np.isfinite(arr) & ((arr < 0.0) | (arr > 1.0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} holds probabilities, so values must lie in [0, 1]; {name}[{k}] = "
            f"{float(arr[k])} ({int(bad.sum())} value(s) out of range)"
        )
    return arr


def check_n_boot(n_boot):
    """A non-negative int number of bootstrap replicates (0: no bootstrap interval)."""
    if not isinstance(n_boot, numbers.Integral) or isinstance(n_boot, bool) or n_boot < 0:
        raise ValueError(f"n_boot must be a non-negative int; got {n_boot!r}")
    return int(n_boot)


def wilson(successes, n, confidence):
    """Wilson score interval(s) for ``successes`` out of ``n`` (arrays or scalars).

    ``successes`` may be fractional (a tie counted 1/2): the closed form is applied to the
    effective count. NaN where ``n == 0``.
    """
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = float(norm.ppf(0.5 + confidence / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2.0 * n)) / denom
        half = z * np.sqrt(np.clip(p * (1.0 - p), 0.0, None) / n + z * z / (4.0 * n * n)) / denom
        low = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), np.nan)
        high = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), np.nan)
    return low, high


def multinomial_draws(rng, counts, n_boot):
    """Bootstrap category counts, shape (n_boot, n_categories), for observed ``counts``.

    Resampling the ``sum(counts)`` units with replacement and counting categories gives
    exactly this multinomial.
    """
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    return rng.multinomial(total, counts / total, size=n_boot)


def gap_bins(gap, n_bins):
    """Quantile bins of the finite gaps.

    Returns ``(edges, index)``: ``edges`` the increasing bin edges (``n_bins + 1`` of them,
    fewer where quantiles repeat and are merged; two equal edges when every finite gap is
    the same), ``index`` the bin of each entry (-1 for a NaN gap). Bins are right-closed,
    ``(e_k, e_k+1]``, the first one also holding its lower edge (``pandas.qcut``'s rule).
    """
    finite = np.isfinite(gap)
    index = np.full(gap.shape[0], -1, dtype=np.int64)
    if not finite.any():
        return np.empty(0), index
    edges = np.unique(np.quantile(gap[finite], np.linspace(0.0, 1.0, n_bins + 1)))
    if edges.shape[0] == 1:
        edges = np.repeat(edges, 2)
    index[finite] = np.searchsorted(edges[1:-1], gap[finite], side="left")
    return edges, index

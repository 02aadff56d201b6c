"""Input checks of the agreement statistics: score vectors, label arrays and rating matrices.

Shared by :mod:`ranking.agreement.correlations`, :mod:`ranking.agreement.reliability` and
:mod:`ranking.agreement.significance` (``ranking._core.checks`` holds the checks of P). Every
problem is a ``ValueError`` naming the argument and what to do; these checks never look at whether a
statistic is defined, which is the caller's NaN-with-a-reason business.
"""

from __future__ import annotations

import numpy as np


def check_choice(value, choices, name):
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}; got {value!r}")


def check_confidence(confidence):
    """``confidence`` (coverage of an interval) as a float strictly between 0 and 1."""
    if not (0.0 < float(confidence) < 1.0):
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence!r}")
    return float(confidence)


def _as_float64(x, name):
    """``x`` as a float64 array, or a ValueError saying that ``name`` must be numeric."""
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric (NaN for missing); {err}") from None


def as_scores(x, name, n=None):
    """1-D float64 scores (NaN for missing), optionally of length ``n``; no infinities."""
    arr = _as_float64(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(
            f"{name} has {arr.shape[0]} values but the judge scores have {n}; "
            "they must be aligned item by item"
        )
    if np.isinf(arr).any():
        i = int(np.flatnonzero(np.isinf(arr))[0])
        raise ValueError(f"{name}[{i}] is infinite; use NaN for a missing score")
    return arr


def as_labels(labels, n, name):
    """1-D labels (context or system of each item), one per item, none missing."""
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} labels but there are {n} items")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN labels; every item needs a label")
    if arr.dtype == object and any(v is None for v in arr):
        raise ValueError(f"{name} contains None labels; every item needs a label")
    return arr


def label_codes(labels):
    """Integer codes 0..n_groups-1 and the sorted unique labels."""
    try:
        uniq, inv = np.unique(labels, return_inverse=True)
    except TypeError:
        # Mixed label types (e.g. str and int) do not sort; compare them as text.
        uniq, inv = np.unique(labels.astype(str), return_inverse=True)
    return inv.astype(np.int64), uniq


def as_matrix(ratings, name="ratings"):
    """(n_items, n_raters) float64 ratings, NaN for missing; no infinities."""
    arr = _as_float64(ratings, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (n_items, n_raters); got {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values; use NaN for missing ratings")
    return arr


def as_label_vector(x, name):
    """1-D labels of one rater (numbers or strings; NaN or None for a missing label)."""
    arr = np.asarray(x, dtype=object if np.asarray(x).dtype.kind in "OUS" else None)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    return arr


def missing_labels(arr):
    """Where a label array holds None or NaN."""
    if arr.dtype == object:
        return np.array(
            [v is None or (isinstance(v, float) and np.isnan(v)) for v in arr], dtype=bool
        )
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    return np.zeros(arr.shape[0], dtype=bool)


def category_codes(values):
    """The sorted categories and the code of each label; mixed types raise."""
    try:
        cats = np.unique(values)
    except TypeError:
        raise ValueError(
            "labels mix types that cannot be ordered (e.g. numbers and strings); use one type"
        ) from None
    return cats, np.searchsorted(cats, values)


def join_reasons(*parts):
    """The non-empty reasons joined by "; " ("" when there is none)."""
    return "; ".join(p for p in parts if p)

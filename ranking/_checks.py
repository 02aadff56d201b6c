"""Input checks shared by the public ranking functions: clear ValueErrors, never silent."""

from __future__ import annotations

import numpy as np


def as_P(P, *, name: str = "P") -> np.ndarray:
    """Return ``P`` as a C-contiguous float64 array of shape (n_contexts, N, N).

    A 2-D (N, N) matrix is treated as one context. Raises ValueError for a wrong shape,
    N < 2, values outside [0, 1], no contexts, or no comparison in any context (nothing to
    rank). NaN marks a pair that was not compared; the diagonal is ignored (set to NaN in
    the copy returned).

    A context with no comparison at all (an all-NaN block, e.g. every answer for that item
    unparsed) is accepted as long as another context has one: every public function handles
    it, the rankings with NaN scores for its candidates, the pooled statistics by skipping it
    and counting it (``ranking.pooled``).
    """
    arr = np.asarray(P, dtype=np.float64)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
        raise ValueError(
            f"{name} must have shape (n_contexts, N, N) or (N, N); got shape {np.shape(P)}"
        )
    n_contexts, n_items, _ = arr.shape
    if n_contexts == 0:
        raise ValueError(f"{name} has no contexts (shape {arr.shape})")
    if n_items < 2:
        raise ValueError(f"{name} needs at least 2 candidates per context; got N = {n_items}")
    arr = np.ascontiguousarray(arr).copy()
    idx = np.arange(n_items)
    arr[:, idx, idx] = np.nan
    finite = np.isfinite(arr)
    bad = finite & ((arr < 0.0) | (arr > 1.0))
    if bad.any():
        c, i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} holds probabilities, so values must lie in [0, 1]; "
            f"{name}[{c}, {i}, {j}] = {arr[c, i, j]!r} ({int(bad.sum())} value(s) out of range)"
        )
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values; use NaN for pairs not compared")
    if not finite.any():
        raise ValueError(
            f"{name} has no comparison at all (all {n_contexts} context(s) are all NaN); "
            "check that the judge's answers were parsed"
        )
    return arr

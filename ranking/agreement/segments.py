"""Correlations within segments: one vectorised pass for many small correlations.

Item level correlates within every context (96 contexts x 120 HANNA cells), the permutation
test and the system-level bootstrap correlate thousands of rows, Williams' matrix every pair
of judges: a scipy call costs ~200 us, so these kernels compute all of them at once from the
same formulas (checked against scipy in the tests). Ranks come from the one rank core,
``ranking.agreement.metrics._avg_ranks``; Kendall's pair counts from ``_kendall_pairs_loop`` for
short segments and Knight's O(n log n) count for long ones.
"""

from __future__ import annotations

import numpy as np

from ranking._core.jit import njit

from .metrics import _avg_ranks, _kendall_pairs_loop, _n_distinct

# Fewest valid items a pooled (overall / system) correlation is reported for: with two
# points every correlation is +-1, which says nothing.
MIN_POOLED = 3
# Fewest valid items per context at item level (comparative assessment ranks small sets).
MIN_PER_CONTEXT = 2

# Status codes of per-segment correlations.
_OK, _TOO_FEW, _CONST_JUDGE, _CONST_HUMAN = 0, 1, 2, 3
_STATUS_TEXT = {
    _TOO_FEW: f"fewer than {MIN_PER_CONTEXT} valid items",
    _CONST_JUDGE: "constant judge scores",
    _CONST_HUMAN: "constant human scores",
}

# Segments longer than this use the O(n log n) count (Knight 1966, as scipy does); shorter
# ones the direct pair loop, which is faster for the 5-20 candidates of a context.
_KENDALL_LOOP_MAX = 48


# ----------------------------------------------------------------------------- numba kernels


@njit
def _tied_pairs_sorted(v):  # pragma: no cover - compiled
    """Pairs of equal values in a sorted array."""
    total = 0
    run = 1
    for i in range(1, v.shape[0]):
        if v[i] == v[i - 1]:
            run += 1
        else:
            total += run * (run - 1) // 2
            run = 1
    return total + run * (run - 1) // 2


@njit
def _kendall_pairs_sorted(x, y):  # pragma: no cover - compiled
    """Knight's O(n log n) count: concordant minus discordant pairs and ties in x and y."""
    n = x.shape[0]
    oy = np.argsort(y, kind="mergesort")
    ox = np.argsort(x[oy], kind="mergesort")
    order = oy[ox]  # sorted by x, ties in x by y
    xs = x[order]
    src = y[order].copy()
    tx = _tied_pairs_sorted(xs)
    txy = 0
    run = 1
    for i in range(1, n):
        if xs[i] == xs[i - 1] and src[i] == src[i - 1]:
            run += 1
        else:
            txy += run * (run - 1) // 2
            run = 1
    txy += run * (run - 1) // 2
    # Discordant pairs = strict inversions of y in this order, counted by a bottom-up merge
    # sort (pairs tied in x are in ascending y, pairs tied in y are not inversions).
    dst = np.empty_like(src)
    swaps = 0
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if src[j] < src[i]:
                    dst[k] = src[j]
                    swaps += mid - i
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
    ty = _tied_pairs_sorted(src)
    n0 = n * (n - 1) // 2
    return n0 - tx - ty + txy - 2 * swaps, tx, ty


@njit
def _kendall_segments(x, y, starts, ends):  # pragma: no cover - compiled
    """Per segment [starts[s], ends[s]): concordant minus discordant pairs and ties in x, y."""
    n_seg = starts.shape[0]
    cmd = np.zeros(n_seg, dtype=np.int64)
    tx = np.zeros(n_seg, dtype=np.int64)
    ty = np.zeros(n_seg, dtype=np.int64)
    for s in range(n_seg):
        a = starts[s]
        b = ends[s]
        if b - a <= _KENDALL_LOOP_MAX:
            c, u, v = _kendall_pairs_loop(x, y, a, b)
        else:
            c, u, v = _kendall_pairs_sorted(x[a:b], y[a:b])
        cmd[s] = c
        tx[s] = u
        ty[s] = v
    return cmd, tx, ty


@njit
def _ranks_by_segment(v, starts, ends):  # pragma: no cover - compiled
    """Average ranks (1-based) of ``v`` within each segment [starts[s], ends[s])."""
    out = np.empty(v.shape[0])
    for s in range(starts.shape[0]):
        _avg_ranks(v[starts[s] : ends[s]], out[starts[s] : ends[s]])
    return out


@njit
def _distinct_by_segment(v, starts, ends):  # pragma: no cover - compiled
    """Number of distinct values of ``v`` in each non-empty segment (0 for an empty one)."""
    out = np.zeros(starts.shape[0], dtype=np.int64)
    for s in range(starts.shape[0]):
        if ends[s] > starts[s]:
            out[s] = _n_distinct(v[starts[s] : ends[s]], ends[s] - starts[s])
    return out


# ----------------------------------------------------------------------------- segment statistics


def _segment_ranks(v, seg, n_seg):
    """Midranks of ``v`` within each segment code of ``seg`` (as scipy's "average")."""
    order = np.argsort(seg, kind="stable")
    counts = np.bincount(seg, minlength=n_seg)
    ends = np.cumsum(counts)
    starts = ends - counts
    ranks = np.empty(v.shape[0])
    ranks[order] = _ranks_by_segment(np.ascontiguousarray(v[order]), starts, ends)
    return ranks


def _segment_pearson(x, y, seg, n_seg, counts):
    safe = np.maximum(counts, 1)
    xc = x - (np.bincount(seg, x, n_seg) / safe)[seg]
    yc = y - (np.bincount(seg, y, n_seg) / safe)[seg]
    sxx = np.bincount(seg, xc * xc, n_seg)
    syy = np.bincount(seg, yc * yc, n_seg)
    sxy = np.bincount(seg, xc * yc, n_seg)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    return np.clip(r, -1.0, 1.0)


def _segment_corr(x, y, seg, n_seg, method, variant="b", min_items=MIN_PER_CONTEXT):
    """Correlation of ``x`` and ``y`` within each segment (no NaN allowed).

    Returns ``(values, status)``; ``status`` is 0 where the value is defined, else one of
    too few items / constant judge / constant human (value NaN). Segments need not be
    contiguous.
    """
    seg = np.asarray(seg, dtype=np.int64)
    counts = np.bincount(seg, minlength=n_seg)
    status = np.zeros(n_seg, dtype=np.int64)
    values = np.full(n_seg, np.nan)
    order = np.argsort(seg, kind="stable")
    if x.shape[0]:
        xs, ys, ss = x[order], y[order], seg[order]
        nonempty = np.flatnonzero(counts)
        starts = np.searchsorted(ss, nonempty)
        const_x = np.zeros(n_seg, dtype=bool)
        const_y = np.zeros(n_seg, dtype=bool)
        const_x[nonempty] = np.maximum.reduceat(xs, starts) == np.minimum.reduceat(xs, starts)
        const_y[nonempty] = np.maximum.reduceat(ys, starts) == np.minimum.reduceat(ys, starts)
        status[const_y] = _CONST_HUMAN
        status[const_x] = _CONST_JUDGE
    status[counts < min_items] = _TOO_FEW
    ok = status == _OK
    if not ok.any():
        return values, status
    if method == "pearson":
        values = _segment_pearson(x, y, seg, n_seg, counts)
    elif method == "spearman":
        rx = _segment_ranks(x, seg, n_seg)
        ry = _segment_ranks(y, seg, n_seg)
        values = _segment_pearson(rx, ry, seg, n_seg, counts)
    else:
        ends = np.cumsum(counts)
        starts_all = ends - counts
        xs = np.ascontiguousarray(x[order])
        ys = np.ascontiguousarray(y[order])
        cmd, tx, ty = _kendall_segments(xs, ys, starts_all, ends)
        nn = counts.astype(np.float64)
        if variant == "b":
            n0 = nn * (nn - 1) / 2
            with np.errstate(invalid="ignore", divide="ignore"):
                values = cmd / np.sqrt((n0 - tx) * (n0 - ty))
        else:
            m = np.minimum(
                _distinct_by_segment(xs, starts_all, ends),
                _distinct_by_segment(ys, starts_all, ends),
            ).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                values = 2.0 * cmd / (nn**2 * (m - 1) / m)
        values = np.clip(values, -1.0, 1.0)
    values = np.where(ok, values, np.nan)
    return values, status


def _status_reason(status, what="contexts"):
    """Why segments were skipped, e.g. "2 of 4 contexts skipped (1 constant ...)"."""
    parts = []
    for code, text in _STATUS_TEXT.items():
        k = int((status == code).sum())
        if k:
            parts.append(f"{k} {text}")
    if not parts:
        return ""
    return f"{int((status != _OK).sum())} of {status.shape[0]} {what} skipped ({', '.join(parts)})"


def _rows_corr(X, Y, method, variant):
    """Correlation of each row pair of (n_rows, n) arrays; rows holding NaN give NaN."""
    n_rows, n = X.shape
    out = np.full(n_rows, np.nan)
    good = np.isfinite(X).all(axis=1) & np.isfinite(Y).all(axis=1)
    if not good.any():
        return out
    Xg, Yg = X[good], Y[good]
    seg = np.repeat(np.arange(Xg.shape[0]), n)
    vals, _ = _segment_corr(
        Xg.ravel(), Yg.ravel(), seg, Xg.shape[0], method, variant, min_items=MIN_POOLED
    )
    out[good] = vals
    return out


def _snap_ties(M, rtol=1e-9):
    """Make values equal that differ only by rounding, row by row.

    System means are sums of many non-integer scores; the same mean reached in a different
    summation order can differ in the last bits, which would silently break a tie that rank
    correlations must see. Values closer than ``rtol * max(1, max|row|)`` become the smallest
    of their run. NaN stays NaN.
    """
    A = np.atleast_2d(np.asarray(M, dtype=np.float64))
    order = np.argsort(A, axis=1, kind="stable")
    S = np.take_along_axis(A, order, axis=1)
    with np.errstate(invalid="ignore"):
        scale = np.maximum(1.0, np.nanmax(np.abs(A), axis=1, initial=0.0))
        close = np.diff(S, axis=1) <= rtol * scale[:, None]
    start = np.ones(S.shape, dtype=bool)
    start[:, 1:] = ~close
    pos = np.where(start, np.arange(S.shape[1])[None, :], 0)
    first = np.maximum.accumulate(pos, axis=1)
    snapped = np.take_along_axis(S, first, axis=1)
    out = np.empty_like(A)
    np.put_along_axis(out, order, snapped, axis=1)
    return out.reshape(np.shape(M))

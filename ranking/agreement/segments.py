"""Correlations within segments: one vectorised pass for many small correlations.

Item level correlates within every context (96 contexts x 120 HANNA cells), the permutation
test and the system-level bootstrap correlate thousands of rows, Williams' matrix every pair
of judges: a scipy call costs ~200 us, so these kernels compute all of them at once from the
same formulas (checked against scipy in the tests), vectorised in numpy. Ranks come from
runs of the values sorted within segments (midranks, exact); Kendall's pair counts are
compared directly in numpy, except for long segments in big calls: one compiled kernel,
Knight's O(n log n) count (issue 26: numba only where it pays).
"""

from __future__ import annotations

import numpy as np

from ranking._core.jit import njit

from .metrics import _run_bounds

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

# Kendall's pair counts: numpy compares the pairs directly while a call has at most
# _PAIRS_NUMPY of them; beyond that, segments longer than _KENDALL_LOOP_MAX go to the
# compiled O(n log n) count (Knight 1966, as scipy does). _PAIRS_BLOCK pairs per numpy block.
_KENDALL_LOOP_MAX = 48
_PAIRS_NUMPY = 1 << 20
_PAIRS_BLOCK = 1 << 20


# ----------------------------------------------------------------------------- counts


def _packed(starts, ends):
    """Positions of the segments [starts[s], ends[s]) one after the other, their segment
    codes, and where each segment starts in that packing."""
    lengths = np.asarray(ends, dtype=np.int64) - np.asarray(starts, dtype=np.int64)
    first = np.cumsum(lengths) - lengths
    seg = np.repeat(np.arange(lengths.shape[0]), lengths)
    idx = np.arange(seg.shape[0]) + np.repeat(np.asarray(starts) - first, lengths)
    return idx, seg, first, lengths


def _runs(seg, *cols):
    """Run starts of equal (seg, *cols) in arrays sorted by them."""
    new = np.ones(seg.shape[0], dtype=bool)
    new[1:] = seg[1:] != seg[:-1]
    for c in cols:
        new[1:] |= c[1:] != c[:-1]
    return new


def _sign(d):
    return (d > 0.0).astype(np.int8) - (d < 0.0).astype(np.int8)


def _kendall_pairs_numpy(x, y, starts, lengths, which, out):
    """The direct pair count of the segments ``which``, vectorised per segment length:
    (concordant - discordant, pairs tied in x, pairs tied in y) into out[:, s]."""
    sizes = lengths[which]
    for n in np.unique(sizes):
        if n < 2:
            continue
        group = which[sizes == n]
        iu, ju = np.triu_indices(int(n), k=1)
        step = max(1, _PAIRS_BLOCK // iu.shape[0])
        for g0 in range(0, group.shape[0], step):
            segs = group[g0 : g0 + step]
            base = starts[segs][:, None]
            dx = x[base + iu] - x[base + ju]
            dy = y[base + iu] - y[base + ju]
            out[0, segs] = (_sign(dx) * _sign(dy)).sum(axis=1, dtype=np.int64)
            out[1, segs] = (dx == 0.0).sum(axis=1)
            out[2, segs] = (dy == 0.0).sum(axis=1)


@njit
def _kendall_long(x, y, starts, ends, which, out, idx, tmp):  # pragma: no cover
    """Knight's O(n log n) count (1966, as scipy's) of the segments ``which``: (concordant -
    discordant, pairs tied in x, pairs tied in y) into out[:, s]. ``idx``, ``tmp`` (int64)
    are scratch of the longest segment's length; nothing is allocated.

    Two stable bottom-up merge sorts of ``idx``: first by (x, y), counting the pairs tied in
    x and in (x, y); then by y, counting the pairs tied in y and the strict inversions of y
    it removes, which are the discordant pairs (pairs tied in x stand in ascending y, pairs
    tied in y are no inversions). One loop serves both sorts (``key`` is x, then y), so the
    kernel compiles in one piece: no inlined helpers (~35 % less compile time)."""
    for w in range(which.shape[0]):
        s = which[w]
        a = starts[s]
        n = ends[s] - a
        xs = x[a : a + n]
        ys = y[a : a + n]
        for k in range(n):
            idx[k] = k
        tx = txy = 0
        for sort in range(2):
            key = xs if sort == 0 else ys
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
                        p = idx[i]
                        q = idx[j]
                        if key[q] < key[p] or (key[q] == key[p] and ys[q] < ys[p]):
                            tmp[k] = q
                            swaps += mid - i
                            j += 1
                        else:
                            tmp[k] = p
                            i += 1
                        k += 1
                    while i < mid:
                        tmp[k] = idx[i]
                        i += 1
                        k += 1
                    while j < hi:
                        tmp[k] = idx[j]
                        j += 1
                        k += 1
                for k in range(n):
                    idx[k] = tmp[k]
                width *= 2
            # pairs tied in the key, and in (key, y), from the runs of the sorted order
            t_key = 0
            t_both = 0
            run_key = 1
            run_both = 1
            for k in range(1, n + 1):
                same = k < n and key[idx[k]] == key[idx[k - 1]]
                if same:
                    run_key += 1
                else:
                    t_key += run_key * (run_key - 1) // 2
                    run_key = 1
                if same and ys[idx[k]] == ys[idx[k - 1]]:
                    run_both += 1
                else:
                    t_both += run_both * (run_both - 1) // 2
                    run_both = 1
            if sort == 0:
                tx = t_key
                txy = t_both
        # after the second sort: t_key = pairs tied in y, swaps = discordant pairs
        out[0, s] = n * (n - 1) // 2 - tx - t_key + txy - 2 * swaps
        out[1, s] = tx
        out[2, s] = t_key


def _kendall_segments(x, y, starts, ends):
    """Per segment [starts[s], ends[s]): concordant minus discordant pairs and ties in x, y.

    Numpy counts the pairs directly while that is little work (the contexts of the item
    level, a page's first visit); segments longer than ``_KENDALL_LOOP_MAX`` in a call with
    more than ``_PAIRS_NUMPY`` pairs (thousands of pooled items, e.g. Williams' matrices of
    a big benchmark) go to the one compiled kernel, Knight's O(n log n) count, which is
    10x and more faster there.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(ends, dtype=np.int64) - starts
    out = np.zeros((3, starts.shape[0]), dtype=np.int64)
    every = np.arange(starts.shape[0])
    long = lengths > _KENDALL_LOOP_MAX
    if (lengths * (lengths - 1) // 2).sum() <= _PAIRS_NUMPY or not long.any():
        _kendall_pairs_numpy(x, y, starts, lengths, every, out)
        return out[0], out[1], out[2]
    _kendall_pairs_numpy(x, y, starts, lengths, every[~long], out)
    m = int(lengths.max())
    idx, tmp = np.empty(m, np.int64), np.empty(m, np.int64)
    _kendall_long(x, y, starts, starts + lengths, every[long], out, idx, tmp)
    return out[0], out[1], out[2]


def _distinct_by_segment(v, starts, ends):
    """Number of distinct values of ``v`` in each segment (0 for an empty one)."""
    idx, seg, _, lengths = _packed(starts, ends)
    vs = v[idx]
    o = np.lexsort((vs, seg))
    new = _runs(seg, vs[o])
    return np.bincount(seg[new], minlength=lengths.shape[0]).astype(np.int64)


# ----------------------------------------------------------------------------- segment statistics


def _segment_ranks(v, seg, n_seg):
    """Midranks of ``v`` within each segment code of ``seg`` (as scipy's "average")."""
    order = np.lexsort((v, seg))
    ss = seg[order]
    first, last = _run_bounds(_runs(ss, v[order]))
    counts = np.bincount(seg, minlength=n_seg)
    start = (np.cumsum(counts) - counts)[ss]
    ranks = np.empty(v.shape[0])
    ranks[order] = 0.5 * (first + last) - start + 1.0
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
    rows = np.arange(A.shape[0])[:, None]
    order = np.argsort(A, axis=1, kind="stable")
    S = A[rows, order]
    with np.errstate(invalid="ignore"):
        scale = np.maximum(1.0, np.nanmax(np.abs(A), axis=1, initial=0.0))
        close = np.diff(S, axis=1) <= rtol * scale[:, None]
    pos = np.arange(S.shape[1]) * np.ones_like(order)
    pos[:, 1:][close] = 0
    first = np.maximum.accumulate(pos, axis=1)
    out = np.empty_like(A)
    out[rows, order] = S[rows, first]
    return out.reshape(np.shape(M))

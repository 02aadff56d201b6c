"""Agreement of judges with humans, and reliability statistics (numpy/scipy only).

Correlation of judge scores with human scores at three levels (item within each context and
averaged, system means, all items pooled) with context-bootstrap intervals; inter-annotator
agreement (Krippendorff's alpha, share of items where all raters agree, Shrout & Fleiss ICCs,
Cohen's and Fleiss' kappa); the human baseline (each annotator against the mean of the others);
judge self-consistency across samples; significance (Welch, Williams, Benjamini-Hochberg, a
seeded permutation test); the shift between two paired sets of scores (paired t) and the
stability of the rankings several sets of scores induce (Kendall between every two sets);
the pairwise order a ranking's scores induce (to measure a ranking by pairwise accuracy).

Conventions: scores are 1-D float arrays aligned with ``contexts`` / ``systems`` label arrays;
rating matrices are (n_items, n_raters) with NaN for a missing or unparsed rating. NaN judge
outputs are left out and counted, never imputed. Shape problems raise ``ValueError``; data
that leave a statistic undefined (constant scores, too few valid items) give NaN together with
a ``reason`` string.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ranking._numba import njit
from ranking.metrics import _kendall_pairs_loop, kendall

__all__ = [
    "CorrelationResult",
    "ICCResult",
    "HumanBaselineResult",
    "SelfConsistencyResult",
    "WelchResult",
    "PermutationResult",
    "WilliamsMatrixResult",
    "PairedShiftResult",
    "correlation",
    "icc",
    "krippendorff_alpha",
    "share_all_agree",
    "cohen_kappa",
    "fleiss_kappa",
    "human_baseline",
    "self_consistency",
    "welch_t",
    "williams_test",
    "bh_adjust",
    "permutation_test",
    "williams_matrix",
    "paired_shift",
    "kendall_matrix",
    "order_matrix",
]

LEVELS = ("item", "system", "overall")
METHODS = ("spearman", "kendall", "pearson")
KENDALL_VARIANTS = ("b", "c")
ICC_KINDS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")
KAPPA_WEIGHTS = (None, "linear", "quadratic")

# Fewest valid items a pooled (overall / system) correlation is reported for: with two
# points every correlation is +-1, which says nothing.
MIN_POOLED = 3
# Fewest valid items per context at item level (comparative assessment ranks small sets).
MIN_PER_CONTEXT = 2
# The Kendall bootstrap keeps (n_units x n_units) pair-count blocks in memory.
MAX_KENDALL_BOOT_UNITS = 3000

# Status codes of per-segment correlations.
_OK, _TOO_FEW, _CONST_JUDGE, _CONST_HUMAN = 0, 1, 2, 3
_STATUS_TEXT = {
    _TOO_FEW: f"fewer than {MIN_PER_CONTEXT} valid items",
    _CONST_JUDGE: "constant judge scores",
    _CONST_HUMAN: "constant human scores",
}


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class CorrelationResult:
    """Judge-human correlation at one level.

    ``value`` is the correlation (item level: the mean of per-context correlations);
    ``lower``/``upper`` the bootstrap percentile interval (NaN when ``n_boot`` = 0);
    ``n_used`` items that entered the statistic; ``n_dropped_nan`` items left out because the
    judge or human score is NaN; ``per_context`` the per-context correlations at item level
    (NaN for skipped contexts, in the order of ``context_labels``); ``reason`` says why the
    value is NaN or which contexts / bootstrap replicates were left out ("" when nothing was).
    ``n_units`` counts what was correlated (contexts used, systems, or items) and
    ``n_skipped`` the contexts (item level) or systems skipped.
    """

    value: float
    lower: float
    upper: float
    n_used: int
    n_dropped_nan: int
    per_context: np.ndarray | None
    reason: str
    level: str
    method: str
    pvalue: float = np.nan
    n_units: int = 0
    n_skipped: int = 0
    context_labels: np.ndarray | None = None
    n_boot: int = 0


@dataclass(frozen=True)
class ICCResult:
    """An intraclass correlation (Shrout & Fleiss 1979) with its F test and interval."""

    value: float
    lower: float
    upper: float
    F: float
    df1: float
    df2: float
    p: float
    kind: str = "ICC2k"
    n_items: int = 0
    n_raters: int = 0
    n_dropped: int = 0
    reason: str = ""


@dataclass(frozen=True, eq=False)
class HumanBaselineResult:
    """Each annotator against the mean of the other annotators.

    ``values[a]`` is annotator ``a``'s correlation, ``mean`` their mean over annotators with
    a defined value, ``results[a]`` the full :class:`CorrelationResult`.
    """

    values: np.ndarray
    mean: float
    results: tuple
    reason: str = ""


@dataclass(frozen=True)
class SelfConsistencyResult:
    """Agreement of one judge with itself across K samples (tries) per item.

    ``icc`` is ICC2k across samples on the items with all K samples parsed;
    ``share_identical`` the share of items (with at least 2 parsed samples) whose parsed
    samples are all equal. ``n_dropped_items`` items were left out of the ICC because a
    sample was NaN; ``n_nan`` counts NaN samples.
    """

    icc: ICCResult
    share_identical: float
    n_items: int
    n_samples: int
    n_items_icc: int
    n_items_identical: int
    n_dropped_items: int
    n_nan: int
    reason: str = ""


@dataclass(frozen=True)
class WelchResult:
    """Welch's two-sample t-test with the group summaries (std with ddof=1)."""

    t: float
    p: float
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
    ``lower``/``upper`` the ``level_ci`` t interval, ``pvalue`` the two-sided p-value of the
    paired t-test; ``n_dropped_nan`` pairs were left out; ``reason`` says why the values are
    NaN ("" when they are not).
    """

    shift: float
    lower: float
    upper: float
    pvalue: float
    n_used: int
    n_dropped_nan: int
    reason: str = ""


@dataclass(frozen=True)
class PermutationResult:
    """Permutation test of corr(judge_a, human) - corr(judge_b, human)."""

    diff: float
    pvalue: float
    r_a: float
    r_b: float
    n_used: int
    n_dropped_nan: int
    n_permutations: int
    reason: str = ""


@dataclass(frozen=True, eq=False)
class WilliamsMatrixResult:
    """Williams tests between every pair of judges against the same human scores.

    ``r_human[j]`` is judge j's correlation with the humans (on all items judge j has);
    for a pair (j, k) the test uses the items both judges and the humans have:
    ``r_human_pair[j, k]`` is judge j's correlation with the humans on those items,
    ``r_between`` the judge-judge correlation, ``t[j, k]`` the statistic (positive when
    judge j agrees more with humans; ``t[k, j] = -t[j, k]``), ``p`` the two-sided p-value,
    ``p_adjusted`` the Benjamini-Hochberg adjusted p over the family of all pairs, ``n`` the
    items (or systems) used, ``reasons[(j, k)]`` why a pair is NaN. Diagonals are NaN.
    """

    r_human: np.ndarray
    r_human_pair: np.ndarray
    r_between: np.ndarray
    t: np.ndarray
    p: np.ndarray
    p_adjusted: np.ndarray
    n: np.ndarray
    reasons: dict


# ----------------------------------------------------------------------------- input checks


def _check_choice(value, choices, name):
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}; got {value!r}")


def _as_scores(x, name, n=None):
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric (NaN for missing); {err}") from None
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


def _as_labels(labels, n, name):
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


def _codes(labels):
    """Integer codes 0..n_groups-1 and the sorted unique labels."""
    try:
        uniq, inv = np.unique(labels, return_inverse=True)
    except TypeError:
        # Mixed label types (e.g. str and int) do not sort; compare them as text.
        uniq, inv = np.unique(labels.astype(str), return_inverse=True)
    return inv.astype(np.int64), uniq


def _as_matrix(ratings, name="ratings"):
    try:
        arr = np.asarray(ratings, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric (NaN for missing); {err}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (n_items, n_raters); got {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values; use NaN for missing ratings")
    return arr


def _rng(random_state):
    return np.random.default_rng(random_state)


def _check_ci(level_ci):
    if not (0.0 < float(level_ci) < 1.0):
        raise ValueError(f"level_ci must lie strictly between 0 and 1; got {level_ci!r}")
    return float(level_ci)


# ----------------------------------------------------------------------------- numba kernels


# Segments longer than this use the O(n log n) count (Knight 1966, as scipy does); shorter
# ones the direct pair loop, which is faster for the 5-20 candidates of a context.
_KENDALL_LOOP_MAX = 48


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
def _kendall_blocks(x, y, codes, n_units):  # pragma: no cover - compiled
    """Sign-product sums between resampling units.

    S[u, v] = sum over ordered pairs (i in u, j in v) of sign(x_i - x_j) sign(y_i - y_j);
    symmetric, (n_units, n_units).
    """
    n = x.shape[0]
    S = np.zeros((n_units, n_units))
    for i in range(n):
        ci = codes[i]
        xi = x[i]
        yi = y[i]
        # Branch-free accumulation of the pairs j > i into row ci; symmetrised below.
        for j in range(i + 1, n):
            dx = xi - x[j]
            dy = yi - y[j]
            S[ci, codes[j]] += ((dx > 0.0) - (dx < 0.0)) * ((dy > 0.0) - (dy < 0.0))
    return S + S.T


# ----------------------------------------------------------------------------- segment statistics


def _segment_ranks(v, seg):
    """Midranks of ``v`` within each segment and the number of distinct values per segment."""
    n = v.shape[0]
    order = np.lexsort((v, seg))
    vs, ss = v[order], seg[order]
    pos = np.arange(n)
    new_seg = np.ones(n, dtype=bool)
    new_seg[1:] = ss[1:] != ss[:-1]
    seg_start = np.maximum.accumulate(np.where(new_seg, pos, 0))
    new_grp = new_seg.copy()
    new_grp[1:] |= vs[1:] != vs[:-1]
    grp_id = np.cumsum(new_grp) - 1
    grp_first = pos[new_grp]
    grp_last = np.append(grp_first[1:], n) - 1
    mid = (grp_first + grp_last) / 2.0
    ranks = np.empty(n)
    ranks[order] = mid[grp_id] - seg_start + 1.0
    n_distinct = np.bincount(ss[new_grp], minlength=int(seg.max()) + 1 if n else 0)
    return ranks, n_distinct


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
    too few items / constant judge / constant human (value NaN). Checked against scipy in
    tests: this exists because a scipy call costs ~200 us and item level needs one call per
    context (96 contexts x 120 HANNA cells).
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
        rx, _ = _segment_ranks(x, seg)
        ry, _ = _segment_ranks(y, seg)
        values = _segment_pearson(rx, ry, seg, n_seg, counts)
    else:
        ends = np.cumsum(counts)
        starts_all = ends - counts
        cmd, tx, ty = _kendall_segments(
            np.ascontiguousarray(x[order]), np.ascontiguousarray(y[order]), starts_all, ends
        )
        nn = counts.astype(np.float64)
        if variant == "b":
            n0 = nn * (nn - 1) / 2
            with np.errstate(invalid="ignore", divide="ignore"):
                values = cmd / np.sqrt((n0 - tx) * (n0 - ty))
        else:
            _, ux = _segment_ranks(x, seg)
            _, uy = _segment_ranks(y, seg)
            m = np.minimum(_pad(ux, n_seg), _pad(uy, n_seg)).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                values = 2.0 * cmd / (nn**2 * (m - 1) / m)
        values = np.clip(values, -1.0, 1.0)
    values = np.where(ok, values, np.nan)
    return values, status


def _pad(a, n):
    out = np.zeros(n, dtype=a.dtype)
    out[: min(n, a.shape[0])] = a[:n]
    return out


def _status_reason(status, what="contexts"):
    parts = []
    for code, text in _STATUS_TEXT.items():
        k = int((status == code).sum())
        if k:
            parts.append(f"{k} {text}")
    if not parts:
        return ""
    return f"{int((status != _OK).sum())} of {status.shape[0]} {what} skipped ({', '.join(parts)})"


# ----------------------------------------------------------------------------- point estimates


def _scipy_corr(x, y, method, variant):
    """scipy's value and p-value (the reference numbers users see)."""
    if method == "spearman":
        res = stats.spearmanr(x, y)
    elif method == "kendall":
        res = stats.kendalltau(x, y, variant=variant)
    else:
        res = stats.pearsonr(x, y)
    return float(res.statistic), float(res.pvalue)


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


def _pooled_problem(x, y, what):
    if x.shape[0] < MIN_POOLED:
        return f"fewer than {MIN_POOLED} valid {what} ({x.shape[0]})"
    if np.all(x == x[0]):
        return f"judge scores are constant over the valid {what}; correlation undefined"
    if np.all(y == y[0]):
        return f"human scores are constant over the valid {what}; correlation undefined"
    return ""


# ----------------------------------------------------------------------------- bootstrap


def _unit_weights(rng, n_boot, n_units):
    """Multinomial resampling counts of ``n_units`` units, shape (n_boot, n_units)."""
    draws = rng.integers(0, n_units, size=(n_boot, n_units))
    flat = draws + (np.arange(n_boot) * n_units)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n_units).reshape(n_boot, n_units)


@functools.lru_cache(maxsize=8)
def _seeded_weights(seed, n_boot, n_units):
    # A table asks for the same (seed, n_boot, n_units) in every cell; the draws are a pure
    # function of them, so they are made once (read-only, float for the matrix products).
    W = _unit_weights(np.random.default_rng(seed), n_boot, n_units).astype(np.float64)
    W.flags.writeable = False
    return W


def _boot_weights(random_state, rng, n_boot, n_units):
    """Resampling counts for one bootstrap: cached when seeded by a plain integer."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return _seeded_weights(int(random_state), n_boot, n_units)
    return _unit_weights(rng, n_boot, n_units).astype(np.float64)


# OpenBLAS runs a product on one thread below about 65536 * 4 multiply-adds; above it wakes
# its thread pool, which on a busy machine costs far more than these small products (seen:
# 1 ms on one thread, 20-120 ms with the pool). Row chunks below the threshold keep every
# bootstrap product single-threaded and predictable.
_BLAS_SINGLE_THREAD_MACS = 262_144


def _matmul_rows(W, M):
    """``W @ M`` in row chunks small enough for single-threaded BLAS."""
    n_rows = W.shape[0]
    inner, n_cols = M.shape
    step = max(1, _BLAS_SINGLE_THREAD_MACS // max(1, inner * n_cols))
    if step >= n_rows:
        return W @ M
    out = np.empty((n_rows, n_cols))
    for s in range(0, n_rows, step):
        np.matmul(W[s : s + step], M, out=out[s : s + step])
    return out


def _weighted_pearson_rows(x, y, w):
    """Pearson of (n_boot, n) rows ``x``, ``y`` with frequency weights ``w`` (same shape)."""
    N = w.sum(axis=1)
    mx = (w * x).sum(axis=1) / N
    my = (w * y).sum(axis=1) / N
    xc = x - mx[:, None]
    yc = y - my[:, None]
    sxy = (w * xc * yc).sum(axis=1)
    sxx = (w * xc * xc).sum(axis=1)
    syy = (w * yc * yc).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    return np.clip(r, -1.0, 1.0)


def _weighted_midranks(v, w):
    """Midranks of ``v`` in the sample where item i appears ``w[b, i]`` times, per row b."""
    order = np.argsort(v, kind="stable")
    vs = v[order]
    new_grp = np.ones(v.shape[0], dtype=bool)
    new_grp[1:] = vs[1:] != vs[:-1]
    grp_id = np.cumsum(new_grp) - 1
    starts = np.flatnonzero(new_grp)
    G = np.add.reduceat(w[:, order], starts, axis=1)
    before = np.cumsum(G, axis=1) - G
    mid = before + (G + 1.0) / 2.0
    ranks = np.empty_like(w, dtype=np.float64)
    ranks[:, order] = mid[:, grp_id]
    return ranks


def _boot_pooled(x, y, units, n_units, method, variant, W):
    """Correlation of every bootstrap replicate of the pooled items.

    Replicate b contains each item of unit u ``W[b, u]`` times; values equal scipy's on the
    literally resampled arrays (checked in tests).
    """
    W = np.asarray(W, dtype=np.float64)
    if method == "pearson":
        xc = x - x.mean()
        yc = y - y.mean()
        cols = np.stack([np.ones_like(xc), xc, yc, xc * xc, yc * yc, xc * yc], axis=1)
        sums = np.zeros((n_units, 6))
        np.add.at(sums, units, cols)
        N, Sx, Sy, Sxx, Syy, Sxy = _matmul_rows(W, sums).T
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (Sxy - Sx * Sy / N) / np.sqrt((Sxx - Sx * Sx / N) * (Syy - Sy * Sy / N))
        return np.clip(r, -1.0, 1.0)
    if method == "spearman":
        w = W[:, units]
        return _weighted_pearson_rows(_weighted_midranks(x, w), _weighted_midranks(y, w), w)
    if n_units > MAX_KENDALL_BOOT_UNITS:
        raise ValueError(
            f"the Kendall bootstrap resamples {n_units} units, more than "
            f"{MAX_KENDALL_BOOT_UNITS}; pass contexts= so whole contexts are resampled, "
            "or use n_boot=0"
        )
    S = _kendall_blocks(
        np.ascontiguousarray(x), np.ascontiguousarray(y), units.astype(np.int64), n_units
    )
    sizes = np.bincount(units, minlength=n_units).astype(np.float64)
    mx, sx = _tie_terms(x, units, n_units)
    my, sy = _tie_terms(y, units, n_units)
    # One matrix product for everything.
    WB = _matmul_rows(W, np.hstack([S, mx, my, sizes[:, None]]))
    N = WB[:, -1]
    cmd = 0.5 * (WB[:, :n_units] * W).sum(axis=1)
    a, b = n_units, n_units + mx.shape[1]
    n0 = N * (N - 1) / 2
    n1 = (_tied_pairs(W, WB[:, a:b], sx) - N) / 2
    n2 = (_tied_pairs(W, WB[:, b : b + my.shape[1]], sy) - N) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            r = cmd / np.sqrt((n0 - n1) * (n0 - n2))
        else:
            present = W > 0
            m = np.minimum(
                _distinct_present(x, units, n_units, present),
                _distinct_present(y, units, n_units, present),
            ).astype(np.float64)
            r = 2.0 * cmd / (N**2 * (m - 1) / m)
    return np.clip(r, -1.0, 1.0)


def _tie_terms(v, units, n_units):
    """What the bootstrap multiplies by to count tied pairs of ``v`` in every replicate.

    With A[u, r] the items of unit u holding repeated value r, the ordered tied pairs (self-
    pairs included) of a replicate w are ||w A||^2 + (w*w) . singles, singles[u] counting
    the items of u whose value no other item has: cheap when scores take few values.
    With more repeated values than units, the (n_units, n_units) block A A' + diag(singles)
    is the smaller matrix; then the count is w' B w. Returns (matrix, singles or None).
    """
    A, singles = _value_counts(v, units, n_units)
    if A.shape[1] > n_units:
        return _matmul_rows(A, A.T) + np.diag(singles), None
    return A, singles


def _tied_pairs(W, WM, singles):
    """Ordered tied pairs per replicate from ``WM = W @ matrix`` of :func:`_tie_terms`."""
    if singles is None:
        return (WM * W).sum(axis=1)
    return (WM * WM).sum(axis=1) + (W * W) @ singles


def _value_counts(v, units, n_units):
    """Counts per unit of each value held by 2+ items, and of single-item values.

    Returns ``(A, singles)``: A is (n_units, n_repeated_values), singles (n_units,).
    """
    _, inv, cnt = np.unique(v, return_inverse=True, return_counts=True)
    repeated = cnt[inv] > 1
    singles = np.bincount(units[~repeated], minlength=n_units).astype(np.float64)
    _, rinv = np.unique(inv[repeated], return_inverse=True)
    n_r = int(rinv.max()) + 1 if rinv.size else 0
    A = np.bincount(units[repeated] * n_r + rinv, minlength=n_units * n_r)
    return A.reshape(n_units, n_r).astype(np.float64), singles


def _distinct_present(v, units, n_units, present):
    """Number of distinct values of ``v`` among the units present in each replicate."""
    _, inv = np.unique(v, return_inverse=True)
    has = np.zeros((n_units, int(inv.max()) + 1))
    has[units, inv] = 1.0
    return (_matmul_rows(present.astype(np.float64), has) > 0).sum(axis=1)


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


def _percentile_interval(reps, level_ci):
    finite = reps[np.isfinite(reps)]
    n_bad = reps.shape[0] - finite.shape[0]
    note = ""
    if n_bad:
        note = f"{n_bad} of {reps.shape[0]} bootstrap replicates undefined and left out"
    if finite.shape[0] == 0:
        return np.nan, np.nan, note
    a = (1.0 - level_ci) / 2.0
    lo, hi = np.quantile(finite, [a, 1.0 - a])
    return float(lo), float(hi), note


def _join(*parts):
    return "; ".join(p for p in parts if p)


# ----------------------------------------------------------------------------- correlation


def correlation(
    judge,
    human,
    level="item",
    method="spearman",
    variant="b",
    contexts=None,
    systems=None,
    n_boot=0,
    level_ci=0.95,
    random_state=None,
):
    """Correlation of judge scores with human scores at item, system or overall level.

    Parameters
    ----------
    judge, human : array_like of shape (n_items,)
        Scores aligned item by item. NaN marks an unparsed judge output (or a missing human
        score); such items are left out and counted in ``n_dropped_nan``, never imputed.
    level : {"item", "system", "overall"}
        ``"item"``: the correlation within each context, averaged over contexts (the
        "summary-level" of comparative assessment); contexts with fewer than 2 valid items
        or constant scores are skipped and counted in ``reason``. ``"system"``: per-system
        means of the valid items, then one correlation over systems. ``"overall"``: all
        valid items pooled.
    method : {"spearman", "kendall", "pearson"}
    variant : {"b", "c"}
        Kendall's tau-b or tau-c (ignored by the other methods).
    contexts : array_like of shape (n_items,), optional
        Context label of each item. Required at item level; elsewhere it defines the units
        the bootstrap resamples (each item is its own unit when omitted).
    systems : array_like of shape (n_items,), optional
        System label of each item; required at system level.
    n_boot : int
        Bootstrap replicates (0: no interval). Replicates resample whole contexts with
        replacement; replicates where the statistic is undefined are left out and counted.
    level_ci : float
        Coverage of the percentile interval (which, near +-1 or with few systems, need not
        contain the estimate).
    random_state : None, int or numpy Generator
        Seed of the bootstrap.

    Returns
    -------
    CorrelationResult
        ``value`` NaN with a ``reason`` when fewer than 3 valid items (or systems) remain,
        when either side is constant, or when every judge score is NaN. Point values are
        scipy's (overall, system); item-level per-context values use vectorised twins of
        scipy's formulas (checked against scipy in the tests). System means that differ only
        by floating-point rounding count as tied.

    Raises
    ------
    ValueError
        Unknown level/method/variant, arrays that are not 1-D or differ in length, infinite
        scores, missing ``contexts`` at item level or ``systems`` at system level.
    """
    _check_choice(level, LEVELS, "level")
    _check_choice(method, METHODS, "method")
    _check_choice(variant, KENDALL_VARIANTS, "variant")
    level_ci = _check_ci(level_ci)
    if int(n_boot) != n_boot or n_boot < 0:
        raise ValueError(f"n_boot must be a non-negative integer; got {n_boot!r}")
    n_boot = int(n_boot)
    j = _as_scores(judge, "judge")
    h = _as_scores(human, "human", n=j.shape[0])
    n = j.shape[0]
    if n == 0:
        raise ValueError("judge and human scores are empty")
    if contexts is not None:
        contexts = _as_labels(contexts, n, "contexts")
    if systems is not None:
        systems = _as_labels(systems, n, "systems")
    if level == "item" and contexts is None:
        raise ValueError("level='item' correlates within each context: pass contexts=")
    if level == "system" and systems is None:
        raise ValueError("level='system' averages per system: pass systems=")

    valid = np.isfinite(j) & np.isfinite(h)
    n_dropped = int(n - valid.sum())
    common = dict(level=level, method=method, n_boot=n_boot)

    def nan_result(reason, n_used=0, **extra):
        return CorrelationResult(
            np.nan, np.nan, np.nan, n_used, n_dropped, None, reason, **common, **extra
        )

    if not np.isfinite(j).any():
        return nan_result(f"all {n} judge scores are NaN (unparsed)")
    if not np.isfinite(h).any():
        return nan_result(f"all {n} human scores are NaN")

    rng = _rng(random_state) if n_boot else None
    if level == "item":
        return _item_level(
            j,
            h,
            valid,
            contexts,
            method,
            variant,
            n_boot,
            level_ci,
            random_state,
            rng,
            n_dropped,
            common,
        )

    x, y = j[valid], h[valid]
    units = n_units = None
    if n_boot:
        if contexts is not None:
            units, _ = _codes(contexts[valid])
        else:
            units = np.arange(x.shape[0], dtype=np.int64)
        n_units = int(units.max()) + 1 if units.shape[0] else 0

    if level == "overall":
        problem = _pooled_problem(x, y, "items")
        if problem:
            return nan_result(problem, n_used=int(x.shape[0]))
        value, pvalue = _scipy_corr(x, y, method, variant)
        lower = upper = np.nan
        note = ""
        if n_boot:
            reps = _boot_pooled(
                x,
                y,
                units,
                n_units,
                method,
                variant,
                _boot_weights(random_state, rng, n_boot, n_units),
            )
            lower, upper, note = _percentile_interval(reps, level_ci)
        return CorrelationResult(
            value,
            lower,
            upper,
            int(x.shape[0]),
            n_dropped,
            None,
            note,
            pvalue=pvalue,
            n_units=int(x.shape[0]),
            **common,
        )

    # system level
    sys_codes, sys_labels = _codes(systems[valid])
    n_sys = sys_labels.shape[0]
    counts = np.bincount(sys_codes, minlength=n_sys).astype(np.float64)
    mx = _snap_ties(np.bincount(sys_codes, x, n_sys) / counts)
    my = _snap_ties(np.bincount(sys_codes, y, n_sys) / counts)
    n_all_sys = _codes(systems)[1].shape[0]
    skipped = n_all_sys - n_sys
    skip_note = f"{skipped} system(s) with no valid item left out" if skipped else ""
    problem = _pooled_problem(mx, my, "systems")
    if problem:
        return nan_result(_join(problem, skip_note), n_used=int(x.shape[0]), n_skipped=skipped)
    value, pvalue = _scipy_corr(mx, my, method, variant)
    lower = upper = np.nan
    note = ""
    if n_boot:
        W = _boot_weights(random_state, rng, n_boot, n_units)
        cell = units * n_sys + sys_codes
        size = n_units * n_sys
        Sx = np.bincount(cell, x, size).reshape(n_units, n_sys)
        Sy = np.bincount(cell, y, size).reshape(n_units, n_sys)
        C = np.bincount(cell, minlength=size).reshape(n_units, n_sys).astype(np.float64)
        WS = _matmul_rows(W, np.hstack([Sx, Sy, C]))
        with np.errstate(invalid="ignore", divide="ignore"):
            BX = _snap_ties(WS[:, :n_sys] / WS[:, 2 * n_sys :])
            BY = _snap_ties(WS[:, n_sys : 2 * n_sys] / WS[:, 2 * n_sys :])
        # A replicate that lost a whole system is undefined rather than a smaller sample.
        reps = _rows_corr(BX, BY, method, variant)
        lower, upper, note = _percentile_interval(reps, level_ci)
    return CorrelationResult(
        value,
        lower,
        upper,
        int(x.shape[0]),
        n_dropped,
        None,
        _join(skip_note, note),
        pvalue=pvalue,
        n_units=n_sys,
        n_skipped=skipped,
        **common,
    )


def _item_level(
    j, h, valid, contexts, method, variant, n_boot, level_ci, random_state, rng, n_dropped, common
):
    codes_all, labels = _codes(contexts)
    n_ctx = labels.shape[0]
    seg = codes_all[valid]
    per_ctx, status = _segment_corr(j[valid], h[valid], seg, n_ctx, method, variant)
    ok = status == _OK
    reason = _status_reason(status)
    n_used = int(np.isin(seg, np.flatnonzero(ok)).sum())
    extra = dict(
        per_context=per_ctx,
        context_labels=labels,
        n_units=int(ok.sum()),
        n_skipped=int((~ok).sum()),
        **common,
    )
    if not ok.any():
        return CorrelationResult(
            np.nan,
            np.nan,
            np.nan,
            0,
            n_dropped,
            reason=_join("no context has 2 or more valid, non-constant scores", reason),
            **extra,
        )
    used = per_ctx[ok]
    value = float(used.mean())
    lower = upper = np.nan
    note = ""
    if n_boot:
        # Resampling contexts and averaging their correlations: the per-context values do
        # not change, so only their multiplicities are drawn.
        W = _boot_weights(random_state, rng, n_boot, used.shape[0])
        reps = _matmul_rows(W, used[:, None])[:, 0] / W.sum(axis=1)
        lower, upper, note = _percentile_interval(reps, level_ci)
    return CorrelationResult(
        value, lower, upper, n_used, n_dropped, reason=_join(reason, note), **extra
    )


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


def icc(ratings, kind="ICC2k", level_ci=0.95):
    """Intraclass correlation of Shrout & Fleiss (1979) with its F test and interval.

    Parameters
    ----------
    ratings : array_like of shape (n_items, n_raters)
        Every rater rates every item; items with a NaN rating are left out (counted in
        ``n_dropped``), as in pingouin's ``nan_policy="omit"`` and psych's complete cases.
    kind : {"ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"}
        1: one-way random; 2: two-way random, absolute agreement; 3: two-way mixed,
        consistency; "k": reliability of the mean of the k raters.
    level_ci : float
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
    _check_choice(kind, ICC_KINDS, "kind")
    level_ci = _check_ci(level_ci)
    Y = _as_matrix(ratings)
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
    n_dropped = n_all - n
    base = dict(kind=kind, n_items=n, n_raters=k, n_dropped=n_dropped)
    if n < 3:
        return ICCResult(
            np.nan,
            np.nan,
            np.nan,
            np.nan,
            np.nan,
            np.nan,
            np.nan,
            reason=f"fewer than 3 items rated by every rater ({n})",
            **base,
        )
    msr, msc, mse, msw = _anova_two_way(Y)
    alpha = 1.0 - level_ci
    one_way = kind in ("ICC1", "ICC1k")
    df1 = n - 1.0
    df2 = n * (k - 1.0) if one_way else (n - 1.0) * (k - 1.0)
    if np.ptp(Y) == 0.0:
        return ICCResult(
            np.nan,
            np.nan,
            np.nan,
            np.nan,
            df1,
            df2,
            np.nan,
            reason=f"all ratings equal {Y[0, 0]!r}; ICC undefined",
            **base,
        )
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
        return ICCResult(
            value,
            np.nan,
            np.nan,
            np.inf,
            df1,
            df2,
            0.0,
            reason="residual variance is zero; the F-based interval is undefined",
            **base,
        )
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


def krippendorff_alpha(ratings, level="interval"):
    """Krippendorff's alpha from the coincidence matrix.

    Parameters
    ----------
    ratings : array_like of shape (n_items, n_raters)
        Numeric ratings, NaN where a rater did not rate an item. Items with fewer than 2
        ratings are not pairable and are ignored (as in Krippendorff 2011).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement (difference function). Ordinal distances use the values that
        occur in the data as the ordered scale.

    Returns
    -------
    float
        ``1 - D_observed / D_expected``.

    Raises
    ------
    ValueError
        Not 2-D, fewer than 2 raters, no item with 2 or more ratings, or a single value
        among all pairable ratings (alpha is undefined: no variation to agree on).
    """
    _check_choice(level, ALPHA_LEVELS, "level")
    Y = _as_matrix(ratings)
    if Y.shape[1] < 2:
        raise ValueError(f"Krippendorff's alpha needs at least 2 raters; got {Y.shape[1]}")
    m_u = np.isfinite(Y).sum(axis=1)
    Y = Y[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if Y.shape[0] == 0:
        raise ValueError("no item has 2 or more ratings; Krippendorff's alpha is undefined")
    finite = np.isfinite(Y)
    values, inv = np.unique(Y[finite], return_inverse=True)
    n_v = values.shape[0]
    if n_v < 2:
        raise ValueError(
            f"every pairable rating equals {values[0]!r}; Krippendorff's alpha is undefined "
            "(no variation)"
        )
    rows = np.nonzero(finite)[0]
    counts = np.zeros((Y.shape[0], n_v))
    np.add.at(counts, (rows, inv), 1.0)
    inv_m = 1.0 / (m_u - 1.0)
    o = (counts * inv_m[:, None]).T @ counts
    o[np.diag_indices(n_v)] -= (counts * inv_m[:, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    n_tot = n_c.sum()
    delta2 = _alpha_distance(values, n_c, level)
    d_obs = (o * delta2).sum()
    d_exp = (np.outer(n_c, n_c) * delta2).sum()
    return float(1.0 - (n_tot - 1.0) * d_obs / d_exp)


def _alpha_distance(values, n_c, level):
    a = values[:, None]
    b = values[None, :]
    if level == "nominal":
        return (a != b).astype(np.float64)
    if level == "interval":
        return (a - b) ** 2
    if level == "ratio":
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

    Items with fewer than 2 ratings are left out. Equality is exact (ratings are compared as
    given; round them first if they carry noise).

    Raises
    ------
    ValueError
        Not 2-D, or no item with 2 or more ratings.
    """
    Y = _as_matrix(ratings)
    m_u = np.isfinite(Y).sum(axis=1)
    keep = m_u >= 2
    if not keep.any():
        raise ValueError("no item has 2 or more ratings; the share of agreement is undefined")
    Y = Y[keep]
    hi = np.nanmax(Y, axis=1)
    lo = np.nanmin(Y, axis=1)
    return float(np.mean(hi == lo))


def _labels_1d(x, name):
    arr = np.asarray(x, dtype=object if np.asarray(x).dtype.kind in "OUS" else None)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    return arr


def _missing(arr):
    if arr.dtype == object:
        return np.array(
            [v is None or (isinstance(v, float) and np.isnan(v)) for v in arr], dtype=bool
        )
    if arr.dtype.kind == "f":
        return np.isnan(arr)
    return np.zeros(arr.shape[0], dtype=bool)


def _category_codes(values):
    try:
        cats = np.unique(values)
    except TypeError:
        raise ValueError(
            "labels mix types that cannot be ordered (e.g. numbers and strings); use one type"
        ) from None
    return cats, np.searchsorted(cats, values)


def cohen_kappa(a, b, weights=None):
    """Cohen's kappa between two raters, optionally weighted.

    Parameters
    ----------
    a, b : array_like of shape (n_items,)
        Labels (numbers or strings); NaN or None marks a missing label, and items where
        either rater is missing are left out.
    weights : {None, "linear", "quadratic"}
        Disagreement weights by the distance between category positions in the sorted
        category list (as scikit-learn), for ordinal labels.

    Raises
    ------
    ValueError
        Lengths differ, fewer than 2 labelled items, or kappa undefined because both raters
        used one and the same category throughout.
    """
    _check_choice(weights, KAPPA_WEIGHTS, "weights")
    a = _labels_1d(a, "a")
    b = _labels_1d(b, "b")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"a has {a.shape[0]} labels, b has {b.shape[0]}; they must align")
    keep = ~(_missing(a) | _missing(b))
    a, b = a[keep], b[keep]
    if a.shape[0] < 2:
        raise ValueError(f"Cohen's kappa needs at least 2 items rated by both; got {a.shape[0]}")
    cats, codes = _category_codes(np.concatenate([a, b]))
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
        raise ValueError(
            "Cohen's kappa is undefined: both raters used the single category "
            f"{cats[0]!r} throughout"
        )
    return float(1.0 - (Wt * O).sum() / expected)


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

    Raises
    ------
    ValueError
        Both or neither input given, unequal raters per item, fewer than 2 raters or items,
        negative counts, or kappa undefined because all ratings fall in one category.
    """
    if (counts is None) == (labels is None):
        raise ValueError("give exactly one of counts= (n_items, n_categories) or labels=")
    if labels is not None:
        L = np.asarray(labels, dtype=object if np.asarray(labels).dtype.kind in "OUS" else None)
        if L.ndim != 2:
            raise ValueError(f"labels must have shape (n_items, n_raters); got {L.shape}")
        flat = L.ravel()
        miss = _missing(flat)
        if miss.all():
            raise ValueError("labels are all missing")
        cats, codes = _category_codes(flat[~miss])
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
        raise ValueError(f"Fleiss' kappa needs at least 2 items; got {n_items}")
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
        raise ValueError("Fleiss' kappa is undefined: every rating falls in one category")
    return float((P_i.mean() - P_e) / (1.0 - P_e))


# ------------------------------------------------------------------------ baseline, consistency


def human_baseline(
    ratings,
    contexts=None,
    systems=None,
    level="item",
    method="spearman",
    variant="b",
    n_boot=0,
    level_ci=0.95,
    random_state=None,
):
    """Each annotator correlated with the mean of the other annotators.

    The upper bound a judge is compared with: a judge that agrees with the human mean as
    well as a held-out annotator does is as good as one more human.

    Parameters
    ----------
    ratings : array_like of shape (n_items, n_annotators)
        NaN where an annotator did not rate an item; the mean of the others uses the
        annotators present, and items where annotator a or all others are missing are left
        out of annotator a's correlation (counted in its ``n_dropped_nan``).
    contexts, systems, level, method, variant, n_boot, level_ci, random_state
        As in :func:`correlation`.

    Returns
    -------
    HumanBaselineResult

    Raises
    ------
    ValueError
        Fewer than 2 annotators, or what :func:`correlation` raises.
    """
    Y = _as_matrix(ratings)
    n_items, n_ann = Y.shape
    if n_ann < 2:
        raise ValueError(f"the human baseline needs at least 2 annotators; got {n_ann}")
    finite = np.isfinite(Y)
    tot = np.where(finite, Y, 0.0).sum(axis=1)
    cnt = finite.sum(axis=1)
    rng = _rng(random_state)
    results = []
    for a in range(n_ann):
        own = np.where(finite[:, a], Y[:, a], 0.0)
        n_other = cnt - finite[:, a]
        with np.errstate(invalid="ignore", divide="ignore"):
            others = np.where(n_other > 0, (tot - own) / n_other, np.nan)
        results.append(
            correlation(
                Y[:, a],
                others,
                level=level,
                method=method,
                variant=variant,
                contexts=contexts,
                systems=systems,
                n_boot=n_boot,
                level_ci=level_ci,
                random_state=rng,
            )
        )
    values = np.array([r.value for r in results])
    defined = np.isfinite(values)
    reason = ""
    if not defined.all():
        reason = f"annotator(s) {np.flatnonzero(~defined).tolist()} undefined: " + "; ".join(
            results[i].reason for i in np.flatnonzero(~defined)
        )
    mean = float(values[defined].mean()) if defined.any() else np.nan
    return HumanBaselineResult(values, mean, tuple(results), reason)


def self_consistency(samples, level_ci=0.95):
    """Agreement of a judge with itself across K samples (tries) of every item.

    Parameters
    ----------
    samples : array_like of shape (n_items, K)
        Parsed scores per sample, NaN where a sample could not be parsed.

    Returns
    -------
    SelfConsistencyResult
        ICC2k across the K samples (items with all K parsed; the others are counted) and the
        share of items (with 2 or more parsed samples) whose parsed samples are identical.

    Raises
    ------
    ValueError
        Not 2-D or fewer than 2 samples per item.
    """
    Y = _as_matrix(samples, "samples")
    n_items, K = Y.shape
    if K < 2:
        raise ValueError(f"self-consistency needs at least 2 samples per item; got {K}")
    finite = np.isfinite(Y)
    n_nan = int((~finite).sum())
    complete = finite.all(axis=1)
    reason = ""
    res = icc(Y[complete], kind="ICC2k", level_ci=level_ci)
    res = ICCResult(**{**res.__dict__, "n_dropped": int(n_items - complete.sum())})
    if res.reason:
        reason = f"ICC2k: {res.reason}"
    pairable = finite.sum(axis=1) >= 2
    if pairable.any():
        share = share_all_agree(Y[pairable])
    else:
        share = np.nan
        reason = _join(reason, "no item has 2 or more parsed samples")
    return SelfConsistencyResult(
        res,
        share,
        n_items,
        K,
        int(complete.sum()),
        int(pairable.sum()),
        int(n_items - complete.sum()),
        n_nan,
        reason,
    )


# ----------------------------------------------------------------------------- significance


def welch_t(a, b):
    """Welch's t-test between two groups (``scipy.stats.ttest_ind(equal_var=False)``).

    NaN values are left out and counted. Returns the statistic, two-sided p-value,
    Welch-Satterthwaite degrees of freedom and the group means / standard deviations
    (ddof=1) / sizes; t and p are NaN with a reason when both groups are constant.

    Raises
    ------
    ValueError
        An input that is not 1-D, infinite values, or fewer than 2 valid values in a group.
    """
    xa = _as_scores(a, "a")
    xb = _as_scores(b, "b")
    n_dropped = int(np.isnan(xa).sum() + np.isnan(xb).sum())
    xa, xb = xa[np.isfinite(xa)], xb[np.isfinite(xb)]
    for name, g in (("a", xa), ("b", xb)):
        if g.shape[0] < 2:
            raise ValueError(f"group {name} has {g.shape[0]} valid value(s); Welch needs >= 2")
    sa, sb = float(xa.std(ddof=1)), float(xb.std(ddof=1))
    summary = dict(
        mean_a=float(xa.mean()),
        mean_b=float(xb.mean()),
        std_a=sa,
        std_b=sb,
        n_a=int(xa.shape[0]),
        n_b=int(xb.shape[0]),
        n_dropped_nan=n_dropped,
    )
    if sa == 0.0 and sb == 0.0:
        return WelchResult(
            np.nan,
            np.nan,
            np.nan,
            **summary,
            reason="both groups are constant; the t statistic is undefined",
        )
    res = stats.ttest_ind(xa, xb, equal_var=False)
    return WelchResult(float(res.statistic), float(res.pvalue), float(res.df), **summary)


def williams_test(r_jh, r_kh, r_jk, n):
    """Williams' test for two dependent correlations sharing one variable.

    Tests whether judge j and judge k correlate equally with the humans h, given the
    judge-judge correlation ``r_jk``, over ``n`` items (Williams 1959; Steiger 1980 eq. 7; as
    used by WMT, Graham & Baldwin 2014):

        t = (r_jh - r_kh) sqrt((n - 1)(1 + r_jk))
            / sqrt(2 (n - 1)/(n - 3) |R| + ((r_jh + r_kh)/2)^2 (1 - r_jk)^3),
        |R| = 1 - r_jh^2 - r_kh^2 - r_jk^2 + 2 r_jh r_kh r_jk,

    with n - 3 degrees of freedom.

    Returns
    -------
    (t, p) : tuple of float
        The statistic (positive when judge j agrees more) and the two-sided p-value.

    Raises
    ------
    ValueError
        A correlation outside [-1, 1] or not finite, n < 4, or correlations that cannot
        come from one data set (the variance term is not positive).
    """
    rs = np.array([r_jh, r_kh, r_jk], dtype=np.float64)
    if not np.isfinite(rs).all() or (np.abs(rs) > 1).any():
        raise ValueError(f"correlations must be finite and in [-1, 1]; got {rs.tolist()}")
    if int(n) != n or n < 4:
        raise ValueError(f"Williams' test needs n >= 4 items (df = n - 3); got {n!r}")
    r12, r13, r23 = rs
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    var = 2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    if var <= 0:
        if r12 == r13:
            return 0.0, 1.0
        raise ValueError(
            f"correlations r_jh={r12}, r_kh={r13}, r_jk={r23} are not consistent with one "
            "data set (non-positive variance term); Williams' test is undefined"
        )
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(var)
    p = 2.0 * stats.t.sf(abs(t), n - 3)
    return float(t), float(p)


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


def _prepare_level(level, contexts, systems, valid):
    """Codes of the units a level needs, restricted to the valid items."""
    if level == "item":
        if contexts is None:
            raise ValueError("level='item' correlates within each context: pass contexts=")
        codes, labels = _codes(contexts[valid])
        return codes, labels.shape[0]
    if level == "system":
        if systems is None:
            raise ValueError("level='system' averages per system: pass systems=")
        codes, labels = _codes(systems[valid])
        return codes, labels.shape[0]
    return None, 0


def _stat_rows(J, h, level, codes, n_groups, method, variant):
    """Correlation of every row of ``J`` (n_rows, n) with ``h`` at ``level``."""
    n_rows, n = J.shape
    if level == "overall":
        seg = np.repeat(np.arange(n_rows), n)
        vals, _ = _segment_corr(
            J.ravel(), np.tile(h, n_rows), seg, n_rows, method, variant, min_items=MIN_POOLED
        )
        return vals
    if level == "system":
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
    level="item",
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
        ``diff`` = r_a - r_b and the two-sided p-value ``(1 + #{|d*| >= |d|}) /
        (1 + n_permutations)``; NaN with a reason when the difference is undefined.

    Raises
    ------
    ValueError
        As :func:`correlation`, or ``n_permutations`` < 1.
    """
    _check_choice(level, LEVELS, "level")
    _check_choice(method, METHODS, "method")
    _check_choice(variant, KENDALL_VARIANTS, "variant")
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer; got {n_permutations!r}")
    a = _as_scores(judge_a, "judge_a")
    b = _as_scores(judge_b, "judge_b", n=a.shape[0])
    h = _as_scores(human, "human", n=a.shape[0])
    n = a.shape[0]
    if contexts is not None:
        contexts = _as_labels(contexts, n, "contexts")
    if systems is not None:
        systems = _as_labels(systems, n, "systems")
    valid = np.isfinite(a) & np.isfinite(b) & np.isfinite(h)
    n_dropped = int(n - valid.sum())
    codes, n_groups = _prepare_level(level, contexts, systems, valid)
    a, b, h = a[valid], b[valid], h[valid]
    n_used = int(valid.sum())
    obs = _stat_rows(np.stack([a, b]), h, level, codes, n_groups, method, variant)
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
    rng = _rng(random_state)
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
        d = _stat_rows(A, h, level, codes, n_groups, method, variant) - _stat_rows(
            B, h, level, codes, n_groups, method, variant
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


def williams_matrix(
    scores,
    human,
    level="overall",
    method="kendall",
    variant="b",
    contexts=None,
    systems=None,
    names=None,
):
    """Williams' test between every pair of judges, with Benjamini-Hochberg adjustment.

    Parameters
    ----------
    scores : array_like of shape (n_items, n_judges)
        Judge scores (NaN unparsed), aligned with ``human`` (n_items,).
    level : {"overall", "system"}
        Correlations over all items pooled (n = items) or over system means (n = systems).
    method, variant, systems
        As in :func:`correlation` (``systems`` needed at system level).
    contexts : array_like, optional
        Accepted for symmetry with :func:`correlation`; the tests use no resampling.
    names : sequence of str, optional
        Judge names used in the ``reasons`` messages (default "judge <column>").

    Returns
    -------
    WilliamsMatrixResult
        The BH family is all judge pairs of this call. Correlations come from the same
        vectorised formulas as item level (equal to scipy's; checked in tests).
    """
    if level == "item":
        raise ValueError(
            "Williams' test compares correlations over one sample of items; an average of "
            "per-context correlations has no such n: use level='overall' or 'system'"
        )
    _check_choice(level, ("overall", "system"), "level")
    S = _as_matrix(scores, "scores")
    h = _as_scores(human, "human", n=S.shape[0])
    n_items, n_j = S.shape
    if n_j < 2:
        raise ValueError(f"Williams' test compares judges; scores has {n_j} column(s)")
    if systems is not None:
        systems = _as_labels(systems, n_items, "systems")
    if level == "system":
        if systems is None:
            raise ValueError("level='system' averages per system: pass systems=")
        sys_codes, sys_labels = _codes(systems)
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
        if level == "system":
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
    what = "systems" if level == "system" else "items"
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
        try:
            t, p = williams_test(values[ka], values[kb], values[kab], n_pair)
        except ValueError as err:
            reasons[(a, b)] = str(err)
            continue
        T[a, b], T[b, a] = t, -t
        P[a, b] = P[b, a] = p
    iu = np.triu_indices(n_j, 1)
    P_adj = np.full(shape, np.nan)
    P_adj[iu] = bh_adjust(P[iu])
    P_adj.T[iu] = P_adj[iu]
    return WilliamsMatrixResult(r_h, r_pair, r_jk, T, P, P_adj, N, reasons)


# ----------------------------------------------------------------------------- score sets


def paired_shift(a, b, level_ci=0.95):
    """Mean of the paired differences ``a - b``, with a t interval and the paired t-test.

    The same as ``scipy.stats.ttest_rel(a, b)`` and its ``confidence_interval(level_ci)`` on
    the pairs where both scores are finite (e.g. one template's mean score per item against
    a baseline template's). When every difference is the same, scipy's statistic is
    undefined, but the answer is not: the interval collapses onto the mean and the p-value
    is 1 for a zero shift, 0 otherwise.

    Parameters
    ----------
    a, b : array_like of shape (n_items,)
        Paired scores; NaN marks a missing or unparsed score and its pair is left out.
    level_ci : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    PairedShiftResult
        NaN values with a reason when fewer than 2 pairs have both scores.

    Raises
    ------
    ValueError
        Inputs that are not 1-D, differ in length or hold infinite values; ``level_ci``
        outside (0, 1).
    """
    level_ci = _check_ci(level_ci)
    xa = _as_scores(a, "a")
    xb = _as_scores(b, "b")
    if xa.shape[0] != xb.shape[0]:
        raise ValueError(f"a has {xa.shape[0]} scores, b has {xb.shape[0]}; they must be paired")
    d = xa - xb
    keep = np.isfinite(d)
    d = d[keep]
    n_used, n_dropped = int(d.shape[0]), int((~keep).sum())
    if n_used < 2:
        return PairedShiftResult(
            np.nan, np.nan, np.nan, np.nan, n_used, n_dropped, "fewer than 2 items rated under both"
        )
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level_ci / 2, n_used - 1)) * sd / np.sqrt(n_used)
    if sd > 0:
        pvalue = float(stats.ttest_1samp(d, 0.0).pvalue)
    else:  # constant differences: scipy returns NaN, the sign of the shift is certain
        pvalue = 1.0 if mean == 0 else 0.0
    return PairedShiftResult(mean, mean - half, mean + half, pvalue, n_used, n_dropped)


def kendall_matrix(scores, variant="b"):
    """Kendall correlation between the rankings every two sets of scores induce.

    Parameters
    ----------
    scores : array_like of shape (n_sets, n_units) or (n_sets, n_contexts, n_items)
        One set of scores per row (e.g. per prompt template): over units (systems) or per
        context (candidates ranked within each context). NaN marks a missing score.
    variant : {"b", "c"}, default "b"
        Kendall tau-b or tau-c (``ranking.metrics.kendall``).

    Returns
    -------
    ndarray of shape (n_sets, n_sets)
        ``[a, b]`` = Kendall tau between sets a and b over the units finite in both; with
        contexts, the mean of the per-context taus over the contexts where tau is defined
        (contexts with constant or too few scores are left out). NaN where nothing is
        defined. The diagonal is 1 except for sets that are constant (NaN).

    Raises
    ------
    ValueError
        ``scores`` not 2-D or 3-D, or an unknown ``variant``.
    """
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim not in (2, 3):
        raise ValueError(
            "scores must have shape (n_sets, n_units) or (n_sets, n_contexts, n_items); "
            f"got {S.shape}"
        )
    n_sets = S.shape[0]
    out = np.full((n_sets, n_sets), np.nan)
    for i in range(n_sets):
        for j in range(n_sets):
            tau = kendall(S[i], S[j], variant=variant)
            if np.ndim(tau):
                tau = tau[np.isfinite(tau)]
                out[i, j] = float(tau.mean()) if tau.size else np.nan
            else:
                out[i, j] = float(tau)
    return out


def order_matrix(scores):
    """The pairwise order that scores induce, laid out like P: 1 above, 0 below, 0.5 tied.

    Lets ``ranking.metrics.pairwise_accuracy`` measure a *ranking* (its scores) against
    reference scores over every pair of ranked candidates: with no ties in either, the
    accuracy is (1 + Kendall tau) / 2.

    Parameters
    ----------
    scores : array_like of shape (n_contexts, N)
        Higher is better; NaN for a candidate not ranked.

    Returns
    -------
    ndarray of shape (n_contexts, N, N)
        ``[c, i, j]`` = 1 where i scores above j, 0 below, 0.5 on a tie; NaN on the diagonal
        and where either score is missing.

    Raises
    ------
    ValueError
        ``scores`` not 2-D.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2:
        raise ValueError(f"scores must have shape (n_contexts, N); got {s.shape}")
    diff = s[:, :, None] - s[:, None, :]
    out = np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5))
    out[~np.isfinite(diff)] = np.nan
    idx = np.arange(s.shape[1])
    out[:, idx, idx] = np.nan
    return out

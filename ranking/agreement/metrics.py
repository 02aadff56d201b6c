"""Rank correlations and pairwise accuracy against a reference, row-wise and NaN-aware.

These are the numbers the budget and agreement loops compute millions of times, so the
row kernels are numba functions that the other kernels call inline; the public wrappers
check shapes and carry the documentation.

Conventions shared by every function here:

* only positions finite in *both* arrays take part (NaN marks a missing score);
* ties get average ranks (as ``scipy.stats.rankdata(method="average")``);
* the result is NaN when fewer than two positions are valid or when either valid row is
  constant, because no correlation is defined there (scipy returns NaN in the same cases).
"""

from __future__ import annotations

import math

import numpy as np

from ranking._core.checks import as_P, check_tau
from ranking._core.decisions import _decide
from ranking._core.jit import njit
from ranking._core.pooled import per_context as per_context_values
from ranking._core.pooled import pooled

# Below this many valid positions average ranks are counted pairwise (branch-free, faster
# than a sort for the N = 16-ish rows of the budget loops); above it we sort.
_SMALL_N = 48


@njit
def _avg_ranks(x, out):
    """Average ranks (1-based) of the n values in ``x`` written into ``out[:n]``.

    The one rank core of ``ranking``: the agreement statistics rank within contexts with it
    (``ranking.agreement.segments``).
    """
    n = x.shape[0]
    if n <= _SMALL_N:
        for i in range(n):
            less = 0.0
            same = 0.0
            xi = x[i]
            for j in range(n):
                xj = x[j]
                if xj < xi:
                    less += 1.0
                elif xj == xi:
                    same += 1.0
            out[i] = less + 0.5 * (same + 1.0)
        return
    order = np.argsort(x, kind="mergesort")
    i = 0
    while i < n:
        j = i
        while j + 1 < n and x[order[j + 1]] == x[order[i]]:
            j += 1
        r = 0.5 * (i + j) + 1.0
        for k in range(i, j + 1):
            out[order[k]] = r
        i = j + 1


@njit
def _pearson(x, y, n):
    """Pearson correlation of x[:n], y[:n]; NaN when either is constant or n < 2."""
    if n < 2:
        return np.nan
    mx = 0.0
    my = 0.0
    for k in range(n):
        mx += x[k]
        my += y[k]
    mx /= n
    my /= n
    sxy = 0.0
    sxx = 0.0
    syy = 0.0
    for k in range(n):
        dx = x[k] - mx
        dy = y[k] - my
        sxy += dx * dy
        sxx += dx * dx
        syy += dy * dy
    if sxx <= 0.0 or syy <= 0.0:
        return np.nan
    r = sxy / math.sqrt(sxx * syy)
    # Rounding can push |r| a hair above 1 for identical rankings.
    if r > 1.0:
        return 1.0
    if r < -1.0:
        return -1.0
    return r


@njit
def _finite_pairs(a, b):
    """(a's values, b's values, n): the n positions finite in both, packed at the front."""
    n_all = a.shape[0]
    xa = np.empty(n_all)
    xb = np.empty(n_all)
    n = 0
    for k in range(n_all):
        if math.isfinite(a[k]) and math.isfinite(b[k]):
            xa[n] = a[k]
            xb[n] = b[k]
            n += 1
    return xa, xb, n


@njit
def _spearman_row(a, b):
    """Spearman rho of two 1-D rows over positions finite in both (NaN if undefined)."""
    xa, xb, n = _finite_pairs(a, b)
    if n < 2:
        return np.nan
    ra = np.empty(n)
    rb = np.empty(n)
    _avg_ranks(xa[:n], ra)
    _avg_ranks(xb[:n], rb)
    return _pearson(ra, rb, n)


@njit
def _doubled_centred_rank(x, n, a):
    """2 * (average rank of x[a] - mean rank) among x[:n], as an integer."""
    xa = x[a]
    acc = 0
    for b in range(n):
        xb = x[b]
        acc += 2 * (xb < xa) + (xb == xa)
    # 2 * rank = 2 * (number below) + (number equal, self included) + 1; mean rank (n+1)/2
    return acc - n


@njit
def _doubled_centred_ranks(x, n, out):
    """2 * (average rank - mean rank) of x[:n] as integers: exact, no sort, no allocation."""
    for a in range(n):
        out[a] = _doubled_centred_rank(x, n, a)


@njit
def _spearman_preranked(x, n, ref_rc, ref_ss):
    """Spearman rho of x[:n] against a reference given as ``_doubled_centred_ranks``.

    ``ref_ss`` is the sum of squares of ``ref_rc``; NaN when x is constant or ref_ss is 0.
    """
    num = 0
    ss = 0
    for a in range(n):
        r = _doubled_centred_rank(x, n, a)
        num += r * ref_rc[a]
        ss += r * r
    if ss == 0 or ref_ss == 0:
        return np.nan
    rho = num / math.sqrt(float(ss) * float(ref_ss))
    if rho > 1.0:
        return 1.0
    if rho < -1.0:
        return -1.0
    return rho


@njit
def _kendall_pairs_loop(x, y, a, b):  # pragma: no cover - compiled
    """(concordant - discordant, pairs tied in x, pairs tied in y) of x[a:b], y[a:b].

    The direct O(n^2) pair loop; also the short-segment kernel of ``ranking.agreement.segments``.
    """
    c = 0
    tx = 0
    ty = 0
    for i in range(a, b):
        xi = x[i]
        yi = y[i]
        for j in range(i + 1, b):
            dx = xi - x[j]
            dy = yi - y[j]
            if dx == 0.0:
                tx += 1
            if dy == 0.0:
                ty += 1
            if dx != 0.0 and dy != 0.0:
                if (dx > 0.0) == (dy > 0.0):
                    c += 1
                else:
                    c -= 1
    return c, tx, ty


@njit
def _n_distinct(x, n):
    v = np.sort(x[:n])
    m = 1
    for k in range(1, n):
        if v[k] != v[k - 1]:
            m += 1
    return m


@njit
def _kendall_compact(x, y, n, variant_c):
    if n < 2:
        return np.nan
    c, n_tx, n_ty = _kendall_pairs_loop(x, y, 0, n)
    # counts as floats: exact, and (tot - tx) * (tot - ty) cannot overflow
    s = float(c)
    tx = float(n_tx)
    ty = float(n_ty)
    tot = 0.5 * n * (n - 1.0)
    if tx == tot or ty == tot:
        return np.nan
    if variant_c:
        m = min(_n_distinct(x, n), _n_distinct(y, n))
        return 2.0 * s / (n * n * (m - 1.0) / m)
    return s / math.sqrt((tot - tx) * (tot - ty))


@njit
def _kendall_row(a, b, variant_c):
    """Kendall tau-b (or tau-c) of two rows over positions finite in both (NaN if undefined)."""
    xa, xb, n = _finite_pairs(a, b)
    return _kendall_compact(xa, xb, n, variant_c)


@njit
def _spearman_rows(a, b):
    out = np.empty(a.shape[0])
    for r in range(a.shape[0]):
        out[r] = _spearman_row(a[r], b[r])
    return out


@njit
def _kendall_rows(a, b, variant_c):
    out = np.empty(a.shape[0])
    for r in range(a.shape[0]):
        out[r] = _kendall_row(a[r], b[r], variant_c)
    return out


def _rows(a, b, axis):
    """Move ``axis`` last and flatten the rest: returns (a2, b2, leading shape)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape; got {a.shape} and {b.shape}")
    if a.ndim == 0:
        raise ValueError("a and b must have at least one dimension (the ranked positions)")
    if a.size == 0:
        raise ValueError(f"a and b are empty (shape {a.shape})")
    try:
        a = np.moveaxis(a, axis, -1)
        b = np.moveaxis(b, axis, -1)
    except np.exceptions.AxisError as err:
        raise ValueError(f"axis={axis} is out of range for arrays of shape {a.shape}") from err
    lead = a.shape[:-1]
    n = a.shape[-1]
    return _readonly(a.reshape(-1, n)), _readonly(b.reshape(-1, n)), lead


def _readonly(x):
    """A C-contiguous read-only view (a copy only when not contiguous): the kernels get
    one array type whether the caller's array was writeable or not (a cached one is
    not), so each compiles once."""
    x = np.ascontiguousarray(x).view()
    x.flags.writeable = False
    return x


def _shape_out(values, lead):
    if len(lead) == 0:
        return float(values[0])
    return values.reshape(lead)


def spearman(a, b, axis=-1):
    """Spearman rank correlation of ``a`` and ``b`` along ``axis``, row by row.

    Parameters
    ----------
    a, b : array_like of float, same shape
        Scores, e.g. (n_contexts, N) predicted and reference scores. NaN marks a missing
        score; only positions finite in both arrays take part.
    axis : int, default -1
        The axis holding the ranked items.

    Returns
    -------
    float or ndarray
        One correlation per row (the shape of ``a`` without ``axis``); a float for 1-D input.
        Ties get average ranks, as in ``scipy.stats.spearmanr``. NaN where fewer than two
        positions are valid or where either row is constant over the valid positions.
    """
    a2, b2, lead = _rows(a, b, axis)
    return _shape_out(_spearman_rows(a2, b2), lead)


def kendall(a, b, variant="b", axis=-1):
    """Kendall rank correlation (tau-b or tau-c) of ``a`` and ``b`` along ``axis``, row by row.

    Parameters
    ----------
    a, b : array_like of float, same shape
        Scores; NaN marks a missing score and only positions finite in both take part.
    variant : {"b", "c"}, default "b"
        tau-b (adjusted for ties, as ``scipy.stats.kendalltau(variant="b")``) or tau-c
        (Stuart's, for rectangular tables, as ``variant="c"``).
    axis : int, default -1
        The axis holding the ranked items.

    Returns
    -------
    float or ndarray
        One correlation per row; a float for 1-D input. NaN where fewer than two positions
        are valid or where either row is constant over them. The pair count is O(n^2) per
        row, which is fine up to a few thousand items per row.
    """
    if variant not in ("b", "c"):
        raise ValueError(f"variant must be 'b' or 'c'; got {variant!r}")
    a2, b2, lead = _rows(a, b, axis)
    return _shape_out(_kendall_rows(a2, b2, variant == "c"), lead)


# ---------------------------------------------------------------------------------------
# Pairwise accuracy against reference scores
# ---------------------------------------------------------------------------------------


@njit
def _pairwise_accuracy_kernel(P, ref, taus):
    """Per context: (sum of agreement, number of pairs) over present pairs with differing refs."""
    n_contexts, n_items, _ = P.shape
    hits = np.zeros(n_contexts)
    counts = np.zeros(n_contexts)
    for c in range(n_contexts):
        tau = taus[c]
        for i in range(n_items):
            ri = ref[c, i]
            if not math.isfinite(ri):
                continue
            for j in range(n_items):
                p = P[c, i, j]
                rj = ref[c, j]
                if i == j or not math.isfinite(p) or not math.isfinite(rj) or ri == rj:
                    continue
                d = _decide(p, tau)
                hits[c] += d if ri > rj else 1.0 - d
                counts[c] += 1.0
    return hits, counts


def as_reference(reference, n_contexts, n_items, *, name="reference"):
    """Return reference scores as float64 (n_contexts, N); a 1-D row is one context."""
    ref = np.asarray(reference, dtype=np.float64)
    if ref.ndim == 1:
        ref = ref[None]
    if ref.shape != (n_contexts, n_items):
        raise ValueError(
            f"{name} must have shape (n_contexts, N) = ({n_contexts}, {n_items}) to match P; "
            f"got shape {np.shape(reference)}"
        )
    if np.isinf(ref).any():
        raise ValueError(f"{name} contains infinite values; use NaN for a missing score")
    return np.ascontiguousarray(ref)


def pairwise_accuracy(P, reference, tau=0.5, per_context=False):
    """Share of judged pairs whose decision agrees with the order of the reference scores.

    Over every present comparison (i shown first, j second) whose reference scores are both
    finite and differ, the decision 1[p_ij > tau] (a tie p_ij == tau counts half) is compared
    with 1[ref_i > ref_j]. Both presentation orders of a pair count as separate comparisons.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that i (shown first) beats j (shown second); NaN if not
        compared.
    reference : array_like, shape (n_contexts, N) or (N,)
        Reference (e.g. human) scores; NaN where missing. Higher is better.
    tau : float or array_like of shape (n_contexts,), default 0.5
        Decision threshold, or one per context.
    per_context : bool, default False
        Return one accuracy per context instead of the pooled share.

    Returns
    -------
    PooledStat or ndarray of shape (n_contexts,)
        Pooled accuracy over all qualifying comparisons: a float with ``n_contexts`` /
        ``n_skipped``, the contexts without any qualifying comparison (an all-NaN context,
        or every reference tied or missing) being skipped (``ranking._core.pooled``); NaN with a
        ``reason`` when no comparison qualifies anywhere. Per context: NaN for those
        contexts.

    Raises
    ------
    ValueError
        Bad P, reference or tau (see ``ranking._core.checks``).
    """
    P = as_P(P, allow_empty=True)
    ref = as_reference(reference, P.shape[0], P.shape[1])
    taus = check_tau(tau, P=P, broadcast=True)
    hits, counts = _pairwise_accuracy_kernel(P, ref, taus)
    if per_context:
        return per_context_values(hits, counts)
    return pooled(
        hits,
        counts,
        "pairwise_accuracy: no comparison has two different, finite reference scores; "
        "the accuracy is undefined",
    )


# ---------------------------------------------------------------------------------------
# Several rankings at once: Kendall between score sets, the pairwise order of a ranking
# ---------------------------------------------------------------------------------------


def kendall_matrix(scores, variant="b"):
    """Kendall correlation between the rankings every two sets of scores induce.

    Parameters
    ----------
    scores : array_like of shape (n_sets, n_units) or (n_sets, n_contexts, n_items)
        One set of scores per row (e.g. per prompt template): over units (systems) or per
        context (candidates ranked within each context). NaN marks a missing score.
    variant : {"b", "c"}, default "b"
        Kendall tau-b or tau-c (:func:`kendall`).

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

    Lets :func:`pairwise_accuracy` measure a *ranking* (its scores) against reference
    scores over every pair of ranked candidates: with no ties in either, the accuracy is
    (1 + Kendall tau) / 2.

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

"""Rank correlations and pairwise accuracy against a reference, row-wise and NaN-aware.

Vectorised numpy over all rows at once (issue 26: the pages call these for light work, where
a numba compilation cost more than it saved); the compiled budget grid keeps its own
per-row copies (``ranking.budget.grid``). Ranks are exact integers (doubled and centred), so
the values equal the former row-by-row loops bit for bit.

Conventions shared by every function here:

* only positions finite in *both* arrays take part (NaN marks a missing score);
* ties get average ranks (as ``scipy.stats.rankdata(method="average")``);
* the result is NaN when fewer than two positions are valid or when either valid row is
  constant, because no correlation is defined there (scipy returns NaN in the same cases).
"""

from __future__ import annotations

import numpy as np

from ranking._core.checks import as_P, check_tau
from ranking._core.decisions import _decide_rows
from ranking._core.pooled import per_context as per_context_values
from ranking._core.pooled import pooled


def _run_bounds(new):
    """First and last index of the run each position of a 1-D array belongs to, given
    ``new`` (bool, True where a run starts; ``new[0]`` True)."""
    idx = np.arange(new.shape[0])
    first = np.maximum.accumulate(np.where(new, idx, 0))
    ends = np.ones_like(new)
    ends[:-1] = new[1:]
    last = np.minimum.accumulate(np.where(ends, idx, new.shape[0])[::-1])[::-1]
    return first, last


def _centred_ranks(x, valid):
    """Doubled centred average ranks of every row of ``x`` among its ``valid`` positions.

    The one rank core of ``ranking``: for a valid value with ``less`` valid values below it
    and ``same`` equal to it (itself included), 2 * (average rank - mean rank) =
    2 * less + same - n_valid, an exact integer (ties get average ranks, as
    ``scipy.stats.rankdata``). Returns (int64 ranks with 0 at invalid positions, n_valid per
    row). ``x`` and ``valid`` are (n_rows, n).
    """
    n_rows, n = x.shape
    nv = valid.sum(axis=1)
    rc = np.zeros((n_rows, n), dtype=np.int64)
    if n_rows == 0 or n == 0:
        return rc, nv
    key = np.where(valid, x, np.inf)  # invalid positions sort last, in a run of their own
    order = np.argsort(key, axis=1, kind="stable")
    s = np.take_along_axis(key, order, axis=1)
    new = np.ones((n_rows, n), dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    first, last = _run_bounds(new.ravel())
    row0 = (np.arange(n_rows) * n)[:, None]
    sorted_rc = first.reshape(n_rows, n) + last.reshape(n_rows, n) + 1 - 2 * row0 - nv[:, None]
    np.put_along_axis(rc, order, sorted_rc, axis=1)
    rc[~valid] = 0
    return rc, nv


def _rho_centred(num, ss_a, ss_b):
    """Spearman rho from the sums of doubled centred ranks: num / sqrt(ss_a ss_b), NaN where
    either side is constant (its sum of squares 0), rounded into [-1, 1]."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(ss_a, dtype=np.float64) * np.asarray(ss_b, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = num / np.sqrt(den)
    return np.where(den > 0.0, np.clip(rho, -1.0, 1.0), np.nan)


def _doubled_centred_ranks(x, n, out):
    """2 * (average rank - mean rank) of x[:n] as integers into ``out[:n]`` (exact)."""
    out[:n] = _centred_ranks(np.asarray(x[:n], dtype=np.float64)[None], np.ones((1, n), bool))[0][0]


def _spearman_preranked(x, n, ref_rc, ref_ss):
    """Spearman rho of x[:n] against a reference given as ``_doubled_centred_ranks``.

    ``ref_ss`` is the sum of squares of ``ref_rc``; NaN when x is constant or ref_ss is 0.
    """
    rc = np.zeros(n, dtype=np.int64)
    _doubled_centred_ranks(x, n, rc)
    num = int((rc * np.asarray(ref_rc[:n], dtype=np.int64)).sum())
    return float(_rho_centred(num, int((rc * rc).sum()), ref_ss))


def _spearman_rows(a, b):
    """Spearman rho of every row pair of (n_rows, n) arrays over the positions finite in both."""
    valid = np.isfinite(a) & np.isfinite(b)
    rca, nv = _centred_ranks(a, valid)
    rcb, _ = _centred_ranks(b, valid)
    rho = _rho_centred((rca * rcb).sum(axis=1), (rca * rca).sum(axis=1), (rcb * rcb).sum(axis=1))
    return np.where(nv >= 2, rho, np.nan)


#: Most pairs compared in one vectorised block of the Kendall count (about 12 bytes each).
_PAIR_BLOCK = 1 << 20


def _sign(d):
    return (d > 0.0).astype(np.int8) - (d < 0.0).astype(np.int8)


def _kendall_counts(x, y, valid):
    """(concordant - discordant pairs, pairs tied in x, pairs tied in y) of every row of
    (n_rows, n) arrays over its ``valid`` positions, as int64 arrays.

    The direct O(n^2) pair count, vectorised over blocks of rows (or of one long row's
    pairs); ``ranking.agreement.segments`` counts long segments in O(n log n) instead.
    """
    n_rows, n = x.shape
    c = np.zeros(n_rows, dtype=np.int64)
    tx = np.zeros(n_rows, dtype=np.int64)
    ty = np.zeros(n_rows, dtype=np.int64)
    iu, ju = np.triu_indices(n, k=1)
    step_rows = max(1, _PAIR_BLOCK // max(1, iu.shape[0]))
    for r0 in range(0, n_rows, step_rows):
        rows = slice(r0, r0 + step_rows)
        xs, ys, vs = x[rows], y[rows], valid[rows]
        for p0 in range(0, iu.shape[0], _PAIR_BLOCK):
            i, j = iu[p0 : p0 + _PAIR_BLOCK], ju[p0 : p0 + _PAIR_BLOCK]
            with np.errstate(invalid="ignore"):  # inf - inf at invalid positions
                dx = xs[:, i] - xs[:, j]
                dy = ys[:, i] - ys[:, j]
            both = vs[:, i] & vs[:, j]
            c[rows] += np.where(both, _sign(dx) * _sign(dy), 0).sum(axis=1, dtype=np.int64)
            tx[rows] += (both & (dx == 0.0)).sum(axis=1)
            ty[rows] += (both & (dy == 0.0)).sum(axis=1)
    return c, tx, ty


def _n_distinct(x, valid):
    """Number of distinct values of every row of ``x`` over its ``valid`` positions."""
    key = np.sort(np.where(valid, x, np.inf), axis=1)
    new = np.ones(key.shape, dtype=bool)
    new[:, 1:] = key[:, 1:] != key[:, :-1]
    return (new & np.isfinite(key)).sum(axis=1)


def _kendall_rows(a, b, variant_c):
    """Kendall tau-b (or tau-c) of every row pair over the positions finite in both."""
    valid = np.isfinite(a) & np.isfinite(b)
    c, n_tx, n_ty = _kendall_counts(a, b, valid)
    n = valid.sum(axis=1)
    # counts as floats: exact, and (tot - tx) * (tot - ty) cannot overflow
    s = c.astype(np.float64)
    tx = n_tx.astype(np.float64)
    ty = n_ty.astype(np.float64)
    tot = 0.5 * n * (n - 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant_c:
            m = np.minimum(_n_distinct(a, valid), _n_distinct(b, valid))
            tau = 2.0 * s / (n * n * (m - 1.0) / m)
        else:
            tau = s / np.sqrt((tot - tx) * (tot - ty))
    return np.where((n >= 2) & (tx != tot) & (ty != tot), tau, np.nan)


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
    return np.ascontiguousarray(a.reshape(-1, n)), np.ascontiguousarray(b.reshape(-1, n)), lead


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


def _pairwise_accuracy_counts(P, ref, taus):
    """Per context: (sum of agreement, number of pairs) over present pairs with differing refs."""
    n_contexts = P.shape[0]
    d = _decide_rows(P.reshape(n_contexts, -1), taus).reshape(P.shape)
    ri = ref[:, :, None]
    rj = ref[:, None, :]
    use = np.isfinite(P) & np.isfinite(ri) & np.isfinite(rj) & (ri != rj)
    hit = np.where(use, np.where(ri > rj, d, 1.0 - d), 0.0)
    return hit.sum(axis=(1, 2)), use.sum(axis=(1, 2)).astype(np.float64)


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
    hits, counts = _pairwise_accuracy_counts(P, ref, taus)
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

"""Flat Bradley–Terry at arena scale: aggregate first, fit the small problem, resample counts.

The log-likelihood of flat comparisons is additive in the weights and ignores the
presentation order, so comparisons are first folded into *cells* without changing it: a
comparison (first=j, second=i, outcome y) is the comparison (i, j, 1 - y) with i < j, and
identical comparisons add up.

* plain fit: one edge per compared pair, with the summed win weight and weight (exact).
* bootstrap over comparisons: a cell is a distinct (pair, outcome, weight); drawing m
  comparisons with replacement is drawing multinomial counts over the cells with
  probabilities count / m.
* bootstrap over groups (e.g. contexts): a cell is a (group, pair) with summed weights;
  resampling groups is drawing multinomial counts over the groups, each with probability
  1 / n_groups, and every cell of a group gets its group's count.

The counts are drawn in a compiled loop (conditional binomials by Hörmann's BTRS, one
seeded xoshiro256** stream per replicate, so results do not depend on the number of
threads) and the replicate fits are
warm-started from the full fit: for up to ``DENSE_MAX_ITEMS`` items as a batch of dense
N x N Newton-Cholesky fits in parallel over replicates (``ranking.bradley_terry.dense.fit_batch``),
above that one sparse fit per replicate on the pair edges (``ranking.bradley_terry.flat.fit_flat``).
"""

from __future__ import annotations

from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import prange

from ranking._core.jit import njit

from .dense import _cholesky, _cholesky_solve, fit_batch
from .flat import _components_flat, fit_flat
from .multinomial import _draw_counts, _draw_row

# chord iterations (fixed Hessian) tried per replicate before its full Newton fit
_CHORD_MAX_ITER = 100

__all__ = ["Cells", "DENSE_MAX_ITEMS", "aggregate", "bootstrap_cells", "fold_pairs", "pair_totals"]

#: Up to this many items the bootstrap refits are dense Newton-Cholesky fits.
DENSE_MAX_ITEMS = 400
# comparisons above which the folding runs in two threads
_SPLIT_MIN = 1_000_000
# replicates per batch (bounds the memory of counts and dense win matrices)
_CHUNK = 125

#: Aggregated comparisons: cell c has pair (a[c], b[c]) with a < b, per-unit win weight
#: ``wy[c]`` and weight ``w[c]``, and belongs to resampling unit ``unit[c]``; unit u is drawn
#: with probability ``p[u]`` in each of ``n_draws`` draws; ``mult[c]``: the cell's
#: multiplicity in the data.
Cells = namedtuple("Cells", "a b wy w unit p n_draws n_units mult")


@njit
def _hash_cells(ea, eb, y, w, k2, k3, use_y, cap, out_key, out_a, out_b, out_wy, out_w, cnt):
    """Open-addressing aggregation keyed by (pair, k2, k3); -1 when over half full."""
    mask = cap - 1
    buf = np.empty(1)
    bits = buf.view(np.int64)
    used = np.zeros(cap, np.bool_)
    slot_of = np.empty(cap, np.int64)
    n_cells = 0
    m = ea.shape[0]
    for e in range(m):
        i = ea[e]
        j = eb[e]
        yy = y[e]
        if i > j:
            i, j = j, i
            yy = 1.0 - yy
        key1 = np.int64(i) * np.int64(1 << 31) + np.int64(j)
        key2 = k2[e]
        if use_y:
            buf[0] = yy
            key2 = bits[0]
        key3 = k3[e]
        h = np.uint64(key1) * np.uint64(0x9E3779B97F4A7C15)
        h ^= np.uint64(key2) * np.uint64(0xC2B2AE3D27D4EB4F)
        h ^= np.uint64(key3) * np.uint64(0x165667B19E3779F9)
        h ^= h >> np.uint64(29)
        s = np.int64(h & np.uint64(mask))
        while True:
            if not used[s]:
                if 2 * (n_cells + 1) > cap:
                    return -1
                used[s] = True
                c = n_cells
                slot_of[s] = c
                out_key[c, 0] = key1
                out_key[c, 1] = key2
                out_key[c, 2] = key3
                out_a[c] = i
                out_b[c] = j
                out_wy[c] = 0.0
                out_w[c] = 0.0
                cnt[c] = 0
                n_cells += 1
                break
            c = slot_of[s]
            if out_key[c, 0] == key1 and out_key[c, 1] == key2 and out_key[c, 2] == key3:
                break
            s = (s + 1) & mask
        if use_y:
            out_wy[c] = w[e] * yy  # per comparison: identical within the cell
            out_w[c] = w[e]
        else:
            out_wy[c] += w[e] * yy
            out_w[c] += w[e]
        cnt[c] += 1
    return n_cells


def _run_hash(ea, eb, y, w, k2, k3, use_y, limit):
    """Cells of the comparisons (see :func:`_hash_cells`); two halves hashed in two threads
    and merged when there are many comparisons."""
    m = ea.size
    if m < _SPLIT_MIN:
        return _run_hash_serial(ea, eb, y, w, k2, k3, use_y, limit)
    h = m // 2
    halves = [slice(0, h), slice(h, m)]
    with ThreadPoolExecutor(2) as pool:
        parts = list(
            pool.map(
                lambda sl: _run_hash_serial(
                    ea[sl], eb[sl], y[sl], w[sl], k2[sl], k3[sl], use_y, limit
                ),
                halves,
            )
        )
    if any(part is None for part in parts):
        return None
    key = np.concatenate([part[0] for part in parts])
    uniq, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    if uniq.shape[0] > limit:
        return None
    cat = [np.concatenate([part[i] for part in parts]) for i in range(1, 6)]
    a, b, wy, ww, cnt = cat
    n = uniq.shape[0]
    cnt_sum = np.bincount(inv, weights=cnt, minlength=n).astype(np.int64)
    if use_y:  # per-comparison values, identical within a cell
        return uniq, a[first], b[first], wy[first], ww[first], cnt_sum
    return (
        uniq, a[first], b[first], np.bincount(inv, weights=wy, minlength=n),
        np.bincount(inv, weights=ww, minlength=n), cnt_sum,
    )  # fmt: skip


def _run_hash_serial(ea, eb, y, w, k2, k3, use_y, limit):
    cap = 1 << max(12, min(17, int(2 * ea.size).bit_length()))
    while True:
        key = np.empty((cap // 2, 3), np.int64)
        a = np.empty(cap // 2, np.int64)
        b = np.empty(cap // 2, np.int64)
        wy = np.empty(cap // 2)
        ww = np.empty(cap // 2)
        cnt = np.empty(cap // 2, np.int64)
        n = _hash_cells(ea, eb, y, w, k2, k3, use_y, cap, key, a, b, wy, ww, cnt)
        if n > limit:
            return None
        if n >= 0:
            return key[:n], a[:n], b[:n], wy[:n], ww[:n], cnt[:n]
        if cap // 2 >= limit:
            return None
        cap *= 4


def aggregate(ei, ej, y, w, *, groups=None, limit=None):
    """The :data:`Cells` of checked flat comparisons, or None when folding does not pay.

    Without ``groups`` the cells are the distinct (pair, outcome, weight) and the units are
    the cells (probability count / m); None when there are more than ``limit`` (default
    m / 4) distinct cells. With ``groups`` (integer codes 0..G-1 per comparison) the cells
    are the (group, pair) with summed weights and the units are the groups (never None).
    """
    m = ei.size
    zeros = np.zeros(m, np.int64)
    if groups is None:
        wbits = np.ascontiguousarray(w).view(np.int64)
        got = _run_hash(ei, ej, y, w, zeros, wbits, True, m // 4 if limit is None else limit)
        if got is None:
            return None
        _, a, b, wy, ww, cnt = got
        return Cells(a, b, wy, ww, np.arange(a.size), cnt / m, m, a.size, cnt)
    g = np.ascontiguousarray(groups, dtype=np.int64)
    key, a, b, wy, ww, _ = _run_hash(ei, ej, y, w, g, zeros, False, 2 * m + 8)
    # groups with no comparison hold nothing: the units are the groups that occur
    present, unit = np.unique(key[:, 1], return_inverse=True)
    n_units = present.size
    p = np.full(n_units, 1.0 / n_units)
    return Cells(a, b, wy, ww, unit, p, n_units, n_units, np.ones(a.size, np.int64))


def fold_pairs(ei, ej, y, w):
    """One edge per compared pair (a < b, summed win weight and weight), or None when there
    are more than m / 4 pairs (folding does not pay). Exact for the likelihood."""
    m = ei.size
    zeros = np.zeros(m, np.int64)
    got = _run_hash(ei, ej, y, w, zeros, zeros, False, m // 4)
    if got is None:
        return None
    _, a, b, wy, ww, _ = got
    return a, b, wy, ww


def pair_totals(cells):
    """(a, b, wy, w) of the pairs, totals over the cells (what :func:`fold_pairs` gives)."""
    return _fold_pairs(cells.a, cells.b, cells.wy * cells.mult, cells.w * cells.mult)[:4]


def _fold_pairs(a, b, wy, w):
    key = a.astype(np.int64) * (1 << 31) + b
    uniq, inv = np.unique(key, return_inverse=True)
    return (
        (uniq >> 31).astype(np.int64),
        (uniq & ((1 << 31) - 1)).astype(np.int64),
        np.bincount(inv, weights=wy, minlength=uniq.size),
        np.bincount(inv, weights=w, minlength=uniq.size),
        inv,
    )


@njit(parallel=True)
def _replicate_W(counts, unit, pair, pa, pb, wy, w, n):
    """Dense win matrices (B, n, n) of the replicates from unit counts."""
    B = counts.shape[0]
    W = np.zeros((B, n, n))
    for r in prange(B):
        for c in range(unit.shape[0]):
            k = counts[r, unit[c]]
            if k == 0:
                continue
            q = pair[c]
            W[r, pa[q], pb[q]] += k * wy[c]
            W[r, pb[q], pa[q]] += k * (w[c] - wy[c])
    return W


@njit(error_model="numpy")
def _chord_one(cnt, unit, pair, pa, pb, wy, w, n_pairs, L, theta0, ridge, tol, th):
    """One replicate (unit counts ``cnt``) by chord Newton: theta += (H0 + J)^-1 g(theta),
    H0 the full data's Hessian (factor ``L``), from ``theta0`` into ``th``. Converges to the
    replicate's MLE (g = 0). False where the replicate's graph is not one component or the
    iteration did not converge (the caller refits those in full)."""
    n = theta0.shape[0]
    ewy = np.zeros(n_pairs)
    ew = np.zeros(n_pairs)
    for c in range(unit.shape[0]):
        k = cnt[unit[c]]
        if k != 0:
            ewy[pair[c]] += k * wy[c]
            ew[pair[c]] += k * w[c]
    dropped = False
    for q in range(n_pairs):
        if ew[q] == 0.0:
            dropped = True
            break
    if dropped:  # the graph may have changed: check it is still one component
        comp, n_comp = _components_flat(pa, pb, ew, n)
        if n_comp != 1:
            return False
        for i in range(n):
            if comp[i] < 0:
                return False
    for i in range(n):
        th[i] = theta0[i]
    g = np.empty(n)
    step = np.empty(n)
    ok = False
    for _ in range(_CHORD_MAX_ITER):
        for i in range(n):
            g[i] = -ridge * th[i]
        for q in range(n_pairs):
            if ew[q] == 0.0:
                continue
            sq = 1.0 / (1.0 + np.exp(th[pb[q]] - th[pa[q]]))
            res = ewy[q] - ew[q] * sq
            g[pa[q]] += res
            g[pb[q]] -= res
        _cholesky_solve(L, g, step)
        big = 0.0
        mean = 0.0
        for i in range(n):
            mean += step[i]
        mean = mean / n if ridge == 0.0 else 0.0
        for i in range(n):
            d = step[i] - mean
            th[i] += d
            if abs(d) > big:
                big = abs(d)
        if big < tol:
            ok = True
            break
    if ridge == 0.0:
        m = 0.0
        for i in range(n):
            m += th[i]
        for i in range(n):
            th[i] -= m / n
    return ok


@njit(parallel=True, error_model="numpy")
def _chord_fits(counts, unit, pair, pa, pb, wy, w, n_pairs, L, theta0, ridge, tol, out, ok):
    """:func:`_chord_one` for every row of the given unit ``counts``."""
    for r in prange(counts.shape[0]):
        ok[r] = _chord_one(counts[r], unit, pair, pa, pb, wy, w, n_pairs, L, theta0, ridge,
                           tol, out[r])  # fmt: skip


@njit(parallel=True, error_model="numpy")
def _draw_and_chord(n_draws, p, seeds, unit, pair, pa, pb, wy, w, n_pairs, L, theta0, ridge,
                    tol, out, ok):  # fmt: skip
    """Draw each replicate's counts (:func:`_draw_row`) and fit it (:func:`_chord_one`) in
    one pass, the counts kept in a per-replicate buffer rather than a large array."""
    for r in prange(seeds.shape[0]):
        cnt = np.empty(p.shape[0], np.int64)
        _draw_row(n_draws, p, seeds[r], cnt)
        ok[r] = _chord_one(cnt, unit, pair, pa, pb, wy, w, n_pairs, L, theta0, ridge, tol,
                           out[r])  # fmt: skip


def _chord_factor(pa, pb, wy_tot, w_tot, theta, ridge):
    """Lower Cholesky factor of the full data's negative Hessian (+ the gauge 11^T / n)."""
    n = theta.size
    s = 1.0 / (1.0 + np.exp(-(theta[pa] - theta[pb])))
    h = w_tot * s * (1.0 - s)
    H = np.zeros((n, n))
    np.add.at(H, (pa, pb), -h)
    np.add.at(H, (pb, pa), -h)
    H[np.diag_indices(n)] = -H.sum(axis=1) + ridge
    if ridge == 0.0:
        H += 1.0 / n
    L = np.zeros((n, n))
    return L if _cholesky(H, L) else None


@njit
def _replicate_edges(counts_row, unit, pair, wy, w, n_pairs):
    ewy = np.zeros(n_pairs)
    ew = np.zeros(n_pairs)
    for c in range(unit.shape[0]):
        k = counts_row[unit[c]]
        ewy[pair[c]] += k * wy[c]
        ew[pair[c]] += k * w[c]
    return ewy, ew


def draw_counts(cells, n_boot, rng):
    """(n_boot, n_units) multinomial unit counts, seeded from the numpy Generator ``rng``."""
    seeds = rng.integers(0, 2**31 - 1, n_boot)
    out = np.empty((n_boot, cells.n_units), np.int64)
    for s in range(0, n_boot, _CHUNK):
        _draw_counts(cells.n_draws, cells.p, seeds[s : s + _CHUNK], out[s : s + _CHUNK])
    return out


def bootstrap_cells(
    cells, n_items, theta, ridge, max_iter, tol, n_boot, rng, counts=None, chord=True
):
    """(n_boot, n_items) refits of the replicates, warm-started from ``theta``.

    ``counts`` (n_boot, n_units) replaces the random draws (the tests' fixed resamples).
    With ``chord`` (the full fit is one component with a finite MLE) the replicates are
    first fitted by chord Newton with the full data's Hessian; any replicate whose graph
    differs or that does not converge is refitted by full damped Newton, as without it.
    """
    pa, pb, _, _, pair = _fold_pairs(cells.a, cells.b, cells.wy, cells.w)
    if counts is None:
        seeds = rng.integers(0, 2**31 - 1, n_boot)
    else:
        counts = np.asarray(counts, dtype=np.int64)
        n_boot = counts.shape[0]
    samples = np.empty((n_boot, n_items))
    unit = cells.unit.astype(np.int64)
    L = None
    one_component = chord and np.isfinite(theta).all() and n_items <= DENSE_MAX_ITEMS
    if one_component:
        _, _, fwy, fw, _ = _fold_pairs(
            cells.a, cells.b, cells.wy * cells.mult, cells.w * cells.mult
        )
        comp, n_comp = _components_flat(pa, pb, fw, n_items)
        if n_comp == 1 and np.all(comp >= 0):
            L = _chord_factor(pa, pb, fwy, fw, theta, float(ridge))
    for s in range(0, n_boot, _CHUNK):
        size = min(_CHUNK, n_boot - s)
        rows = s + np.arange(size)
        cnt = None
        if L is not None:
            out = np.empty((size, n_items))
            ok = np.zeros(size, np.bool_)
            if counts is None:
                _draw_and_chord(cells.n_draws, cells.p, seeds[rows], unit, pair, pa, pb,
                                cells.wy, cells.w, pa.size, L, theta, float(ridge), tol, out,
                                ok)  # fmt: skip
            else:
                _chord_fits(counts[rows], unit, pair, pa, pb, cells.wy, cells.w, pa.size, L,
                            theta, float(ridge), tol, out, ok)  # fmt: skip
            samples[rows] = out
            if ok.all():
                continue
            rows = rows[~ok]
        if counts is None:  # (again) the counts of the replicates left to fit in full
            cnt = np.empty((rows.size, cells.n_units), np.int64)
            _draw_counts(cells.n_draws, cells.p, seeds[rows], cnt)
        else:
            cnt = counts[rows]
        if n_items <= DENSE_MAX_ITEMS:
            W = _replicate_W(cnt, unit, pair, pa, pb, cells.wy, cells.w, n_items)
            th = np.ascontiguousarray(np.broadcast_to(theta, (rows.size, n_items)).copy())
            fit_batch(W, float(ridge), max_iter, tol, th, True)
            samples[rows] = th
        else:
            for r in range(rows.size):
                ewy, ew = _replicate_edges(cnt[r], unit, pair, cells.wy, cells.w, pa.size)
                keep = ew > 0
                samples[rows[r]] = fit_flat(
                    pa[keep], pb[keep], ewy[keep], ew[keep], n_items, float(ridge), max_iter,
                    tol, theta0=theta,
                )[0]  # fmt: skip
    return samples

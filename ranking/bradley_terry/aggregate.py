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

The folding is numpy: every comparison gets an integer code ordered as (pair, outcome or
group, weight), counted by ``np.bincount`` when the codes are few and sorted otherwise.

The bootstrap is one compiled kernel, :func:`_boot_kernel`: it draws each replicate's counts
(conditional binomials by Hörmann's BTRS, one seeded xoshiro256** stream per replicate, so
results do not depend on the number of threads; ``ranking.bradley_terry.multinomial``) and
refits the replicate by chord Newton with the full data's Hessian factor, warm-started from
the full fit, in one pass (in parallel over replicates for big batches). A replicate whose
comparison graph changed, or that did not converge, is refitted in full: for up to
``DENSE_MAX_ITEMS`` items as a stack of dense problems in numpy
(``ranking.bradley_terry.stacked``), above that by one sparse fit per replicate on the pair
edges (``ranking.bradley_terry.flat.fit_flat``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import prange

from ranking._core.jit import PARALLEL_MIN_WORK, batch_kernel

from .dense import _cholesky_solve
from .flat import fit_flat
from .graph import components, information
from .multinomial import _draw_row
from .stacked import cholesky, fit_stack

# chord iterations (fixed Hessian) tried per replicate before its full Newton fit
_CHORD_MAX_ITER = 100

__all__ = ["Cells", "DENSE_MAX_ITEMS", "aggregate", "bootstrap_cells", "fold_pairs", "pair_totals"]

#: Up to this many items the full refits of replicates are dense problems (numpy).
DENSE_MAX_ITEMS = 400
# From this many comparisons on the cells are ordered by their key (the order the former
# two-thread folding gave), below by first occurrence: the bootstrap draws follow that order.
_SPLIT_MIN = 1_000_000
# replicates per batch (bounds the memory of counts and dense win matrices)
_CHUNK = 125
# the codes of the comparisons are counted by np.bincount up to this range, sorted above it
_BINCOUNT_MAX = 1 << 24
# codes (pair, outcome or group, weight) up to this range fit an int64
_CODE_MAX = 1 << 62

#: Aggregated comparisons: cell c has pair (a[c], b[c]) with a < b, per-unit win weight
#: ``wy[c]`` and weight ``w[c]``, and belongs to resampling unit ``unit[c]``; unit u is drawn
#: with probability ``p[u]`` in each of ``n_draws`` draws; ``mult[c]``: the cell's
#: multiplicity in the data.
Cells = namedtuple("Cells", "a b wy w unit p n_draws n_units mult")


def _factorize(keys):
    """(distinct int64 keys sorted, code of every key): a sample guesses the few distinct
    values (outcomes, weights), checked exactly on all; a full sort otherwise. None: all 0."""
    if keys is None:
        return np.zeros(1, np.int64), 0
    few = np.unique(keys[:: max(1, keys.size // 4096)])
    if few.size <= 64:
        code = np.minimum(np.searchsorted(few, keys), few.size - 1)
        if np.array_equal(few[code], keys):
            return few, code
    few, code = np.unique(keys, return_inverse=True)
    return few, code.ravel()


def _run_hash(ea, eb, y, w, k2, k3, use_y, limit, by_key=None):
    """The cells of the comparisons keyed by (pair, k2, k3), or None when more than ``limit``.

    Returns (key (n, 3), a, b, wy, w, count) per cell: key = (a * 2**31 + b, k2, k3) with
    a < b (k2 = the bits of the outcome seen from a when ``use_y``); ``wy`` and ``w`` are the
    summed win weight and weight, or with ``use_y`` those of one comparison (all equal
    within a cell). The cells come in the order of their key when ``by_key`` (default: from
    ``_SPLIT_MIN`` comparisons on, the sums then run over each half of the comparisons and
    are added, as the former two-thread folding did), else in the order of their first
    comparison with the sums in the order of the comparisons. The bootstrap draws its counts
    cell by cell, so this order is part of what a seed gives.
    """
    m = ea.size
    by_key = m >= _SPLIT_MIN if by_key is None else by_key
    halves = (slice(0, m // 2), slice(m // 2, m)) if by_key and m >= _SPLIT_MIN else None
    a = np.minimum(ea, eb).astype(np.int64)
    b = np.maximum(ea, eb)
    yy = np.where(ea > eb, 1.0 - y, y)
    v2, c2 = _factorize(np.ascontiguousarray(yy).view(np.int64) if use_y else k2)
    v3, c3 = _factorize(k3)
    c2, c3 = np.broadcast_to(c2, m), np.broadcast_to(c3, m)
    n = int(b.max()) + 1
    span = n * n * v2.size * v3.size
    rows = span >= _CODE_MAX  # the codes would overflow: number the distinct rows instead
    if rows:
        b = b.astype(np.int64)
        order = np.lexsort((c3, c2, b, a))
        keys = np.stack([a[order], b[order], c2[order], c3[order]], axis=1)
        new = np.r_[True, (np.diff(keys, axis=0) != 0).any(axis=1)]
        code = np.empty(m, np.int64)
        code[order] = np.cumsum(new) - 1
    else:
        code = a * n
        code += b
        if v2.size > 1:
            code *= v2.size
            code += c2
        if v3.size > 1:
            code *= v3.size
            code += c3
    bincount = by_key and not rows and span <= min(_BINCOUNT_MAX, 4 * m + 4096)
    if not bincount and 2 * limit < m and np.unique(code[: m // 2]).size > limit:
        return None  # more than ``limit`` cells among the first half of the comparisons
    if bincount:
        cnt = np.bincount(code, minlength=span)
        uniq = np.flatnonzero(cnt)
        if uniq.size > limit:
            return None
        cnt = cnt[uniq]
        cells, size, pick = code, span, uniq
    elif by_key and not rows:  # the order of the keys: no first occurrences needed
        uniq, cell = np.unique(code, return_inverse=True)
        cell = cell.ravel()
        if uniq.size > limit:
            return None
        cnt = np.bincount(cell, minlength=uniq.size)
        cells, size, pick = cell, uniq.size, None

    else:
        uniq, first, cell = np.unique(code, return_index=True, return_inverse=True)
        cell = cell.ravel()
        if not by_key:
            order = np.argsort(first, kind="stable")
            rank = np.empty(uniq.size, np.int64)
            rank[order] = np.arange(uniq.size)
            uniq, first, cell = uniq[order], first[order], rank[cell]
        if uniq.size > limit:
            return None
        cnt = np.bincount(cell, minlength=uniq.size)
        cells, size, pick = cell, uniq.size, None

    def total(x):  # the sums of x per cell, in the order of ``uniq``
        if halves is None:
            t = np.bincount(cells, x, size)
        else:
            t = sum(np.bincount(cells[sl], x[sl], size) for sl in halves)
        return t if pick is None else t[pick]

    if rows:
        ca, cb, k2c, k3c = a[first], b[first], v2[c2[first]], v3[c3[first]]
    else:
        k3c = v3[uniq % v3.size]
        k2c = v2[uniq // v3.size % v2.size]
        ca, cb = np.divmod(uniq // v3.size // v2.size, n)
    key = np.stack([ca * (1 << 31) + cb, k2c, k3c], axis=1)
    cnt = cnt.astype(np.int64)
    if use_y:  # one comparison's values: the same for every comparison of the cell
        wc = k3c.view(np.float64)
        return key, ca, cb, wc * k2c.view(np.float64), wc, cnt
    return key, ca, cb, total(w * yy), total(w), cnt


def _run_hash_serial(ea, eb, y, w, k2, k3, use_y, limit):
    """:func:`_run_hash` with the cells in the order of their first comparison."""
    return _run_hash(ea, eb, y, w, k2, k3, use_y, limit, by_key=False)


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
    got = _run_hash(ei, ej, y, w, None, None, False, m // 4, by_key=True)
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


def _boot_work(n_draws, p, seeds, counts, draw, unit, pair, pa, pb, wy, w, L, *rest):
    """Serial nanoseconds, roughly: a draw per unit, about ten chord passes over the cells
    and pairs (with a factor) and the triangular solves."""
    n = L.shape[0]
    fit = 10 * (unit.shape[0] + pa.shape[0] + n * n) if n else 0
    return seeds.shape[0] * (20 * p.shape[0] * draw + 5 * fit)


# the parallel compilation (seconds on a fresh install) only from about 0.2 s of serial work
# (an arena's 1,000 replicates; a page's 200 replicates of a few thousand cells stay serial)
@batch_kernel(work=_boot_work, min_work=10 * PARALLEL_MIN_WORK, error_model="numpy")
def _boot_kernel(n_draws, p, seeds, counts, draw, unit, pair, pa, pb, wy, w, L, theta0, ridge,
                 tol, out, ok, ewy, ew, g, step, parent):  # fmt: skip
    """The bootstrap replicates r of a flat fit, in one pass: with ``draw`` its unit counts
    ``counts[r]`` ~ Multinomial(n_draws, p) from the stream seeded by ``seeds[r]``
    (``ranking.bradley_terry.multinomial._draw_row``; else ``counts[r]`` is given); with a
    factor ``L`` (n x n, else 0 x 0) its fit by chord Newton, theta += (H0 + J)^-1 g(theta),
    H0 the full data's negative Hessian (lower Cholesky factor ``L``, J the gauge 11^T / n
    when ridge is 0), from ``theta0`` into ``out[r]``, until max |step| < tol. The fixed
    point is the replicate's MLE (g = 0). ``ok[r]`` is False where the replicate's graph is
    not one component holding every item, or the iteration did not converge in
    ``_CHORD_MAX_ITER`` (the caller refits those in full). ``ewy``, ``ew`` (per replicate
    and pair), ``g``, ``step`` and ``parent`` (per replicate and item) are scratch.
    Everything is allocated by the caller: one signature, nothing else to compile.
    """
    n = L.shape[0]
    n_pairs = pa.shape[0]
    for r in prange(seeds.shape[0]):
        cnt = counts[r]
        if draw:
            _draw_row(n_draws, p, seeds[r], cnt)
        if n == 0:
            continue
        # the replicate's pair edges
        rwy = ewy[r]
        rw = ew[r]
        for q in range(n_pairs):
            rwy[q] = 0.0
            rw[q] = 0.0
        for c in range(unit.shape[0]):
            k = cnt[unit[c]]
            if k != 0:
                rwy[pair[c]] += k * wy[c]
                rw[pair[c]] += k * w[c]
        # a pair not drawn may split the graph: is it still one component holding every item?
        dropped = False
        for q in range(n_pairs):
            if rw[q] == 0.0:
                dropped = True
                break
        rg = g[r]
        rs = step[r]
        th = out[r]
        ok[r] = False
        if dropped:
            par = parent[r]
            for i in range(n):
                par[i] = i
            for q in range(n_pairs):
                if rw[q] > 0.0:
                    x = pa[q]
                    while par[x] != x:
                        par[x] = par[par[x]]
                        x = par[x]
                    y = pb[q]
                    while par[y] != y:
                        par[y] = par[par[y]]
                        y = par[y]
                    if x < y:
                        par[y] = x
                    elif y < x:
                        par[x] = y
            roots = 0
            for i in range(n):
                if par[i] == i:
                    roots += 1
            if roots != 1:
                continue
        for i in range(n):
            th[i] = theta0[i]
        for _ in range(_CHORD_MAX_ITER):
            for i in range(n):
                rg[i] = -ridge * th[i]
            for q in range(n_pairs):
                if rw[q] == 0.0:
                    continue
                sq = 1.0 / (1.0 + np.exp(th[pb[q]] - th[pa[q]]))
                res = rwy[q] - rw[q] * sq
                rg[pa[q]] += res
                rg[pb[q]] -= res
            _cholesky_solve(L, rg, rs)  # step = (L L^T)^-1 g
            big = 0.0
            mean = 0.0
            for i in range(n):
                mean += rs[i]
            mean = mean / n if ridge == 0.0 else 0.0
            for i in range(n):
                d = rs[i] - mean
                th[i] += d
                if abs(d) > big:
                    big = abs(d)
            if big < tol:
                ok[r] = True
                break
        if ridge == 0.0:
            tot = 0.0
            for i in range(n):
                tot += th[i]
            for i in range(n):
                th[i] -= tot / n


def _run_boot(cells, seeds, counts, draw, chord=None):
    """:func:`_boot_kernel` on the replicates of ``seeds`` (draws into ``counts``) or of the
    given ``counts``; ``chord``: (unit, pair, pa, pb, L, theta, ridge, tol, out, ok) to fit."""
    rows = counts.shape[0]
    if chord is None:
        unit = pair = pa = pb = np.zeros(0, np.int64)
        L, theta, ridge, tol = np.zeros((0, 0)), np.zeros(0), 0.0, 0.0
        out, ok = np.zeros((rows, 0)), np.zeros(rows, np.bool_)
        wy = w = np.zeros(0)
    else:
        unit, pair, pa, pb, L, theta, ridge, tol, out, ok = chord
        wy, w = cells.wy, cells.w
    n, n_pairs = L.shape[0], pa.size
    _boot_kernel(
        np.int64(cells.n_draws), np.ascontiguousarray(cells.p, dtype=np.float64),
        np.ascontiguousarray(seeds, dtype=np.int64), counts, bool(draw), unit, pair, pa, pb,
        np.ascontiguousarray(wy, dtype=np.float64), np.ascontiguousarray(w, dtype=np.float64),
        L, theta, float(ridge), float(tol), out, ok, np.empty((rows, n_pairs)),
        np.empty((rows, n_pairs)), np.empty((rows, n)), np.empty((rows, n)),
        np.empty((rows, n), np.int64),
    )  # fmt: skip


def _chord_factor(pa, pb, wy_tot, w_tot, theta, ridge):
    """Lower Cholesky factor of the full data's negative Hessian (+ the gauge 11^T / n), or
    None when it is not numerically positive definite."""
    H = information(pa, pb, w_tot, theta, ridge)
    if ridge == 0.0:
        H += 1.0 / theta.size
    L, ok = cholesky(H[None])
    return L[0] if ok[0] else None


def draw_counts(cells, n_boot, rng):
    """(n_boot, n_units) multinomial unit counts, seeded from the numpy Generator ``rng``."""
    seeds = rng.integers(0, 2**31 - 1, n_boot)
    out = np.empty((n_boot, cells.n_units), np.int64)
    for s in range(0, n_boot, _CHUNK):
        _run_boot(cells, seeds[s : s + _CHUNK], out[s : s + _CHUNK], True)
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
    pair = pair.astype(np.int64)
    if counts is None:
        seeds = rng.integers(0, 2**31 - 1, n_boot)
    else:
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        n_boot = counts.shape[0]
        seeds = np.zeros(n_boot, np.int64)
    samples = np.empty((n_boot, n_items))
    unit = np.ascontiguousarray(cells.unit, dtype=np.int64)
    L = None
    one_component = chord and np.isfinite(theta).all() and n_items <= DENSE_MAX_ITEMS
    if one_component:
        _, _, fwy, fw, _ = _fold_pairs(
            cells.a, cells.b, cells.wy * cells.mult, cells.w * cells.mult
        )
        comp, n_comp = components(pa, pb, fw, n_items)
        if n_comp == 1 and np.all(comp >= 0):
            L = _chord_factor(pa, pb, fwy, fw, theta, float(ridge))
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    for s in range(0, n_boot, _CHUNK):
        rows = np.arange(s, min(n_boot, s + _CHUNK))
        cnt = np.empty((rows.size, cells.n_units), np.int64) if counts is None else counts[rows]
        if L is not None:
            out = np.empty((rows.size, n_items))
            ok = np.zeros(rows.size, np.bool_)
            fit = (unit, pair, pa, pb, L, theta, float(ridge), tol, out, ok)
            _run_boot(cells, seeds[rows], cnt, counts is None, fit)
            samples[rows] = out
            if ok.all():
                continue
            rows, cnt = rows[~ok], cnt[~ok]
        elif counts is None:
            _run_boot(cells, seeds[rows], cnt, True)
        # replicate edges: unit counts spread over the cells, summed per pair
        k = cnt[:, unit].astype(np.float64)
        ewy = _pair_sums(k * cells.wy, pair, pa.size)
        if n_items <= DENSE_MAX_ITEMS:
            W = np.zeros((rows.size, n_items, n_items))
            W[:, pa, pb] = ewy
            W[:, pb, pa] = _pair_sums(k * (cells.w - cells.wy), pair, pa.size)
            th = np.ascontiguousarray(np.broadcast_to(theta, (rows.size, n_items)).copy())
            fit_stack(W, float(ridge), max_iter, tol, th, True)
            samples[rows] = th
        else:
            ew = _pair_sums(k * cells.w, pair, pa.size)
            for r in range(rows.size):
                keep = ew[r] > 0
                samples[rows[r]] = fit_flat(
                    pa[keep], pb[keep], ewy[r, keep], ew[r, keep], n_items, float(ridge),
                    max_iter, tol, theta0=theta,
                )[0]  # fmt: skip
    return samples


def _pair_sums(values, pair, n_pairs):
    """Row-wise sums of ``values`` (rows, cells) over the cells of every pair."""
    rows = values.shape[0]
    index = (np.arange(rows)[:, None] * n_pairs + pair).ravel()
    return np.bincount(index, values.ravel(), rows * n_pairs).reshape(rows, n_pairs)

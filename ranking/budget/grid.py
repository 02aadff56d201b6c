"""The numba kernels of the budget curves: every draw and budget in one pass per strategy.

``ranking.budget.budget_curves`` hands these kernels, per strategy, the comparison sequences
``orders`` (n_draws, n_contexts, L) of ordered-pair codes i * N + j (a budget R uses the
first R codes of a context's sequence) and ``eval_r``, the comparisons each budget actually
uses (-1 where the strategy cannot spend it).

* The pooled balanced threshold along the budget: all comparisons seen so far in a draw (all
  contexts pooled) sit in a Fenwick tree over the sorted probabilities, so the median, hence
  the threshold, costs log time per budget.
* The win-ratio grid: parallel over draws; per context the win counts grow incrementally with
  the budget, and with debias only the comparisons whose decision the moved threshold changes
  are revisited.
* The product-of-experts grid: the Gaussian posterior mean of ``adaptive_rank``, updated
  rank one per comparison along the sequence (a comparison of weight w: noise variance 1 / w).

The win-ratio, product-of-experts and Bradley–Terry grids take the weight of every comparison
(P's shape; ones without weights): a weighted comparison spends one comparison of the budget.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ranking._core.jit import PARALLEL_MIN_WORK, batch_kernel, njit

from .selection import _poe_init, _poe_update

#: Small helpers, and those with one caller, are inlined into their callers (numba IR
#: inlining): a page's first visit compiles the kernels and the few shared helpers, not one
#: function per helper (issue 26). Larger helpers with several callers stay functions of
#: their own (compiled once, not typed again at every call site).
inline = njit(inline="always")


# ---------------------------------------------------------------------------------------
# Compiled twins of the row statistics the grid needs per budget (the public, vectorised
# versions live in ranking._core.decisions, ranking.bias.position, ranking.agreement.metrics;
# the tests check the grid against them). No sorting, no allocation in the hot ones.
# ---------------------------------------------------------------------------------------


@inline
def _decide(p, tau):
    """Hard decision for the first candidate: 1 if p > tau, 0 if p < tau, 0.5 on a tie."""
    if p > tau:
        return 1.0
    if p < tau:
        return 0.0
    return 0.5


@inline
def _closest_to_balanced(n, n_below, n_above, t, up, down):
    """``ranking.bias.position._closest_to_balanced`` for one threshold."""
    n_equal = n - n_above - n_below
    best = t
    err = abs(2 * n_above + n_equal - n)
    if n_above > 0:
        e_up = abs(2 * n_above - n)
        if e_up < err:
            best = 0.5 * (t + up)
            err = e_up
    if n_below > 0:
        e_dn = abs(2 * (n_above + n_equal) - n)
        if e_dn < err:
            best = 0.5 * (down + t)
            err = e_dn
    return best


@inline
def _doubled_centred_rank(x, n, a):
    """2 * (average rank of x[a] - mean rank) among x[:n], as an integer (a count, no sort)."""
    xa = x[a]
    acc = 0
    for b in range(n):
        xb = x[b]
        acc += 2 * (xb < xa) + (xb == xa)
    # 2 * rank = 2 * (number below) + (number equal, self included) + 1; mean rank (n+1)/2
    return acc - n


@inline
def _rho(num, ss, ref_ss):
    if ss == 0 or ref_ss == 0:
        return np.nan
    rho = num / math.sqrt(float(ss) * float(ref_ss))
    if rho > 1.0:
        return 1.0
    if rho < -1.0:
        return -1.0
    return rho


@njit
def _spearman_preranked(x, n, ref_rc, ref_ss):
    """Spearman rho of x[:n] against reference ranks given as doubled centred ranks
    (``ranking.agreement.metrics._doubled_centred_ranks``) with sum of squares ``ref_ss``."""
    num = 0
    ss = 0
    for a in range(n):
        r = _doubled_centred_rank(x, n, a)
        num += r * ref_rc[a]
        ss += r * r
    return _rho(num, ss, ref_ss)


@inline
def _finite_pairs(a, b, xa, xb):
    """The positions finite in both a and b, packed into xa, xb; returns their number."""
    n = 0
    for k in range(a.shape[0]):
        if math.isfinite(a[k]) and math.isfinite(b[k]):
            xa[n] = a[k]
            xb[n] = b[k]
            n += 1
    return n


@njit
def _spearman_row(a, b, xa, xb):
    """``ranking.spearman`` of two rows (equal to it bit for bit: exact integer ranks);
    xa, xb are scratch of the rows' length."""
    n = _finite_pairs(a, b, xa, xb)
    if n < 2:
        return np.nan
    num = 0
    ssa = 0
    ssb = 0
    for k in range(n):
        ra = _doubled_centred_rank(xa, n, k)
        rb = _doubled_centred_rank(xb, n, k)
        num += ra * rb
        ssa += ra * ra
        ssb += rb * rb
    return _rho(num, ssa, ssb)


@njit
def _kendall_row(a, b, xa, xb):
    """``ranking.kendall`` (tau-b) of two rows; xa, xb are scratch of the rows' length."""
    n = _finite_pairs(a, b, xa, xb)
    if n < 2:
        return np.nan
    c = 0
    n_tx = 0
    n_ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = xa[i] - xa[j]
            dy = xb[i] - xb[j]
            if dx == 0.0:
                n_tx += 1
            if dy == 0.0:
                n_ty += 1
            if dx != 0.0 and dy != 0.0:
                if (dx > 0.0) == (dy > 0.0):
                    c += 1
                else:
                    c -= 1
    # counts as floats: exact, and (tot - tx) * (tot - ty) cannot overflow
    s = float(c)
    tx = float(n_tx)
    ty = float(n_ty)
    tot = 0.5 * n * (n - 1.0)
    if tx == tot or ty == tot:
        return np.nan
    return s / math.sqrt((tot - tx) * (tot - ty))


@njit
def _correlate(scores, ref_c, corr_code, xa, xb):
    """Spearman (corr_code 0) or Kendall tau-b of two rows, over the positions finite in both."""
    if corr_code == 0:
        return _spearman_row(scores, ref_c, xa, xb)
    return _kendall_row(scores, ref_c, xa, xb)


# ---------------------------------------------------------------------------------------
# Pooled balanced threshold along the budget (Fenwick tree over global value ranks)
# ---------------------------------------------------------------------------------------


@inline
def _bit_add(tree, pos):
    k = pos + 1
    m = tree.shape[0]
    while k < m:
        tree[k] += 1
        k += k & (-k)


@inline
def _bit_prefix(tree, pos):
    """Number of inserted ranks < pos."""
    s = 0
    k = pos
    while k > 0:
        s += tree[k]
        k -= k & (-k)
    return s


@njit
def _bit_kth(tree, kth, log2):
    """Rank of the kth (1-based) smallest inserted element."""
    pos = 0
    step = log2
    m = tree.shape[0]
    while step > 0:
        nxt = pos + step
        if nxt < m and tree[nxt] < kth:
            pos = nxt
            kth -= tree[nxt]
        step >>= 1
    return pos


@inline
def _tau_from_tree(tree, log2, n, gvals, grp_lo, grp_hi):
    """``ranking.bias.position._balanced_from_sorted`` on the tree's multiset (same rule)."""
    if n % 2 == 0:
        lo = gvals[_bit_kth(tree, n // 2, log2)]
        hi = gvals[_bit_kth(tree, n // 2 + 1, log2)]
        if lo != hi:
            return 0.5 * (lo + hi)
        r = _bit_kth(tree, n // 2, log2)
    else:
        r = _bit_kth(tree, n // 2 + 1, log2)
    t = gvals[r]
    n_below = _bit_prefix(tree, grp_lo[r])
    n_above = n - _bit_prefix(tree, grp_hi[r])
    up = gvals[_bit_kth(tree, n - n_above + 1, log2)] if n_above > 0 else t
    down = gvals[_bit_kth(tree, n_below, log2)] if n_below > 0 else t
    return _closest_to_balanced(n, n_below, n_above, t, up, down)


@inline
def _pooled_taus_draw(orders_d, n_avail, eval_r, grank, gvals, grp_lo, grp_hi, out):
    """Balanced threshold over all comparisons seen in one draw, at every budget."""
    n_contexts = orders_d.shape[0]
    m = gvals.shape[0]
    tree = np.zeros(m + 1, dtype=np.int64)
    log2 = 1
    while log2 * 2 <= m:
        log2 *= 2
    pos = np.zeros(n_contexts, dtype=np.int64)
    # np.int64, not a literal 0: numba's type inference would also compile the callees
    # for Literal[int](0) on its first pass (two compilations of _tau_from_tree and below)
    n_seen = np.int64(0)
    for k in range(eval_r.shape[0]):
        r = eval_r[k]
        if r < 0:
            out[k] = np.nan
            continue
        for c in range(n_contexts):
            target = min(r, n_avail[c])
            while pos[c] < target:
                _bit_add(tree, grank[c, orders_d[c, pos[c]]])
                pos[c] += 1
                n_seen += 1
        out[k] = _tau_from_tree(tree, log2, n_seen, gvals, grp_lo, grp_hi) if n_seen > 0 else np.nan


def _grid_work(P, ref, ok, orders, *rest):
    """Serial nanoseconds, roughly: about 80 ns per comparison of a draw's orders (a
    correlation per budget amortised over the comparisons it adds)."""
    return 80 * orders.size


@batch_kernel(work=lambda orders, *rest: 20 * orders.size, min_work=PARALLEL_MIN_WORK)
def _pooled_taus(orders, n_avail, eval_r, grank, gvals, grp_lo, grp_hi):
    n_draws = orders.shape[0]
    out = np.empty((n_draws, eval_r.shape[0]))
    for d in prange(n_draws):
        _pooled_taus_draw(orders[d], n_avail, eval_r, grank, gvals, grp_lo, grp_hi, out[d])
    return out


def _value_tables(P):
    """Sorted present values with tie groups, global ranks and per-context sorted lists."""
    n_contexts, n_items, _ = P.shape
    flat = P.reshape(n_contexts, n_items * n_items)
    present = np.isfinite(flat)
    vals = flat[present]
    order = np.argsort(vals, kind="stable")
    gvals = np.ascontiguousarray(vals[order])
    grank = np.full(flat.shape, -1, dtype=np.int64)
    ranks = np.empty(vals.size, dtype=np.int64)
    ranks[order] = np.arange(vals.size)
    grank[present] = ranks
    grp_lo = np.searchsorted(gvals, gvals, side="left").astype(np.int64)
    grp_hi = np.searchsorted(gvals, gvals, side="right").astype(np.int64)
    keyed = np.where(present, flat, np.inf)
    csort_codes = np.argsort(keyed, axis=1, kind="stable").astype(np.int64)
    csort_vals = np.ascontiguousarray(np.take_along_axis(keyed, csort_codes, axis=1))
    csort_n = present.sum(axis=1).astype(np.int64)
    return gvals, grank, grp_lo, grp_hi, csort_codes, csort_vals, csort_n


# ---------------------------------------------------------------------------------------
# The win-ratio grid kernel
# ---------------------------------------------------------------------------------------


@inline
def _first_not_below(v, x):
    """np.searchsorted(v, x, side="left") on a sorted v, by bisection (no numba internals);
    as numpy, NaN sorts after every number."""
    lo = 0
    hi = v.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if v[mid] < x or (x != x and v[mid] == v[mid]):
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline
def _soft_value(p, t, use_alpha, alpha):
    """Debiased soft win of the first candidate: alpha p / (alpha p + 1 - p)."""
    if not use_alpha:
        return _decide(p, t)
    num = alpha * p
    return num / (num + 1.0 - p)


@njit
def _context_reference(ref_c, ok_c, idx, ref_rc):
    """Valid items of a context into ``idx``; their doubled centred reference ranks into
    ``ref_rc``. Returns (n_valid, sum of squares of ref_rc)."""
    n = np.int64(0)  # not a literal 0 (see _pooled_taus_draw)
    for u in range(ref_c.shape[0]):
        if ok_c[u]:
            idx[n] = u
            n += 1
    ss = 0
    for a in range(n):
        xa = ref_c[idx[a]]
        acc = 0
        for b in range(n):
            xb = ref_c[idx[b]]
            acc += 2 * (xb < xa) + (xb == xa)
        ref_rc[a] = acc - n  # _doubled_centred_rank of the valid reference values
        ss += ref_rc[a] * ref_rc[a]
    return n, ss


@inline
def _winratio_context(
    P_c,
    W_c,
    ref_c,
    ok_c,
    orders_dc,
    n_avail_c,
    eval_r,
    taus_d,
    debias,
    soft,
    tau0,
    corr_code,
    neutral,
    csort_codes_c,
    csort_vals_c,
    out_sum,
    out_n,
):
    """Add one context's correlations at every budget of one draw into out_sum / out_n;
    each comparison's win and count weigh ``W_c[i, j]`` (1 without weights)."""
    n_items = P_c.shape[0]
    idx = np.empty(n_items, dtype=np.int64)
    ref_rc = np.empty(n_items, dtype=np.int64)
    n_valid, ref_ss = _context_reference(ref_c, ok_c, idx, ref_rc)
    if n_valid < 2 or ref_ss == 0:
        return  # the reference cannot rank this context: no value at any budget
    fast = neutral and corr_code == 0
    wins = np.zeros(n_items)
    cnt = np.zeros(n_items)
    seen = np.zeros(n_items * n_items, dtype=np.bool_)
    scores = np.empty(n_items)
    compact = np.empty(n_items)
    xa = np.empty(n_items)
    xb = np.empty(n_items)
    pos = 0
    tau_used = tau0
    for k in range(eval_r.shape[0]):
        r = eval_r[k]
        if r < 0:
            continue  # not spendable (over capacity, or odd for symmetric): no value
        target = min(r, n_avail_c)
        if debias and target > 0:
            t_new = taus_d[k]
        else:
            t_new = tau_used
        if soft and debias:
            # Every debiased p changes with the threshold: recount from scratch.
            use_alpha = 0.0 < t_new < 1.0
            alpha = (1.0 - t_new) / t_new if use_alpha else 1.0
            wins[:] = 0.0
            cnt[:] = 0.0
            for q in range(target):
                code = orders_dc[q]
                i = code // n_items
                j = code - i * n_items
                v = _soft_value(P_c[i, j], t_new, use_alpha, alpha)
                w = W_c[i, j]
                wins[i] += w * v
                wins[j] += w * (1.0 - v)
                cnt[i] += w
                cnt[j] += w
            pos = target
        else:
            if debias and t_new != tau_used:
                # Only comparisons with p between the old and new threshold change decision.
                lo = min(t_new, tau_used)
                hi = max(t_new, tau_used)
                n_c = csort_vals_c.shape[0]
                q = _first_not_below(csort_vals_c, lo)
                while q < n_c and csort_vals_c[q] <= hi:
                    code = csort_codes_c[q]
                    if seen[code]:
                        i = code // n_items
                        j = code - i * n_items
                        p = P_c[i, j]
                        delta = W_c[i, j] * (_decide(p, t_new) - _decide(p, tau_used))
                        wins[i] += delta
                        wins[j] -= delta
                    q += 1
            tau_used = t_new
            while pos < target:
                code = orders_dc[pos]
                i = code // n_items
                j = code - i * n_items
                p = P_c[i, j]
                v = p if soft else _decide(p, tau_used)
                w = W_c[i, j]
                wins[i] += w * v
                wins[j] += w * (1.0 - v)
                cnt[i] += w
                cnt[j] += w
                seen[code] = True
                pos += 1
        if fast:
            for a in range(n_valid):
                u = idx[a]
                compact[a] = wins[u] / cnt[u] if cnt[u] > 0.0 else 0.5
            rho = _spearman_preranked(compact, n_valid, ref_rc, ref_ss)
        else:
            for u in range(n_items):
                if not ok_c[u]:
                    scores[u] = np.nan
                elif cnt[u] > 0.0:
                    scores[u] = wins[u] / cnt[u]
                elif neutral:
                    scores[u] = 0.5
                else:
                    scores[u] = np.nan
            rho = _correlate(scores, ref_c, corr_code, xa, xb)
        if math.isfinite(rho):
            out_sum[k] += rho
            out_n[k] += 1.0


@batch_kernel(
    work=lambda P, W, ref, ok, orders, *rest: _grid_work(P, ref, ok, orders),
    min_work=PARALLEL_MIN_WORK,
)
def _winratio_grid(
    P,
    W,
    ref,
    ok,
    orders,
    n_avail,
    eval_r,
    taus,
    debias,
    soft,
    tau0,
    corr_code,
    neutral,
    csort_codes,
    csort_vals,
    csort_n,
):
    """Win-ratio correlations of one strategy: (out_sum, out_n) of shape (n_draws, n_budgets).

    ``taus`` (n_draws, n_budgets) are the pooled balanced thresholds used when ``debias``;
    ``tau0`` (n_contexts,) the decision threshold of each context otherwise (unused when
    ``soft`` without debias: the outcome is p itself). ``W`` (P's shape): the weight of
    every comparison, its win and its count (ones without weights; a weighted comparison
    still spends one comparison of the budget). ``out_sum / out_n`` is the mean
    correlation over the contexts where it is defined.
    """
    n_draws, n_contexts, _ = orders.shape
    n_budgets = eval_r.shape[0]
    out_sum = np.zeros((n_draws, n_budgets))
    out_n = np.zeros((n_draws, n_budgets))
    for d in prange(n_draws):
        for c in range(n_contexts):
            _winratio_context(
                P[c],
                W[c],
                ref[c],
                ok[c],
                orders[d, c],
                n_avail[c],
                eval_r,
                taus[d],
                debias,
                soft,
                tau0[c],
                corr_code,
                neutral,
                csort_codes[c, : csort_n[c]],
                csort_vals[c, : csort_n[c]],
                out_sum[d],
                out_n[d],
            )
    return out_sum, out_n


# ---------------------------------------------------------------------------------------
# Product-of-experts scores along a sequence
# ---------------------------------------------------------------------------------------


@batch_kernel(
    work=lambda P, W, ref, ok, orders, *rest: _grid_work(P, ref, ok, orders),
    min_work=PARALLEL_MIN_WORK,
)
def _poe_grid(P, W, ref, ok, orders, n_avail, eval_r, model_bias, prior_weight, corr_code, neutral):
    """Product-of-experts correlations of one strategy: (out_sum, out_n) of shape
    (n_draws, n_budgets). ``W`` (P's shape): the weight of every comparison (ones without
    weights), its expert's precision (noise variance 1 / w, ``selection._poe_update``); a
    weighted comparison still spends one comparison of the budget."""
    n_draws, n_contexts, _ = orders.shape
    n_items = P.shape[1]
    n_budgets = eval_r.shape[0]
    out_sum = np.zeros((n_draws, n_budgets))
    out_n = np.zeros((n_draws, n_budgets))
    for d in prange(n_draws):
        scores = np.empty(n_items)
        cnt = np.zeros(n_items)
        xa = np.empty(n_items)
        xb = np.empty(n_items)
        for c in range(n_contexts):
            sigma, mu = _poe_init(n_items, prior_weight, model_bias)
            cnt[:] = 0.0
            pos = 0
            for k in range(n_budgets):
                r = eval_r[k]
                if r < 0:
                    continue
                target = min(r, n_avail[c])
                while pos < target:
                    code = orders[d, c, pos]
                    i = code // n_items
                    j = code - i * n_items
                    _poe_update(sigma, mu, i, j, P[c, i, j] - 0.5, W[c, i, j])
                    cnt[i] += 1.0
                    cnt[j] += 1.0
                    pos += 1
                for u in range(n_items):
                    if not ok[c, u] or (cnt[u] == 0.0 and not neutral):
                        scores[u] = np.nan
                    else:
                        scores[u] = mu[u]
                rho = _correlate(scores, ref[c], corr_code, xa, xb)
                if math.isfinite(rho):
                    out_sum[d, k] += rho
                    out_n[d, k] += 1.0
    return out_sum, out_n

"""Maximum-likelihood ranking: the permutation that best explains the observed comparisons.

For a context with comparisons C, an order r has likelihood
prod over (i, j) in C of p_ij^z_ij (1 - p_ij)^(1 - z_ij), z_ij = 1[i ranked above j]
(Liusie et al. 2024, who had to use greedy search). With N_c items compared in a context:

* N_c <= ``exact_max_n``: exact, by dynamic programming over subsets. f(T) = best value of
  placing the set T at the top; putting item k just below T \\ {k} adds
  sum over j in T \\ {k} of A[j, k], where A[j, k] collects the terms of the pairs (j, k) when j
  is above k. The column sums over T come from two tables over the low and the high half of
  the bits, so each (T, k) costs O(1): O(2^N N) time, O(2^N) memory. Never brute force.
* larger contexts: a local search started from the Bradley–Terry order that alternates
  insertion moves (every single-item move, adjacent swaps included) with the exact DP applied
  to sliding blocks of 12 consecutive items, until neither improves: a local optimum for
  both kinds of move.

Probabilities of exactly 0 or 1 would make an order's log-likelihood -inf and all orders that
contradict one such comparison equal; they are clipped to [``P_CLIP``, 1 - ``P_CLIP``] so those
orders stay comparable (heavily penalised).

Equally likely orders (the same objective within 1e-9 relative) are reported as such, not
settled by an invented order:

* ``ranks`` (and ``scores``) are the mean rank of every item over all the best orders, and
  ``n_orders`` says how many there are. Items whose order the comparisons leave open in a
  symmetric way share a rank: an uninformative judge (every p = 0.5, or "A" for every
  ordered pair, so p_ij = p_ji = 1) makes every order equally likely and ties every item;
  a 3-cycle ties its three items; when the best orders are all orders of some tied groups,
  each group shares one rank and the groups keep their order. Where the best orders only
  partly agree (two separate decided pairs a > b and c > d: both winners above both
  losers on average), the mean rank keeps what they agree on. The exact DP counts the best
  orders through every set (a second pass over the subsets, only when there are several)
  and so gets the exact mean ranks.
* the heuristic cannot list every best order: it ties the longest runs of consecutive items
  of its order that are neutral to each other (every pair contributes the same whichever
  is above), since re-ordering such a run never changes the objective.
* ``order`` is one of the best orders, and ``log_likelihood`` / ``agreement`` are its
  values. Among equally likely orders it follows the soft win-ratio order: the items are
  relabelled best-first by win-ratio before the DP, which at every step prefers to place
  the highest label lowest.

A context without any comparison (an all-NaN block of P) gets NaN ranks and scores, an
order of -1 only, n_present 0 and log-likelihood 0 (no comparison to explain).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import prange

from ranking._core.checks import as_P, check_tau
from ranking._core.decisions import decide
from ranking._core.jit import PARALLEL_MIN_WORK, batch_kernel, njit
from ranking.bradley_terry.fit import bradley_terry

__all__ = ["MLResult", "P_CLIP", "ml_ranking"]

#: Probabilities are clipped into [P_CLIP, 1 - P_CLIP] before taking logs.
P_CLIP = 1e-12
#: Largest exact_max_n accepted: the DP needs a float64 and an int8 table of 2**N entries
#: (two more float64 tables when several orders tie); 2**24 float64: 128 MiB per table.
MAX_EXACT_N = 24
_TIE_RTOL = 1e-9
# Block width of the exact re-ordering step inside the heuristic (2**12 DP states per block).
_WINDOW = 12


@dataclass(frozen=True)
class MLResult:
    """Result of :func:`ml_ranking` (leading axis: contexts).

    Attributes
    ----------
    order : ndarray of int, shape (n_contexts, N)
        One best order, items best first; the items never compared in a context are left out
        and the row is padded with -1 at the end. When several orders are equally likely it
        is one of them (see ``ranks`` for what they have in common).
    ranks : ndarray of float, shape (n_contexts, N)
        1 = best: the mean rank over all equally likely best orders (exact DP; the heuristic
        ties runs of neutral items), so items whose order the comparisons do not determine
        share a rank; NaN for items never compared in that context. With a unique best
        order these are the positions in ``order``.
    scores : ndarray of float, shape (n_contexts, N)
        n_present - rank (higher is better, worst item 0 when it is alone at the bottom);
        NaN for items never compared. Equal for tied items, so an uninformative judge has
        constant scores and no rank correlation with anything.
    log_likelihood : ndarray of float, shape (n_contexts,)
        sum of log p^z (1 - p)^(1 - z) over the compared pairs for the returned order (p
        clipped to [P_CLIP, 1 - P_CLIP]). This is the maximised objective when tau is None.
    agreement : ndarray of float, shape (n_contexts,)
        Number of comparisons whose hard decision 1[p > tau] agrees with the returned order
        (a tie p == tau counts half; tau = 0.5 when ``tau`` is None). This is the maximised
        objective when a tau is given.
    n_present : ndarray of int, shape (n_contexts,)
        Items compared at least once per context.
    n_orders : ndarray of float, shape (n_contexts,)
        Number of equally likely best orders: exact for "exact-dp" contexts (1 = a unique
        order), a lower bound for "heuristic" ones (the orders of its tied runs).
    method : tuple of str
        "exact-dp" or "heuristic" per context.
    """

    order: np.ndarray
    ranks: np.ndarray
    scores: np.ndarray
    log_likelihood: np.ndarray
    agreement: np.ndarray
    n_present: np.ndarray
    n_orders: np.ndarray
    method: tuple[str, ...]


def _pair_terms(arr, tau):
    """A[c, i, j]: objective terms of the comparisons of i and j when i is ranked above j.

    The comparison (i first, j second) contributes log p_ij (z = 1) and (j first, i second)
    contributes log(1 - p_ji) (z = 0) with ``tau`` None; the decisions at ``tau`` (a float or
    one per context) replace the logs by agreement counts.
    """
    finite = np.isfinite(arr)
    if tau is not None:
        y = decide(arr, tau)
        first = np.where(finite, y, 0.0)
        second = np.where(finite, 1.0 - y, 0.0)
    else:
        p = np.clip(np.where(finite, arr, 0.5), P_CLIP, 1.0 - P_CLIP)
        first = np.where(finite, np.log(p), 0.0)
        second = np.where(finite, np.log1p(-p), 0.0)
    A = first + np.swapaxes(second, 1, 2)
    n = arr.shape[1]
    A[:, np.arange(n), np.arange(n)] = 0.0
    return np.ascontiguousarray(A)


@njit
def _column_sums(A):
    """Column sums of A over the members of a set, split into a low and a high half.

    ``g_lo[S, k]`` sums A[j, k] over the bits j of S among the low h = m // 2 items,
    ``g_hi[S, k]`` over the high ones (bit b standing for item h + b): the sum over any set
    T is g_lo[T & (2**h - 1), k] + g_hi[T >> h, k].
    """
    m = A.shape[0]
    h = m // 2
    n_lo = 1 << h
    n_hi = 1 << (m - h)
    g_lo = np.zeros((n_lo, m))
    g_hi = np.zeros((n_hi, m))
    for S in range(1, n_lo):
        b = 0
        while not (S >> b) & 1:
            b += 1
        prev = S ^ (1 << b)
        for k in range(m):
            g_lo[S, k] = g_lo[prev, k] + A[b, k]
    for S in range(1, n_hi):
        b = 0
        while not (S >> b) & 1:
            b += 1
        prev = S ^ (1 << b)
        for k in range(m):
            g_hi[S, k] = g_hi[prev, k] + A[h + b, k]
    return g_lo, g_hi, h


@njit
def _last_value(f, g_lo, g_hi, lo, hi, T, k):
    """Value of the set T with item k put last (just below the rest of T): f of the rest
    plus A[j, k] summed over j in T (``_column_sums``; lo, hi: T's low and high bits)."""
    return f[T ^ (1 << k)] + g_lo[lo, k] + g_hi[hi, k]


@njit
def _tie_threshold(best):
    """Values at or above this count as equal to ``best`` (within rounding)."""
    return best - _TIE_RTOL * (1.0 + abs(best))


@njit
def _dp_exact(A, f, choice):
    """Exact best order of the m items of A (m x m, objective terms); f, choice: 2**m buffers.

    f[T] is the best value of placing the set T at the top and choice[T] the item put last
    in T on the returned path. Also returns whether the best order is unique: every other
    best order leaves the path at a set where another last item is as good, so it is unique
    exactly when no set on the path has a second best last item.
    """
    m = A.shape[0]
    g_lo, g_hi, h = _column_sums(A)
    full = (1 << m) - 1
    f[0] = 0.0
    lo_mask = (1 << h) - 1
    cand = np.empty(m)
    for T in range(1, full + 1):
        lo = T & lo_mask
        hi = T >> h
        best = -np.inf
        for k in range(m):
            # k goes just below the rest of T: A[j, k] summed over j in T (A[k, k] = 0)
            v = _last_value(f, g_lo, g_hi, lo, hi, T, k)
            v = v if (T >> k) & 1 else -np.inf
            cand[k] = v
            best = max(best, v)
        # ties (within rounding): prefer the highest index at the bottom, deterministically
        thr = _tie_threshold(best)
        bk = m - 1
        while not cand[bk] >= thr:
            bk -= 1
        f[T] = best
        choice[T] = bk
    order = np.empty(m, np.int64)
    unique = True
    T = full
    for pos in range(m - 1, -1, -1):
        k = np.int64(choice[T])  # int64, not int8: _last_value compiles once
        order[pos] = k
        if unique:
            thr = _tie_threshold(f[T])
            lo = T & lo_mask
            hi = T >> h
            for q in range(k):  # choice is the highest best index: only lower ones can tie
                if (T >> q) & 1 and _last_value(f, g_lo, g_hi, lo, hi, T, q) >= thr:
                    unique = False
                    break
        T ^= 1 << k
    return order, unique


@njit
def _count_best(A, f, count):
    """count[T] = number of orders of the set T that reach f[T] (within rounding).

    count[2**m - 1] is the number of equally likely best orders. Uses the same rule for
    "equal" as ``_dp_exact``, from the f it filled.
    """
    m = A.shape[0]
    g_lo, g_hi, h = _column_sums(A)
    full = (1 << m) - 1
    lo_mask = (1 << h) - 1
    count[0] = 1.0
    for T in range(1, full + 1):
        lo = T & lo_mask
        hi = T >> h
        thr = _tie_threshold(f[T])
        n = 0.0
        for k in range(m):
            if (T >> k) & 1:
                rest = T ^ (1 << k)
                if _last_value(f, g_lo, g_hi, lo, hi, T, k) >= thr:
                    n += count[rest]
        count[T] = n


@njit
def _mean_ranks_exact(A, f, count):
    """Rank of every item (1 = best) averaged over all the best orders found by ``_dp_exact``.

    An order is best exactly when every one of its prefixes is a best order of its set, so
    the best orders are the paths through the sets that keep to f. Going down from the full
    set, ``below[T]`` counts the best ways to order the items not in T under T; item k put
    last in T sits at rank |T| in count[T \\ {k}] * below[T] best orders.
    """
    m = A.shape[0]
    g_lo, g_hi, h = _column_sums(A)
    full = (1 << m) - 1
    lo_mask = (1 << h) - 1
    below = np.zeros(full + 1)
    below[full] = 1.0
    rank_sum = np.zeros(m)
    for T in range(full, 0, -1):
        b_T = below[T]
        if b_T == 0.0:  # T starts no best order
            continue
        lo = T & lo_mask
        hi = T >> h
        thr = _tie_threshold(f[T])
        size = 0
        for k in range(m):
            size += (T >> k) & 1
        for k in range(m):
            if not (T >> k) & 1:
                continue
            rest = T ^ (1 << k)
            if _last_value(f, g_lo, g_hi, lo, hi, T, k) >= thr:
                below[rest] += b_T
                rank_sum[k] += count[rest] * b_T * size
    return rank_sum / count[full]


@njit
def _insertion_search(A, order):
    """Best-improvement single-item moves until none improves (a local optimum)."""
    m = order.shape[0]
    improved = True
    while improved:
        improved = False
        for x in range(m):
            a = 0
            while order[a] != x:
                a += 1
            best_delta = 0.0
            best_b = a
            delta = 0.0
            for b in range(a - 1, -1, -1):
                y = order[b]
                delta += A[x, y] - A[y, x]
                if delta > best_delta + 1e-12 * (1.0 + abs(best_delta)):
                    best_delta = delta
                    best_b = b
            delta = 0.0
            for b in range(a + 1, m):
                y = order[b]
                delta += A[y, x] - A[x, y]
                if delta > best_delta + 1e-12 * (1.0 + abs(best_delta)):
                    best_delta = delta
                    best_b = b
            if best_b != a:
                if best_b < a:
                    for q in range(a, best_b, -1):
                        order[q] = order[q - 1]
                else:
                    for q in range(a, best_b):
                        order[q] = order[q + 1]
                order[best_b] = x
                improved = True
    return order


@njit
def _block_value(A, items):
    v = 0.0
    for a in range(items.shape[0]):
        for b in range(a + 1, items.shape[0]):
            v += A[items[a], items[b]]
    return v


@njit
def _window_search(A, order, width):
    """Re-order blocks of ``width`` consecutive items exactly (DP); True if anything improved.

    Moving items only inside a contiguous block leaves their relations to every item outside
    the block unchanged, so the block's own optimum is an improvement of the whole order.
    """
    m = order.shape[0]
    w = min(width, m)
    f = np.zeros(1 << w)
    choice = np.empty(1 << w, np.int8)
    Ab = np.empty((w, w))
    improved = False
    step = max(1, w // 2)
    start = 0
    while True:
        block = order[start : start + w].copy()
        for a in range(w):
            for b in range(w):
                Ab[a, b] = A[block[a], block[b]]
        local, _ = _dp_exact(Ab, f, choice)
        new_block = np.empty(w, np.int64)
        for r in range(w):
            new_block[r] = block[local[r]]
        old_v = _block_value(A, block)
        new_v = _block_value(A, new_block)
        if new_v > old_v + 1e-12 * (1.0 + abs(old_v)):
            order[start : start + w] = new_block
            improved = True
        if start + w >= m:
            break
        start = min(start + step, m - w)
    return improved


@njit
def _heuristic(A, order):
    """Insertion local search alternated with exact re-ordering of sliding blocks."""
    for _ in range(1000):
        order = _insertion_search(A, order)
        if not _window_search(A, order, _WINDOW):
            break
    return order


@njit
def _snap_ties(values):
    """Make values that differ only by rounding (1e-9) exactly equal (their mean), in place.

    Mean ranks of items in symmetric positions are sums of the same counts added in
    different orders; without this a rounding difference would invent an order.
    """
    m = values.shape[0]
    idx = np.argsort(values)
    s = 0
    while s < m:
        e = s + 1
        while e < m and values[idx[e]] - values[idx[e - 1]] <= 1e-9:
            e += 1
        if e - s > 1:
            total = 0.0
            for q in range(s, e):
                total += values[idx[q]]
            for q in range(s, e):
                values[idx[q]] = total / (e - s)
        s = e


@njit
def _neutral_block_ranks(A, order):
    """Ranks of a heuristic order with equally good items tied; and how many orders tie.

    The order is cut, from the top, into the longest runs of consecutive items in which
    every two items are neutral (A[x, y] == A[y, x] within rounding: ranking x above y or
    y above x gives the same value). Any re-ordering inside such a run leaves the objective
    unchanged, so the run's items share its mean rank; the number of equally good orders
    found this way is the product of the runs' factorials.
    """
    m = order.shape[0]
    ranks = np.empty(m)
    n_orders = 1.0
    s = 0
    while s < m:
        e = s + 1
        while e < m:
            y = order[e]
            ok = True
            for q in range(s, e):
                x = order[q]
                if abs(A[x, y] - A[y, x]) > _TIE_RTOL * (1.0 + abs(A[x, y]) + abs(A[y, x])):
                    ok = False
                    break
            if not ok:
                break
            e += 1
        for q in range(s, e):
            ranks[q] = 0.5 * (s + 1 + e)  # mean of the ranks s + 1 .. e
            n_orders *= q - s + 1
        s = e
    return ranks, n_orders


def _ml_work(A, present, exact_max_n, start):
    """Serial nanoseconds, roughly: the exact DP visits 2**N subsets with N**2 steps each
    at about 0.1 ns a step (1.8 ms per context at N = 16)."""
    n_ctx, n, _ = A.shape
    return n_ctx * (2 ** min(n, int(exact_max_n))) * n * n // 10


@batch_kernel(work=_ml_work, min_work=PARALLEL_MIN_WORK)
def _ml_batch(A, present, exact_max_n, start):
    """Per context: one best order (items best first, -1 padding), the mean rank of every
    item over the equally good orders (NaN for items not present), and their number.

    start: heuristic starting orders.
    """
    n_ctx, n, _ = A.shape
    out = np.full((n_ctx, n), -1, np.int64)
    ranks = np.full((n_ctx, n), np.nan)
    n_orders = np.ones(n_ctx)
    for c in prange(n_ctx):
        idx = np.empty(n, np.int64)
        m = 0
        for i in range(n):
            if present[c, i]:
                idx[m] = i
                m += 1
        Ac = np.empty((m, m))
        for a in range(m):
            for b in range(m):
                Ac[a, b] = A[c, idx[a], idx[b]]
        if m <= exact_max_n:
            f = np.zeros(1 << m)
            choice = np.empty(1 << m, np.int8)
            local, unique = _dp_exact(Ac, f, choice)
            if unique:
                for r in range(m):
                    ranks[c, idx[local[r]]] = r + 1.0
            else:  # several best orders: count them, rank by the mean over all of them
                count = np.empty(1 << m)
                _count_best(Ac, f, count)
                n_orders[c] = count[(1 << m) - 1]
                mean = _mean_ranks_exact(Ac, f, count)
                _snap_ties(mean)
                for a in range(m):
                    ranks[c, idx[a]] = mean[a]
        else:
            # start order given in original indices: map to compressed positions
            pos_of = np.full(n, -1, np.int64)
            for a in range(m):
                pos_of[idx[a]] = a
            local = np.empty(m, np.int64)
            q = 0
            for r in range(n):
                s = start[c, r]
                if s >= 0 and pos_of[s] >= 0:
                    local[q] = pos_of[s]
                    q += 1
            local = _heuristic(Ac, local)
            block, n_orders[c] = _neutral_block_ranks(Ac, local)
            for r in range(m):
                ranks[c, idx[local[r]]] = block[r]
        for r in range(m):
            out[c, r] = idx[local[r]]
    return out, ranks, n_orders


def _order_value(terms, ranks):
    """sum of terms[c, i, j] over the pairs with i ranked above j, per context."""
    with np.errstate(invalid="ignore"):
        above = ranks[:, :, None] < ranks[:, None, :]  # False wherever a rank is NaN
    return np.where(above, terms, 0.0).sum(axis=(1, 2))


def _by_win_ratio(arr):
    """Per context, the items sorted by soft win-ratio, best first (uncompared last, stable)."""
    from .scores import win_ratio

    wr = win_ratio(arr)
    return np.argsort(np.where(np.isfinite(wr), -wr, np.inf), axis=1, kind="stable")


def ml_ranking(P, *, tau=None, exact_max_n=20) -> MLResult:
    """Maximum-likelihood order of the candidates per context.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that i (shown first) beats j (shown second); NaN where not
        compared.
    tau : None, float or array_like of shape (n_contexts,), default None
        None: maximise the likelihood prod p^z (1 - p)^(1 - z) of the soft outcomes. A
        threshold (or one per context): use the decisions y = decide(p, tau) instead
        (``ranking.decide``), i.e. maximise the number of agreeing comparisons (a tie
        p == tau counts half whichever way): the minimum-feedback-arc-set order. The
        reported ``agreement`` is at this tau (0.5 when None).
    exact_max_n : int, default 20
        Contexts with at most this many compared items are solved exactly (DP over subsets,
        2**N memory); larger ones by local search from the Bradley–Terry order (insertion
        moves and exact re-ordering of blocks of 12 consecutive items).
        At most ``MAX_EXACT_N``. Both methods are deterministic.

    Returns
    -------
    MLResult
        One best order, the mean ranks over all equally likely best orders (ties where the
        order is not determined), their number, log-likelihood, agreement and method per
        context. A context without any comparison gets NaN ranks and scores.

    Raises
    ------
    ValueError
        Bad shapes, values outside [0, 1], N < 2, bad tau / exact_max_n.
    """
    if int(exact_max_n) != exact_max_n or not (0 <= exact_max_n <= MAX_EXACT_N):
        raise ValueError(
            f"exact_max_n must be an integer in [0, {MAX_EXACT_N}] (the exact DP needs 2**N "
            f"memory); got {exact_max_n!r}"
        )
    exact_max_n = int(exact_max_n)
    arr = as_P(P)
    n_ctx, n, _ = arr.shape
    tau = check_tau(tau, P=arr, allow_none=True)
    # Sparse comparison sets leave many orders with the same likelihood. Their mean ranks are
    # reported; the one order returned is settled towards the index order by the DP, so
    # relabel the items by their soft win-ratio first (best first, stable): that order
    # follows the evidence, not the ids' order.
    perm = _by_win_ratio(arr)
    arr = np.take_along_axis(np.take_along_axis(arr, perm[:, :, None], 1), perm[:, None, :], 2)
    finite = np.isfinite(arr)
    present = finite.any(axis=2) | finite.any(axis=1)
    n_present = present.sum(axis=1)
    A = _pair_terms(arr, tau)
    heuristic = n_present > exact_max_n
    start = np.full((n_ctx, n), -1, np.int64)
    if heuristic.any():
        # the local search starts from the Bradley–Terry order (best first, uncompared last)
        bt_tau = tau[heuristic] if np.ndim(tau) else tau
        bt = bradley_terry(arr[heuristic], tau=bt_tau).scores
        key = np.where(np.isfinite(bt), -bt, np.inf)
        idx = np.argsort(key, axis=1, kind="stable")
        start[heuristic] = np.where(np.isfinite(np.take_along_axis(key, idx, 1)), idx, -1)
    order, ranks, n_orders = _ml_batch(A, present, exact_max_n, start)
    # the objective values are those of the returned order (one of the best ones)
    positions = np.full((n_ctx, n), np.nan)
    rows = np.repeat(np.arange(n_ctx), n).reshape(n_ctx, n)
    valid = order >= 0
    positions[rows[valid], order[valid]] = (np.nonzero(valid)[1] + 1).astype(np.float64)
    soft_terms = A if tau is None else _pair_terms(arr, None)
    hard_terms = A if tau is not None else _pair_terms(arr, 0.5)
    log_likelihood = _order_value(soft_terms, positions)
    agreement = _order_value(hard_terms, positions)
    # back to the caller's item labels
    order = np.where(order >= 0, np.take_along_axis(perm, np.maximum(order, 0), 1), -1)
    ranks_out = np.empty_like(ranks)
    np.put_along_axis(ranks_out, perm, ranks, 1)
    ranks = ranks_out
    scores = n_present[:, None] - ranks
    return MLResult(
        order=order,
        ranks=ranks,
        scores=scores,
        log_likelihood=log_likelihood,
        agreement=agreement,
        n_present=n_present,
        n_orders=n_orders,
        method=tuple("heuristic" if h else "exact-dp" for h in heuristic),
    )

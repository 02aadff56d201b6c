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

Where it runs: contexts with at most ``NUMPY_MAX_N`` items present take the exact DP in
numpy (:func:`_exact_numpy`: the same programme, one layer of set sizes at a time over all
contexts; 2**11 sets at most), so a page with small contexts compiles nothing; the larger
exact ones the compiled :func:`_ml_batch`, where the DP pays (at N = 12 and more the compiled
loop is 7 to 16 times faster, and numpy would take seconds at N = 14), and the heuristic
contexts the compiled :func:`_ml_heuristic`. Each kernel has one signature and allocates
little, and it is compiled only when a context needs it.
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
#: Contexts with at most this many items present are solved exactly in numpy (the same
#: dynamic programme, nothing to compile); larger ones by the compiled kernel.
NUMPY_MAX_N = 11


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
def _dp(A, f, choice, g_lo, g_hi, cand, order):
    """Exact best order of the m items of A (m x m, objective terms) into ``order``; returns
    whether it is the only best order.

    ``f`` and ``choice`` (2**m entries) get f[T], the best value of placing the set T at the
    top, and the item put last in T on the returned path; ``g_lo`` (2**(m // 2) x m) and
    ``g_hi`` (2**(m - m // 2) x m) the column sums of A over the members of a set among the
    low h = m // 2 items and among the high ones (bit b standing for item h + b), so that
    the sum over any set T is g_lo[T & (2**h - 1), k] + g_hi[T >> h, k]: each (T, k) costs
    O(1). ``cand`` (m) is scratch. The best order is unique exactly when no set on the path
    has a second best last item (every other best order leaves the path at such a set).
    All buffers come from the caller (nothing to allocate, nothing else to compile).
    """
    m = A.shape[0]
    h = m // 2
    for k in range(m):
        g_lo[0, k] = 0.0
        g_hi[0, k] = 0.0
    for S in range(1, 1 << h):
        b = 0
        while not (S >> b) & 1:
            b += 1
        prev = S ^ (1 << b)
        for k in range(m):
            g_lo[S, k] = g_lo[prev, k] + A[b, k]
    for S in range(1, 1 << (m - h)):
        b = 0
        while not (S >> b) & 1:
            b += 1
        prev = S ^ (1 << b)
        for k in range(m):
            g_hi[S, k] = g_hi[prev, k] + A[h + b, k]
    full = (1 << m) - 1
    lo_mask = (1 << h) - 1
    f[0] = 0.0
    for T in range(1, full + 1):
        lo = T & lo_mask
        hi = T >> h
        best = -np.inf
        for k in range(m):
            # k goes just below the rest of T: A[j, k] summed over j in T (A[k, k] = 0)
            v = f[T ^ (1 << k)] + g_lo[lo, k] + g_hi[hi, k]
            v = v if (T >> k) & 1 else -np.inf
            cand[k] = v
            if v > best:
                best = v
        # ties (within rounding): prefer the highest index at the bottom, deterministically
        thr = best - _TIE_RTOL * (1.0 + abs(best))
        bk = m - 1
        while not cand[bk] >= thr:
            bk -= 1
        f[T] = best
        choice[T] = bk
    unique = True
    T = full
    for pos in range(m - 1, -1, -1):
        k = np.int64(choice[T])
        order[pos] = k
        if unique:
            thr = f[T] - _TIE_RTOL * (1.0 + abs(f[T]))
            lo = T & lo_mask
            hi = T >> h
            for q in range(k):  # choice is the highest best index: only lower ones can tie
                if (T >> q) & 1 and f[T ^ (1 << q)] + g_lo[lo, q] + g_hi[hi, q] >= thr:
                    unique = False
                    break
        T ^= 1 << k
    return unique


@njit
def _outputs(A):
    """A batch's order, ranks and number of best orders, each context's set to the defaults
    (order -1, ranks NaN, one best order)."""
    n_ctx, n, _ = A.shape
    return np.full((n_ctx, n), -1, np.int64), np.full((n_ctx, n), np.nan), np.ones(n_ctx)


@njit
def _context(A, present, c):
    """The items present in context ``c``: their indices idx[:m], m, and the terms among
    them Ac = A[c][idx][:, idx] (m x m)."""
    n = A.shape[1]
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
    return idx, m, Ac


def _ml_work(A, present, exact_max_n, start):
    """Serial nanoseconds, roughly: the exact DP visits 2**m subsets with m**2 steps each
    at about 0.1 ns a step (1.8 ms per context at m = 16), m the items present (N where
    ``present`` is None)."""
    n_ctx, n, _ = A.shape
    m = np.full(n_ctx, n) if present is None else present.sum(axis=1)
    m = np.minimum(m, int(exact_max_n)).astype(np.float64)
    return int((2.0**m * m * m).sum() // 10)


@batch_kernel(work=_ml_work, min_work=PARALLEL_MIN_WORK)
def _ml_batch(A, present, exact_max_n, start):
    """Per context: one best order (items best first, -1 padding), the mean rank of every
    item over the equally good orders (NaN for items not present), and their number.

    Contexts with at most ``exact_max_n`` items present are solved exactly (:func:`_dp`);
    larger ones are left to :func:`_ml_heuristic` (order -1, ranks NaN here). When several
    orders are best, a second pass over the sets counts the best orders
    through each (count[T]: the best orders of T), a third goes down from the full set
    (below[T]: the best ways to order the items not in T under T) and sums the rank of every
    item over all best orders: an order is best exactly when each of its prefixes is a best
    order of its set, so item k put last in T sits at rank |T| in count[T \\ {k}] * below[T]
    of them.
    """
    out, ranks, n_orders = _outputs(A)
    for c in prange(A.shape[0]):
        idx, m, Ac = _context(A, present, c)
        local = np.empty(m, np.int64)
        if m <= exact_max_n:
            full = (1 << m) - 1
            f = np.empty(full + 1)
            choice = np.empty(full + 1, np.int8)
            h = m // 2
            g_lo = np.empty((1 << h, m))
            g_hi = np.empty((1 << (m - h), m))
            cand = np.empty(m)
            if _dp(Ac, f, choice, g_lo, g_hi, cand, local):
                for r in range(m):
                    ranks[c, idx[local[r]]] = r + 1.0
            else:  # several best orders: count them, rank by the mean over all of them
                lo_mask = (1 << h) - 1
                count = np.empty(full + 1)
                count[0] = 1.0
                for T in range(1, full + 1):
                    lo = T & lo_mask
                    hi = T >> h
                    thr = f[T] - _TIE_RTOL * (1.0 + abs(f[T]))
                    tot = 0.0
                    for k in range(m):
                        if (T >> k) & 1:
                            rest = T ^ (1 << k)
                            if f[rest] + g_lo[lo, k] + g_hi[hi, k] >= thr:
                                tot += count[rest]
                    count[T] = tot
                n_orders[c] = count[full]
                below = np.empty(full + 1)
                for T in range(full):
                    below[T] = 0.0
                below[full] = 1.0
                rank_sum = np.empty(m)
                for k in range(m):
                    rank_sum[k] = 0.0
                for T in range(full, 0, -1):
                    b_T = below[T]
                    if b_T == 0.0:  # T starts no best order
                        continue
                    lo = T & lo_mask
                    hi = T >> h
                    thr = f[T] - _TIE_RTOL * (1.0 + abs(f[T]))
                    size = 0
                    for k in range(m):
                        size += (T >> k) & 1
                    for k in range(m):
                        if not (T >> k) & 1:
                            continue
                        rest = T ^ (1 << k)
                        if f[rest] + g_lo[lo, k] + g_hi[hi, k] >= thr:
                            below[rest] += b_T
                            rank_sum[k] += count[rest] * b_T * size
                for a in range(m):
                    ranks[c, idx[a]] = rank_sum[a] / count[full]
        else:
            continue  # left to the heuristic (:func:`_ml_heuristic`)
        for r in range(m):
            out[c, r] = idx[local[r]]
    return out, ranks, n_orders


def _heuristic_work(A, present, start):
    """Serial nanoseconds, roughly 600 m**2.5 per context of m items present (measured: 2 ms
    at m = 27, about 15 ms at 50, 50 ms at 100)."""
    n_ctx, n, _ = A.shape
    m = np.full(n_ctx, n) if present is None else present.sum(axis=1)
    return int((600.0 * m.astype(np.float64) ** 2.5).sum())


# the parallel compilation (seconds on a fresh install) only from about 0.2 s of serial work
@batch_kernel(work=_heuristic_work, min_work=10 * PARALLEL_MIN_WORK)
def _ml_heuristic(A, present, start):
    """Per context (too many items present for the exact search): local search from
    ``start`` (the starting order in item indices), best-improvement single-item moves
    alternated with exact re-ordering (:func:`_dp`) of sliding blocks of ``_WINDOW``
    consecutive items until neither improves (moving items inside a contiguous block leaves
    their relations to every item outside it unchanged, so a block's own optimum improves
    the whole order). Returns one order (items best first, -1 padding), ranks that tie the
    longest runs of consecutive items neutral to each other (A[x, y] == A[y, x] within
    rounding: any re-ordering inside such a run keeps the objective; NaN for items not
    present) and the number of orders found equally good (the product of the runs'
    factorials)."""
    n = A.shape[1]
    out, ranks, n_orders = _outputs(A)
    for c in prange(A.shape[0]):
        idx, m, Ac = _context(A, present, c)
        local = np.empty(m, np.int64)
        # start order given in original indices: map to compressed positions
        pos_of = np.empty(n, np.int64)
        for i in range(n):
            pos_of[i] = -1
        for a in range(m):
            pos_of[idx[a]] = a
        q = 0
        for r in range(n):
            s = start[c, r]
            if s >= 0 and pos_of[s] >= 0:
                local[q] = pos_of[s]
                q += 1
        w = _WINDOW if _WINDOW < m else m
        f = np.empty(1 << w)
        choice = np.empty(1 << w, np.int8)
        g_lo = np.empty((1 << (w // 2), w))
        g_hi = np.empty((1 << (w - w // 2), w))
        cand = np.empty(w)
        Ab = np.empty((w, w))
        block = np.empty(w, np.int64)
        new_block = np.empty(w, np.int64)
        perm = np.empty(w, np.int64)
        step = w // 2 if w // 2 > 1 else 1
        for _ in range(1000):
            # best-improvement single-item moves until none improves
            improved = True
            while improved:
                improved = False
                for x in range(m):
                    a = 0
                    while local[a] != x:
                        a += 1
                    best_delta = 0.0
                    best_b = a
                    delta = 0.0
                    for b in range(a - 1, -1, -1):
                        y = local[b]
                        delta += Ac[x, y] - Ac[y, x]
                        if delta > best_delta + 1e-12 * (1.0 + abs(best_delta)):
                            best_delta = delta
                            best_b = b
                    delta = 0.0
                    for b in range(a + 1, m):
                        y = local[b]
                        delta += Ac[y, x] - Ac[x, y]
                        if delta > best_delta + 1e-12 * (1.0 + abs(best_delta)):
                            best_delta = delta
                            best_b = b
                    if best_b != a:
                        if best_b < a:
                            for q in range(a, best_b, -1):
                                local[q] = local[q - 1]
                        else:
                            for q in range(a, best_b):
                                local[q] = local[q + 1]
                        local[best_b] = x
                        improved = True
            # exact re-ordering of sliding blocks of w consecutive items
            moved = False
            first = 0
            while True:
                for a in range(w):
                    block[a] = local[first + a]
                for a in range(w):
                    for b in range(w):
                        Ab[a, b] = Ac[block[a], block[b]]
                _dp(Ab, f, choice, g_lo, g_hi, cand, perm)
                for r in range(w):
                    new_block[r] = block[perm[r]]
                old_v = 0.0
                new_v = 0.0
                for a in range(w):
                    for b in range(a + 1, w):
                        old_v += Ac[block[a], block[b]]
                        new_v += Ac[new_block[a], new_block[b]]
                if new_v > old_v + 1e-12 * (1.0 + abs(old_v)):
                    for a in range(w):
                        local[first + a] = new_block[a]
                    moved = True
                if first + w >= m:
                    break
                first = first + step if first + step < m - w else m - w
            if not moved:
                break
        # ties: the longest runs of consecutive items neutral to each other
        s = 0
        while s < m:
            e = s + 1
            while e < m:
                y = local[e]
                neutral = True
                for q in range(s, e):
                    x = local[q]
                    gap = abs(Ac[x, y] - Ac[y, x])
                    if gap > _TIE_RTOL * (1.0 + abs(Ac[x, y]) + abs(Ac[y, x])):
                        neutral = False
                        break
                if not neutral:
                    break
                e += 1
            for q in range(s, e):
                ranks[c, idx[local[q]]] = 0.5 * (s + 1 + e)  # mean of ranks s + 1 .. e
                n_orders[c] *= q - s + 1
            s = e
        for r in range(m):
            out[c, r] = idx[local[r]]
    return out, ranks, n_orders


def _exact_numpy(A):
    """:func:`_ml_batch`'s exact search for a stack of contexts with the same m items
    present, A (B, m, m), in numpy: the same dynamic programme over the sets (the same
    column-sum tables, sums in the same order, the same tie rule), taken one layer of set
    sizes at a time over all contexts together. Returns (order (B, m), ranks (B, m),
    n_orders (B,)), equal to the kernel's. For small m (``NUMPY_MAX_N``) only: 2**m sets.
    """
    B, m, _ = A.shape
    ar = np.arange(m)
    h = m // 2
    full = (1 << m) - 1
    lo_mask = (1 << h) - 1

    def column_sums(width, offset):
        g = np.zeros((B, 1 << width, m))
        for S in range(1, 1 << width):
            low = (S & -S).bit_length() - 1
            g[:, S] = g[:, S ^ (1 << low)] + A[:, offset + low]
        return g

    g_lo, g_hi = column_sums(h, 0), column_sums(m - h, h)
    sets = np.arange(full + 1)
    size = np.zeros(full + 1, np.int64)
    for k in range(m):
        size += (sets >> k) & 1
    layers = [np.flatnonzero(size == s) for s in range(m + 1)]

    def last_values(T):
        """(B, len(T), m): f[T \\ {k}] + column sum of T at k, -inf where k is not in T;
        and the threshold of the values equal to f[T]."""
        inside = ((T[:, None] >> ar) & 1).astype(bool)
        rest = T[:, None] ^ (1 << ar)
        v = f[:, rest] + g_lo[:, T & lo_mask] + g_hi[:, T >> h]
        return np.where(inside, v, -np.inf), rest

    f = np.zeros((B, full + 1))
    choice = np.zeros((B, full + 1), np.int64)
    for T in layers[1:]:
        v, _ = last_values(T)
        best = v.max(axis=2)
        tie = v >= (best - _TIE_RTOL * (1.0 + np.abs(best)))[:, :, None]
        f[:, T] = best
        # ties (within rounding): the highest index at the bottom
        choice[:, T] = m - 1 - np.argmax(tie[:, :, ::-1], axis=2)
    rows = np.arange(B)
    order = np.empty((B, m), np.int64)
    unique = np.ones(B, bool)
    T = np.full(B, full)
    for pos in range(m - 1, -1, -1):
        k = choice[rows, T]
        order[:, pos] = k
        thr = f[rows, T] - _TIE_RTOL * (1.0 + np.abs(f[rows, T]))
        rest = T[:, None] ^ (1 << ar)
        v = f[rows[:, None], rest] + g_lo[rows, T & lo_mask] + g_hi[rows, T >> h]
        lower = ((T[:, None] >> ar) & 1).astype(bool) & (ar < k[:, None])
        unique &= ~(lower & (v >= thr[:, None])).any(axis=1)
        T = T ^ (1 << k)
    ranks = np.empty((B, m))
    ranks[rows[:, None], order] = ar + 1.0
    n_orders = np.ones(B)
    tied = np.flatnonzero(~unique)
    if tied.size:  # several best orders: count them, rank by the mean over all of them
        f, g_lo, g_hi = f[tied], g_lo[tied], g_hi[tied]
        Bt = tied.size
        count = np.zeros((Bt, full + 1))
        count[:, 0] = 1.0
        best_of = [None]
        for T in layers[1:]:
            v, rest = last_values(T)
            thr = f[:, T] - _TIE_RTOL * (1.0 + np.abs(f[:, T]))
            ok = v >= thr[:, :, None]
            best_of.append((ok, rest))
            count[:, T] = np.where(ok, count[:, rest], 0.0).sum(axis=2)
        below = np.zeros((Bt, full + 1))
        below[:, full] = 1.0
        rank_sum = np.zeros((Bt, m))
        base = (np.arange(Bt) * (full + 1))[:, None, None]
        for s in range(m, 0, -1):
            T = layers[s]
            ok, rest = best_of[s]
            b_T = below[:, T][:, :, None]
            add = np.where(ok, b_T, 0.0)
            below += np.bincount((base + rest).ravel(), add.ravel(), Bt * (full + 1)).reshape(
                Bt, full + 1
            )
            rank_sum += (np.where(ok, count[:, rest], 0.0) * b_T * s).sum(axis=1)
        ranks[tied] = rank_sum / count[:, full][:, None]
        n_orders[tied] = count[:, full]
    return order, ranks, n_orders


def _solve(A, present, n_present, exact_max_n, start):
    """One best order, the mean ranks and the number of best orders of every context:
    contexts with at most ``NUMPY_MAX_N`` items present by :func:`_exact_numpy` (grouped by
    size), the other exact ones by :func:`_ml_batch`, the larger ones by
    :func:`_ml_heuristic`; each kernel is compiled only when a context needs it."""
    n_ctx, n, _ = A.shape
    order = np.full((n_ctx, n), -1, np.int64)
    ranks = np.full((n_ctx, n), np.nan)
    n_orders = np.ones(n_ctx)
    small = n_present <= min(exact_max_n, NUMPY_MAX_N)
    for m in np.unique(n_present[small & (n_present > 0)]):
        ctx = np.flatnonzero(small & (n_present == m))
        idx = np.nonzero(present[ctx])[1].reshape(ctx.size, m)  # items present, in order
        sub = A[ctx[:, None, None], idx[:, :, None], idx[:, None, :]]
        local, local_ranks, n_orders[ctx] = _exact_numpy(sub)
        order[ctx, :m] = np.take_along_axis(idx, local, 1)
        ranks[ctx[:, None], idx] = local_ranks
    for kernel, which in (
        (_ml_batch, ~small & (n_present <= exact_max_n)),
        (_ml_heuristic, n_present > exact_max_n),
    ):
        ctx = np.flatnonzero(which)
        if ctx.size == 0:
            continue
        args = (np.ascontiguousarray(A[ctx]), np.ascontiguousarray(present[ctx]))
        if kernel is _ml_batch:
            got = kernel(*args, np.int64(exact_max_n), np.ascontiguousarray(start[ctx]))
        else:
            got = kernel(*args, np.ascontiguousarray(start[ctx]))
        order[ctx], ranks[ctx], n_orders[ctx] = got
    return order, ranks, n_orders


def _snap_ties(ranks):
    """Per row, values that differ only by rounding (consecutive gaps <= 1e-9 once sorted)
    made exactly equal (their mean): mean ranks of items in symmetric positions are sums of
    the same counts added in different orders, and a rounding difference must not invent an
    order. NaN stays NaN."""
    n_ctx, n = ranks.shape
    order = np.argsort(ranks, axis=1, kind="stable")
    v = np.take_along_axis(ranks, order, 1)
    new = np.ones((n_ctx, n), bool)
    new[:, 1:] = ~(v[:, 1:] - v[:, :-1] <= 1e-9)
    run = np.cumsum(new.ravel()) - 1
    total = np.bincount(run, np.where(np.isnan(v), 0.0, v).ravel())
    mean = total / np.bincount(run)
    snapped = np.where(np.isnan(v), np.nan, mean[run].reshape(n_ctx, n))
    out = np.empty_like(ranks)
    np.put_along_axis(out, order, snapped, 1)
    return out


def _order_value(terms, ranks):
    """sum of terms[c, i, j] over the pairs with i ranked above j, per context."""
    with np.errstate(invalid="ignore"):
        above = ranks[:, :, None] < ranks[:, None, :]  # False wherever a rank is NaN
    return np.where(above, terms, 0.0).sum(axis=(1, 2))


def _order_with_ties(key):
    """Per row, the items by increasing key, keys within rounding (1e-9, chained) counting
    as equal and kept in item order: tied Bradley–Terry scores differ only by the rounding
    of the solver, which must not choose the heuristic's starting order."""
    order = np.argsort(key, axis=1, kind="stable")
    v = np.take_along_axis(key, order, 1)
    new = np.ones(key.shape, bool)
    with np.errstate(invalid="ignore"):
        new[:, 1:] = ~(v[:, 1:] - v[:, :-1] <= 1e-9 * (1.0 + np.abs(v[:, 1:])))
    group = np.empty(key.shape, np.int64)
    np.put_along_axis(group, order, np.cumsum(new, axis=1), 1)
    items = np.broadcast_to(np.arange(key.shape[1]), key.shape)
    return np.lexsort((items, group), axis=-1)


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
        idx = _order_with_ties(key)
        start[heuristic] = np.where(np.isfinite(np.take_along_axis(key, idx, 1)), idx, -1)
    order, ranks, n_orders = _solve(A, present, n_present, exact_max_n, start)
    ranks = _snap_ties(ranks)
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

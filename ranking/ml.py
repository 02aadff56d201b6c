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
orders stay comparable (heavily penalised). Ties between orders with the same objective
(within 1e-9 relative) are broken towards the soft win-ratio order: the items are relabelled
best-first by win-ratio before the DP, which at every step prefers to place the highest
label lowest (so all-tied contexts come out in win-ratio order, equal win-ratios by index).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import prange

from ._checks import as_P
from ._numba import njit
from .bradley_terry import bradley_terry

__all__ = ["MLResult", "P_CLIP", "ml_ranking"]

#: Probabilities are clipped into [P_CLIP, 1 - P_CLIP] before taking logs.
P_CLIP = 1e-12
#: Largest exact_max_n accepted: the DP table has 2**N float64 entries (2**24: 128 MiB).
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
        Items best first; the items never compared in a context are left out and the row is
        padded with -1 at the end.
    ranks : ndarray of float, shape (n_contexts, N)
        1 = best; NaN for items never compared in that context.
    scores : ndarray of float, shape (n_contexts, N)
        n_present - rank (higher is better, worst item 0); NaN for items never compared.
    log_likelihood : ndarray of float, shape (n_contexts,)
        sum of log p^z (1 - p)^(1 - z) over the compared pairs for the returned order (p
        clipped to [P_CLIP, 1 - P_CLIP]). This is the maximised objective when hard=False.
    agreement : ndarray of float, shape (n_contexts,)
        Number of comparisons whose hard decision 1[p > tau] agrees with the order (a tie
        p == tau counts half). This is the maximised objective when hard=True.
    n_present : ndarray of int, shape (n_contexts,)
        Items compared at least once per context.
    method : tuple of str
        "exact-dp" or "heuristic" per context.
    """

    order: np.ndarray
    ranks: np.ndarray
    scores: np.ndarray
    log_likelihood: np.ndarray
    agreement: np.ndarray
    n_present: np.ndarray
    method: tuple[str, ...]


def _pair_terms(arr, hard, tau):
    """A[c, i, j]: objective terms of the comparisons of i and j when i is ranked above j.

    The comparison (i first, j second) contributes log p_ij (z = 1) and (j first, i second)
    contributes log(1 - p_ji) (z = 0); hard decisions replace the logs by agreement counts.
    """
    finite = np.isfinite(arr)
    if hard:
        y = np.where(arr > tau, 1.0, np.where(arr < tau, 0.0, 0.5))
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
def _dp_exact(A, f, choice):
    """Exact best order of the m items of A (m x m, objective terms); f, choice: 2**m buffers."""
    m = A.shape[0]
    h = m // 2
    n_lo = 1 << h
    n_hi = 1 << (m - h)
    # column sums of A over the low-half and high-half members of a set
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
    full = (1 << m) - 1
    f[0] = 0.0
    lo_mask = n_lo - 1
    cand = np.empty(m)
    for T in range(1, full + 1):
        lo = T & lo_mask
        hi = T >> h
        best = -np.inf
        for k in range(m):
            # k goes just below the rest of T: A[j, k] summed over j in T (A[k, k] = 0)
            v = f[T ^ (1 << k)] + g_lo[lo, k] + g_hi[hi, k]
            v = v if (T >> k) & 1 else -np.inf
            cand[k] = v
            best = max(best, v)
        # ties (within rounding): prefer the highest index at the bottom, deterministically
        thr = best - _TIE_RTOL * (1.0 + abs(best))
        bk = m - 1
        while not cand[bk] >= thr:
            bk -= 1
        f[T] = best
        choice[T] = bk
    order = np.empty(m, np.int64)
    T = full
    for pos in range(m - 1, -1, -1):
        k = choice[T]
        order[pos] = k
        T ^= 1 << k
    return order


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
        local = _dp_exact(Ab, f, choice)
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


@njit(parallel=True)
def _ml_batch(A, present, exact_max_n, start):
    """Order per context (items best first, -1 padding); start: heuristic starting orders."""
    n_ctx, n, _ = A.shape
    out = np.full((n_ctx, n), -1, np.int64)
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
            local = _dp_exact(Ac, f, choice)
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
        for r in range(m):
            out[c, r] = idx[local[r]]
    return out


def _order_value(terms, ranks):
    """sum of terms[c, i, j] over the pairs with i ranked above j, per context."""
    with np.errstate(invalid="ignore"):
        above = ranks[:, :, None] < ranks[:, None, :]  # False wherever a rank is NaN
    return np.where(above, terms, 0.0).sum(axis=(1, 2))


def _by_win_ratio(arr):
    """Per context, the items sorted by soft win-ratio, best first (uncompared last, stable)."""
    from .scores import win_ratio

    wr = win_ratio(arr, soft=True)
    return np.argsort(np.where(np.isfinite(wr), -wr, np.inf), axis=1, kind="stable")


def ml_ranking(P, *, hard=False, tau=0.5, exact_max_n=20, random_state=None) -> MLResult:
    """Maximum-likelihood order of the candidates per context.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that i (shown first) beats j (shown second); NaN where not
        compared.
    hard : bool, default False
        False: maximise the likelihood prod p^z (1 - p)^(1 - z). True: use the decisions
        y = 1[p > tau] instead, i.e. maximise the number of agreeing comparisons (a tie
        p == tau counts half whichever way): the minimum-feedback-arc-set order.
    tau : float, default 0.5
        Decision threshold for ``hard=True`` (also used for the reported ``agreement``).
    exact_max_n : int, default 20
        Contexts with at most this many compared items are solved exactly (DP over subsets,
        2**N memory); larger ones by local search from the Bradley–Terry order (insertion
        moves and exact re-ordering of blocks of 12 consecutive items).
        At most ``MAX_EXACT_N``.
    random_state : None
        Accepted for a uniform interface; both methods are deterministic.

    Returns
    -------
    MLResult
        Order, ranks, log-likelihood, agreement and method per context.

    Raises
    ------
    ValueError
        Bad shapes, values outside [0, 1], all-NaN contexts, N < 2, bad tau / exact_max_n.
    """
    del random_state  # deterministic; kept for a uniform signature
    if not (np.isfinite(tau) and 0.0 <= tau <= 1.0):
        raise ValueError(f"tau must lie in [0, 1]; got {tau!r}")
    if int(exact_max_n) != exact_max_n or not (0 <= exact_max_n <= MAX_EXACT_N):
        raise ValueError(
            f"exact_max_n must be an integer in [0, {MAX_EXACT_N}] (the exact DP needs 2**N "
            f"memory); got {exact_max_n!r}"
        )
    exact_max_n = int(exact_max_n)
    arr = as_P(P)
    n_ctx, n, _ = arr.shape
    # Sparse comparison sets leave many orders with the same likelihood, and the DP settles
    # ties towards the index order. Relabel the items by their soft win-ratio first (best
    # first, stable), so ties fall to the order the evidence suggests, not to the ids' order.
    perm = _by_win_ratio(arr)
    arr = np.take_along_axis(np.take_along_axis(arr, perm[:, :, None], 1), perm[:, None, :], 2)
    finite = np.isfinite(arr)
    present = finite.any(axis=2) | finite.any(axis=1)
    n_present = present.sum(axis=1)
    A = _pair_terms(arr, hard, tau)
    heuristic = n_present > exact_max_n
    start = np.full((n_ctx, n), -1, np.int64)
    if heuristic.any():
        # the local search starts from the Bradley–Terry order (best first, uncompared last)
        bt = bradley_terry(arr[heuristic], soft=not hard, tau=tau).scores
        key = np.where(np.isfinite(bt), -bt, np.inf)
        idx = np.argsort(key, axis=1, kind="stable")
        start[heuristic] = np.where(np.isfinite(np.take_along_axis(key, idx, 1)), idx, -1)
    order = _ml_batch(A, present, exact_max_n, start)
    ranks = np.full((n_ctx, n), np.nan)
    rows = np.repeat(np.arange(n_ctx), n).reshape(n_ctx, n)
    valid = order >= 0
    ranks[rows[valid], order[valid]] = (np.nonzero(valid)[1] + 1).astype(np.float64)
    soft_terms = A if not hard else _pair_terms(arr, False, tau)
    hard_terms = A if hard else _pair_terms(arr, True, tau)
    log_likelihood = _order_value(soft_terms, ranks)
    agreement = _order_value(hard_terms, ranks)
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
        method=tuple("heuristic" if h else "exact-dp" for h in heuristic),
    )

"""Self-consistency of a ranking on subsets of the candidates (Liusie et al. 2024, Table 8).

For each subset size n, n of a context's candidates are drawn at random and ranked by
win-ratio from their own comparisons only (the comparisons between two drawn candidates).
The order that subset ranking gives every pair of drawn candidates is then compared with

* the order of the same pair in the ranking of the full set ("final"): how consistent the
  judge's rankings are with those it would reach with every candidate;
* the order of their human scores ("gold"): pairwise accuracy against the humans.

A pair counts when both orders compared are defined and the reference (full-set scores or
human scores) differs; a pair the subset ranking ties counts half (``pairwise_accuracy`` of
``order_matrix``). The accuracies are pooled over every counted pair of every draw and
context, so at n = N (every candidate drawn) "final" is 1 by construction and "gold" is the
pairwise accuracy of the full ranking.

The work is gathered into one batch per size (draws x contexts blocks of n x n) and run
through the numba kernels of ``ranking.comparative.win_ratio`` and
``ranking.agreement.pairwise_accuracy``: SummEval's 100 contexts x 12 candidates x 50 draws x
6 sizes take a few tens of milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ranking._core.checks import as_P, check_random_state, check_tau
from ranking.agreement.metrics import as_reference, order_matrix, pairwise_accuracy

from .scores import win_ratio

__all__ = ["DEFAULT_SIZES", "SubsetConsistencyResult", "subset_consistency"]

#: The subset sizes of Liusie et al.'s Table 8 (the full set N is added to them).
DEFAULT_SIZES = (2, 3, 4, 6, 8, 12)


@dataclass(frozen=True)
class SubsetConsistencyResult:
    """Result of :func:`subset_consistency`, one entry per subset size.

    Attributes
    ----------
    sizes : ndarray of int
        The subset sizes n, increasing.
    final : ndarray of float
        Pairwise accuracy of the subset rankings against the full-set ranking, pooled over
        draws and contexts; NaN where nothing could be compared (see ``reasons``).
    gold : ndarray of float
        Pairwise accuracy of the subset rankings against the human scores (pairs whose
        human scores differ); NaN without human scores.
    n_contexts : ndarray of int
        Contexts that took part at each size: at least n ranked candidates and at least one
        counted pair in some draw.
    n_draws : int
        Random subsets drawn per context and size.
    reasons : tuple of str
        Why ``final`` or ``gold`` is NaN at a size; "" where both are defined.
    """

    sizes: np.ndarray
    final: np.ndarray
    gold: np.ndarray
    n_contexts: np.ndarray
    n_draws: int
    reasons: tuple[str, ...]


def _sizes(sizes, n_max: int) -> np.ndarray:
    if sizes is None:
        out = [n for n in DEFAULT_SIZES if n < n_max] + [n_max]
        return np.asarray(out, dtype=np.int64)
    arr = np.asarray(sizes)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"sizes must be a non-empty list of subset sizes; got {sizes!r}")
    if not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.floating) or not np.all(arr == np.round(arr)):
            raise ValueError(f"sizes must be whole numbers; got {sizes!r}")
        arr = arr.astype(np.int64)
    if (arr < 2).any():
        raise ValueError(f"a subset needs at least 2 candidates to be ranked; got sizes {sizes!r}")
    return np.unique(arr.astype(np.int64))


def _gather(P, ctx, picks, n):
    """P blocks (len(ctx) * n_draws, n, n) of the first n picked candidates of each draw."""
    sel = picks[:, ctx, :n]  # (n_draws, C', n)
    c = np.broadcast_to(ctx[None, :, None, None], (*sel.shape, n))
    block = P[c, sel[..., :, None], sel[..., None, :]]
    return block.reshape(-1, n, n), sel


def _accuracy(sub_scores, ref, n_draws, n_ctx):
    """(pooled accuracy, contexts with a counted pair, reason) of subset orders vs ``ref``."""
    om = order_matrix(sub_scores)
    acc = pairwise_accuracy(om, ref)
    per = pairwise_accuracy(om, ref, per_context=True).reshape(n_draws, n_ctx)
    used = int(np.isfinite(per).any(axis=0).sum())
    return float(acc), used, acc.reason


def subset_consistency(P, sizes=None, human=None, n_draws=50, tau=None, random_state=None):
    """Pairwise accuracy of rankings of random candidate subsets (Liusie et al., Table 8).

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that i (shown first) beats j (shown second); NaN where not
        compared. Candidates without any comparison in a context (padding, holes) are never
        drawn there.
    sizes : sequence of int, optional
        Subset sizes n (each >= 2). Default (2, 3, 4, 6, 8, 12) below N plus N, the largest
        number of compared candidates in a context. A context with fewer than n compared
        candidates is left out at that size.
    human : array_like, shape (n_contexts, N) or (N,), optional
        Human (reference) scores, higher is better, NaN where missing. Without them
        ``gold`` is NaN.
    n_draws : int, default 50
        Random subsets per context and size. The subsets of one draw are nested (the first
        n of one random order of the candidates), so the sizes share their draws.
    tau : None, float or array_like of shape (n_contexts,), default None
        As for ``ranking.win_ratio``: None ranks the soft outcomes p; a threshold (or one
        per context) ranks hard decisions (tau = 0.5: the paper's win counts). The full-set
        ranking uses the same rule.
    random_state : None, int or numpy.random.Generator
        Seed of the draws.

    Returns
    -------
    SubsetConsistencyResult

    Raises
    ------
    ValueError
        Bad P, human, tau, sizes (below 2, not whole) or n_draws (below 1).

    Examples
    --------
    A judge that always prefers the better candidate is consistent at every size.

    >>> s = np.arange(5.0)
    >>> P = (s[:, None] > s[None, :]).astype(float); np.fill_diagonal(P, np.nan)
    >>> r = subset_consistency(P, sizes=[2, 5], human=s, n_draws=3, random_state=0)
    >>> r.final.tolist(), r.gold.tolist()
    ([1.0, 1.0], [1.0, 1.0])
    """
    P = as_P(P)
    n_contexts, n_max_pad, _ = P.shape
    taus = check_tau(tau, P=P, allow_none=True, broadcast=True)
    ref_h = None if human is None else as_reference(human, n_contexts, n_max_pad, name="human")
    if isinstance(n_draws, bool) or int(n_draws) != n_draws or n_draws < 1:
        raise ValueError(f"n_draws must be a positive whole number; got {n_draws!r}")
    n_draws = int(n_draws)
    rng = check_random_state(random_state)

    full = win_ratio(P, tau=None if taus is None else taus)
    ranked = np.isfinite(full)
    n_ranked = ranked.sum(axis=1)
    sizes = _sizes(sizes, max(int(n_ranked.max()), 2))

    # One random order per draw and context, ranked candidates first.
    keys = rng.random((n_draws, n_contexts, n_max_pad))
    keys[:, ~ranked] = np.inf
    picks = np.argsort(keys, axis=-1, kind="stable")

    final = np.full(sizes.shape, np.nan)
    gold = np.full(sizes.shape, np.nan)
    used = np.zeros(sizes.shape, dtype=np.int64)
    reasons = []
    for k, n in enumerate(sizes):
        ctx = np.flatnonzero(n_ranked >= n)
        if not ctx.size:
            reasons.append(f"no context has {n} candidates with comparisons")
            continue
        block, sel = _gather(P, ctx, picks, int(n))
        if not np.isfinite(block).any():
            reasons.append(f"no drawn subset of {n} candidates holds a comparison")
            continue
        sub_tau = None if taus is None else np.tile(taus[ctx], n_draws)
        sub = win_ratio(block, tau=sub_tau)
        c_idx = np.broadcast_to(ctx[None, :, None], sel.shape)
        ref_f = full[c_idx, sel].reshape(-1, n)
        final[k], used_f, why_f = _accuracy(sub, ref_f, n_draws, ctx.size)
        why = [f"final: {why_f}"] if why_f else []
        used_g = 0
        if ref_h is None:
            why.append("gold: no human scores")
        else:
            ref_g = ref_h[c_idx, sel].reshape(-1, n)
            gold[k], used_g, why_g = _accuracy(sub, ref_g, n_draws, ctx.size)
            if why_g:
                why.append(f"gold: {why_g}")
        used[k] = max(used_f, used_g)
        reasons.append("; ".join(why))
    return SubsetConsistencyResult(sizes, final, gold, used, n_draws, tuple(reasons))

"""Elo ratings from a sequence of pairwise games, with a bootstrap over game orderings.

Elo depends on the order of the games, which is arbitrary for judge comparisons; the
bootstrap shuffles that order (seeded) and reports percentile bands, as the Chatbot Arena
notebooks do. With the defaults (k = 4, initial = 1000, base = 10, scale = 400, games in the
given order) the ratings equal evalica's ``elo`` on the same games.

Update for a game of a (first) against b (second) with outcome s in [0, 1] (1: a wins, 0.5 a
tie, or a soft probability) and weight w (default 1): e = 1 / (1 + base ** ((r_b - r_a) /
scale)), r_a += k w (s - e), r_b -= k w (s - e).

A weighted game (Arena-Hard's strong verdict, w = 3) is one game whose update counts w times:
the K-factor scaled by its weight. Arena-Hard itself has no sequential Elo: its "Elo" was
always the Bradley–Terry fit (``compute_mle_elo``, then ``show_result.py``'s logistic fit) on
the battles with each strong verdict written ``weight`` times, which ``ranking.bradley_terry``'s
``weights=`` reproduces exactly. Replicating a game w times in a row would give nearly the
same ratings (the expectation moves a little between the copies), but it makes w games of one
(they would be shuffled apart in the band over orderings), so the weight scales the step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import prange

from ranking._core.checks import check_flat, check_random_state, check_weights
from ranking._core.jit import PARALLEL_MIN_WORK, batch_kernel
from ranking._core.score_checks import check_confidence

__all__ = ["EloResult", "elo"]


@dataclass(frozen=True)
class EloResult:
    """Result of :func:`elo`.

    Attributes
    ----------
    scores : ndarray, shape (n_items,)
        Elo ratings after the games in the given order (items never playing keep
        ``initial``).
    lower, upper : ndarray or None
        Percentile band at ``confidence`` over ``n_boot`` shuffled orderings (None if
        n_boot == 0).
    n_boot : int
        Number of shuffled orderings used.
    """

    scores: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    n_boot: int


#: The ratings in one order (no band) are computed without compiling up to this many games
#: (about 3 us per game in Python: 60 ms), with the compiled kernel above it.
PYTHON_MAX_GAMES = 20_000


# about 20 ns per rating update; the parallel compilation (seconds on a fresh install) only
# from about 0.2 s of serial work on (10 million updates: an arena's shuffles), so a page's
# band (200 shuffles of thousands of games) never waits for it
@batch_kernel(
    work=lambda first, second, outcome, weight, orders, *rest: 20 * orders.size,
    min_work=10 * PARALLEL_MIN_WORK,
)
def _elo_boot(first, second, outcome, weight, orders, n_items, k, initial, base, scale, out):
    """Ratings after the games in every order of ``orders`` (one row per order, game
    indices) into the rows of ``out``; all arrays come from the caller (int64 indices,
    float64 values), so the kernel has one signature."""
    log_base = np.log(base)
    for r in prange(orders.shape[0]):
        rating = out[r]
        for i in range(n_items):
            rating[i] = initial
        for q in range(orders.shape[1]):
            g = orders[r, q]
            a = first[g]
            b = second[g]
            e = 1.0 / (1.0 + np.exp(log_base * (rating[b] - rating[a]) / scale))
            delta = k * weight[g] * (outcome[g] - e)
            rating[a] += delta
            rating[b] -= delta


def elo(
    first,
    second,
    outcome,
    n_items=None,
    *,
    k=4.0,
    initial=1000.0,
    base=10.0,
    scale=400.0,
    n_boot=0,
    confidence=0.95,
    random_state=None,
    weights=None,
) -> EloResult:
    """Elo ratings of ``n_items`` items from games played in the given order.

    Parameters
    ----------
    first, second : array_like of int
        Item indices of the two players of each game (first = the candidate shown first).
    outcome : array_like of float
        1 = first wins, 0 = second wins, 0.5 = tie, or a soft probability in [0, 1].
    n_items : int, optional
        Number of items (default: largest index + 1).
    k : float, default 4.0
        Update step (K-factor).
    initial : float, default 1000.0
        Starting rating.
    base, scale : float, default 10.0, 400.0
        Expected score e = 1 / (1 + base ** ((r_b - r_a) / scale)).
    n_boot : int, default 0
        Number of seeded shuffles of the game order for the percentile band.
    confidence : float, default 0.95
        Coverage of the band.
    random_state : None, int or numpy Generator
        Seed for the shuffles (``ranking._core.checks.check_random_state``).
    weights : array_like of float, optional
        How many games each game counts (a finite number > 0; default 1): its update is
        scaled by its weight. The band still shuffles games, a weighted one as one game.

    Returns
    -------
    EloResult
        ``scores``, the ratings in the given order, and, when n_boot > 0, ``lower`` /
        ``upper``.

    Raises
    ------
    ValueError
        Empty or mismatched arrays, indices out of range, outcomes outside [0, 1], a weight
        that is not a finite number > 0, bad options.
    """
    w = check_weights(weights, np.shape(outcome), of="games")
    ei, ej, out, _, n_items = check_flat(first, second, outcome, n_items, name="elo games")
    for name, val in (("k", k), ("initial", initial), ("scale", scale)):
        if not np.isfinite(val):
            raise ValueError(f"{name} must be finite; got {val!r}")
    if not (np.isfinite(base) and base > 1.0):
        raise ValueError(f"base must be a finite number > 1; got {base!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0; got {scale!r}")
    if int(n_boot) != n_boot or n_boot < 0:
        raise ValueError(f"n_boot must be an integer >= 0; got {n_boot!r}")
    if n_boot:
        check_confidence(confidence)
    rng = check_random_state(random_state)
    n_boot = int(n_boot)
    m = ei.size
    ei = np.ascontiguousarray(ei, dtype=np.int64)
    ej = np.ascontiguousarray(ej, dtype=np.int64)
    out = np.ascontiguousarray(out, dtype=np.float64)
    w = np.ones(m) if w is None else w
    args = (np.int64(n_items), float(k), float(initial), float(base), float(scale))
    ratings = np.empty((1, n_items))
    # one order of up to PYTHON_MAX_GAMES games runs as Python (tens of milliseconds), so a
    # page that shows the ratings without a band compiles nothing
    one = _elo_boot.py_func if m <= PYTHON_MAX_GAMES else _elo_boot
    one(ei, ej, out, w, np.arange(m, dtype=np.int64)[None], *args, ratings)
    ratings = ratings[0]
    lower = upper = None
    if n_boot:
        # shuffles are drawn in batches so that memory stays near 10**7 indices
        batch = max(1, min(n_boot, 10_000_000 // max(m, 1)))
        samples = np.empty((n_boot, n_items))
        done = 0
        while done < n_boot:
            b = min(batch, n_boot - done)
            # C order, so the kernel compiles once (the permuted broadcast comes back
            # Fortran-ordered)
            orders = np.ascontiguousarray(
                rng.permuted(np.broadcast_to(np.arange(m), (b, m)), axis=1), dtype=np.int64
            )
            _elo_boot(ei, ej, out, w, orders, *args, samples[done : done + b])
            done += b
        q = 100.0 * (1.0 - confidence) / 2.0
        lower = np.percentile(samples, q, axis=0)
        upper = np.percentile(samples, 100.0 - q, axis=0)
    return EloResult(scores=ratings, lower=lower, upper=upper, n_boot=n_boot)

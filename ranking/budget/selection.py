"""Which comparisons to ask a judge for: static comparison sets and an adaptive strategy.

Static strategies (Liusie, Manakul, Gales 2024) fix the comparison set in advance:

* ``"all"``: every ordered pair, N(N - 1) comparisons;
* ``"random"``: ordered pairs drawn without replacement;
* ``"no-repeat"``: never both orders of a pair (at most N(N - 1) / 2 comparisons), each pair
  shown in a random order;
* ``"symmetric"``: randomly chosen pairs, each shown in both orders (an even budget).

The adaptive strategy (``adaptive_rank``) picks the next comparison from what it has seen,
with the product-of-experts view of Liusie et al. ("Efficient LLM comparative assessment: a
product of experts framework for pairwise comparisons", 2024): every comparison is a
Gaussian expert on a score difference, so the posterior over the scores is Gaussian in closed
form, and the next pair is the one whose outcome is most informative about the scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ranking._core.checks import check_random_state
from ranking._core.jit import njit

STATIC_STRATEGIES = ("all", "random", "no-repeat", "symmetric")
ADAPTIVE_RULES = ("poe-max-info", "uncertainty")
_STRATEGY_CODE = {"random": 0, "no-repeat": 1, "symmetric": 2}


def _check_count(value, name, least, need):
    """``value`` as an int; ValueError ``"{name} must be {need}; got ..."`` unless it is an
    integer (not a bool) of at least ``least``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name} must be {need}; got {value!r}")
    return int(value)


def _check_n_items(n_items):
    return _check_count(n_items, "n_items", 2, "an integer, at least 2 to compare anything")


def _check_budget(budget):
    return _check_count(budget, "budget", 1, "a positive integer")


def strategy_capacity(strategy, n_items):
    """Largest budget a static strategy can spend on ``n_items`` candidates."""
    n_items = _check_n_items(n_items)
    n_ordered = n_items * (n_items - 1)
    if strategy == "no-repeat":
        return n_ordered // 2
    if strategy in ("all", "random", "symmetric") or strategy in ADAPTIVE_RULES:
        return n_ordered
    raise ValueError(_unknown_strategy(strategy))


def _unknown_strategy(strategy):
    return (
        f"unknown comparison strategy {strategy!r}; choose one of "
        f"{', '.join(repr(s) for s in STATIC_STRATEGIES)}"
    )


def select_comparisons(strategy, n_items, budget=None, random_state=None):
    """Choose which ordered pairs (first, second) to ask the judge about.

    Parameters
    ----------
    strategy : {"all", "random", "no-repeat", "symmetric"}
        ``"all"``: every ordered pair, in row order. ``"random"``: ``budget`` ordered pairs
        without replacement. ``"no-repeat"``: ``budget`` distinct unordered pairs, each in a
        random order, so never both orders of a pair. ``"symmetric"``: ``budget / 2``
        distinct unordered pairs, each in both orders (the two orders are adjacent rows).
    n_items : int
        Number of candidates N (at least 2).
    budget : int, optional
        Number of comparisons. Required except for ``"all"``, where it may be omitted or must
        equal N(N - 1). At most N(N - 1) for ``"random"``, N(N - 1) / 2 for ``"no-repeat"``;
        ``"symmetric"`` needs an even budget of at most N(N - 1) (an odd budget is an error
        rather than silently rounded, because half a pair is not symmetric).
    random_state : None, int or numpy.random.Generator
        Seed for the draw.

    Returns
    -------
    ndarray of int64, shape (budget, 2)
        Rows (first, second) of candidate indices.

    Raises
    ------
    ValueError
        Unknown strategy, n_items < 2, or a budget that is missing, not positive, odd for
        ``"symmetric"`` or larger than the strategy can spend.
    """
    if strategy not in STATIC_STRATEGIES:
        if strategy in ADAPTIVE_RULES:
            raise ValueError(
                f"{strategy!r} is adaptive: it needs the judge's answers, so use "
                "adaptive_rank(P_context or oracle, budget, rule=...) instead"
            )
        raise ValueError(_unknown_strategy(strategy))
    n_items = _check_n_items(n_items)
    n_ordered = n_items * (n_items - 1)
    first, second = np.nonzero(~np.eye(n_items, dtype=bool))
    ordered = np.stack([first, second], axis=1).astype(np.int64)
    if strategy == "all":
        if budget is not None and budget != n_ordered:
            raise ValueError(
                f"strategy 'all' uses all N(N-1) = {n_ordered} ordered pairs; pass budget=None "
                f"(got budget={budget!r}) or choose 'random' for a subset"
            )
        return ordered
    if budget is None:
        raise ValueError(f"strategy {strategy!r} needs a budget (number of comparisons)")
    budget = _check_budget(budget)
    capacity = strategy_capacity(strategy, n_items)
    if budget > capacity:
        raise ValueError(
            f"budget {budget} is larger than strategy {strategy!r} can spend on N = {n_items} "
            f"candidates (at most {capacity}"
            + (", since it never shows both orders of a pair)" if strategy == "no-repeat" else ")")
        )
    rng = check_random_state(random_state)
    if strategy == "random":
        return ordered[rng.choice(n_ordered, size=budget, replace=False)]
    iu, ju = np.triu_indices(n_items, k=1)
    unordered = np.stack([iu, ju], axis=1).astype(np.int64)
    if strategy == "no-repeat":
        chosen = unordered[rng.choice(len(unordered), size=budget, replace=False)]
        flip = rng.random(budget) < 0.5
        chosen[flip] = chosen[flip][:, ::-1]
        return chosen
    if budget % 2:
        raise ValueError(
            f"strategy 'symmetric' shows every chosen pair in both orders, so the budget must "
            f"be even; got {budget}"
        )
    chosen = unordered[rng.choice(len(unordered), size=budget // 2, replace=False)]
    out = np.empty((budget, 2), dtype=np.int64)
    out[0::2] = chosen
    out[1::2] = chosen[:, ::-1]
    return out


# ---------------------------------------------------------------------------------------
# Static orders for the budget curves: one random sequence per (draw, context), in numba
# ---------------------------------------------------------------------------------------


@njit
def _static_orders(present, strategy_code, n_draws, rng):
    """Comparison sequences for ``budget_curves``.

    Returns ``orders`` (n_draws, n_contexts, L) of ordered-pair codes i * N + j and
    ``n_avail`` (n_contexts,), the length of each context's sequence (its present pairs).
    A budget R uses the first R codes of a sequence. Pairs are drawn from those present in
    the context: any present ordered pair (random), unordered pairs with at least one present
    order, in a random present order (no-repeat), unordered pairs present in both orders,
    both orders adjacent (symmetric). ``rng`` is a numpy Generator (numba draws from its
    stream, so a seed reproduces the sequences).
    """
    n_contexts, n_items, _ = present.shape
    n_ordered = n_items * (n_items - 1)
    length = n_ordered // 2 if strategy_code == 1 else n_ordered
    orders = np.full((n_draws, n_contexts, length), -1, dtype=np.int32)
    n_avail = np.zeros(n_contexts, dtype=np.int64)
    pool_i = np.empty(n_ordered, dtype=np.int64)
    pool_j = np.empty(n_ordered, dtype=np.int64)
    perm = np.empty(n_ordered, dtype=np.int64)
    for c in range(n_contexts):
        m = 0
        for i in range(n_items):
            for j in range(n_items):
                if i == j:
                    continue
                if strategy_code == 0:
                    ok = present[c, i, j]
                elif strategy_code == 1:
                    ok = j > i and (present[c, i, j] or present[c, j, i])
                else:
                    ok = j > i and present[c, i, j] and present[c, j, i]
                if ok:
                    pool_i[m] = i
                    pool_j[m] = j
                    m += 1
        n_avail[c] = m * 2 if strategy_code == 2 else m
        for d in range(n_draws):
            for k in range(m):
                perm[k] = k
            # Fisher-Yates on the caller's generator
            for k in range(m - 1, 0, -1):
                r = rng.integers(0, k + 1)
                tmp = perm[k]
                perm[k] = perm[r]
                perm[r] = tmp
            for k in range(m):
                i = pool_i[perm[k]]
                j = pool_j[perm[k]]
                if strategy_code == 0:
                    orders[d, c, k] = i * n_items + j
                elif strategy_code == 1:
                    both = present[c, i, j] and present[c, j, i]
                    if (both and rng.random() < 0.5) or not present[c, i, j]:
                        orders[d, c, k] = j * n_items + i
                    else:
                        orders[d, c, k] = i * n_items + j
                else:
                    if rng.random() < 0.5:
                        i, j = j, i
                    orders[d, c, 2 * k] = i * n_items + j
                    orders[d, c, 2 * k + 1] = j * n_items + i
    return orders, n_avail


# ---------------------------------------------------------------------------------------
# Adaptive selection: Gaussian product of experts
# ---------------------------------------------------------------------------------------
#
# Unknowns theta = (s_1 .. s_N, b): item scores and a first-position bias. A comparison of
# i (first) with j (second) answering p is a Gaussian expert y = p - 0.5 = s_i - s_j + b +
# noise, i.e. y = w . theta + noise with w = e_i - e_j + e_b. With a Gaussian prior the
# posterior N(mu, Sigma) updates in closed form, rank one per comparison. Units: noise
# variance 1, prior variance 1 / prior_weight.
#
# A comparison of weight w (how many games it counts: Arena-Hard's 3 for a strong verdict) is
# w identical experts; their product is one Gaussian expert with noise variance 1 / w (the
# same mean), so its rank-one update is that of a single comparison with the noise
# variance 1 / w: exactly w repeated updates with the same answer, in one step.


@njit
def _poe_init(n_items, prior_weight, model_bias):
    k = n_items + 1
    sigma = np.zeros((k, k))
    for a in range(n_items):
        sigma[a, a] = 1.0 / prior_weight
    # Without a bias term the bias is pinned at 0 (zero prior variance).
    sigma[n_items, n_items] = 1.0 / prior_weight if model_bias else 0.0
    return sigma, np.zeros(k)


@njit
def _poe_update(sigma, mu, i, j, y, w):
    """Rank-one posterior update for the comparison (i first, j second) answering y, with
    weight w (noise variance 1 / w; 1.0 for one plain comparison)."""
    n = sigma.shape[0] - 1
    k = n + 1
    sw = np.empty(k)
    for a in range(k):
        sw[a] = sigma[a, i] - sigma[a, j] + sigma[a, n]
    den = 1.0 / w + sw[i] - sw[j] + sw[n]
    pred = mu[i] - mu[j] + mu[n]
    gain = (y - pred) / den
    for a in range(k):
        mu[a] += sw[a] * gain
    for a in range(k):
        f = sw[a] / den
        for b2 in range(k):
            sigma[a, b2] -= f * sw[b2]


@njit
def _poe_pick(sigma, mu, available, priority, rule_code):
    """Best available ordered pair (i, j) for the rule; ties broken by ``priority``."""
    n = sigma.shape[0] - 1
    best = -np.inf
    best_pri = -1.0
    bi = -1
    bj = -1
    for i in range(n):
        for j in range(n):
            if not available[i, j]:
                continue
            # variance of w . theta for w = e_i - e_j + e_b
            var = (
                sigma[i, i]
                + sigma[j, j]
                - 2.0 * sigma[i, j]
                + sigma[n, n]
                + 2.0 * (sigma[i, n] - sigma[j, n])
            )
            if rule_code == 0:
                score = var
            else:
                # chance-of-misorder ranking: small |expected y| per posterior sd
                score = -abs(mu[i] - mu[j] + mu[n]) / math.sqrt(max(var, 1e-300))
            # rounding makes equal scores differ in the last bits: treat them as ties
            tol = 1e-9 * max(1.0, abs(best))
            if bi < 0 or score > best + tol:
                best = score
            elif score >= best - tol and priority[i, j] > best_pri:
                best = max(best, score)
            else:
                continue
            best_pri = priority[i, j]
            bi = i
            bj = j
    return bi, bj


@njit
def _poe_run(P, G, budget, rule_code, prior_weight, model_bias, priority):
    """Adaptive product-of-experts run on a known (N, N) answer matrix; ``G[i, j]``: the
    weight of the answer P[i, j] (its expert's precision; ones for plain comparisons),
    counted once the pair is asked."""
    n = P.shape[0]
    sigma, mu = _poe_init(n, prior_weight, model_bias)
    available = np.zeros((n, n), dtype=np.bool_)
    for i in range(n):
        for j in range(n):
            available[i, j] = i != j and math.isfinite(P[i, j])
    pairs = np.empty((budget, 2), dtype=np.int64)
    for r in range(budget):
        i, j = _poe_pick(sigma, mu, available, priority, rule_code)
        available[i, j] = False
        _poe_update(sigma, mu, i, j, P[i, j] - 0.5, G[i, j])
        pairs[r, 0] = i
        pairs[r, 1] = j
    return pairs, mu


@dataclass(frozen=True)
class AdaptiveResult:
    """What ``adaptive_rank`` asked and concluded.

    Attributes
    ----------
    pairs : ndarray of int64, shape (budget, 2)
        The comparisons asked, in order, as (first, second).
    p : ndarray, shape (budget,)
        The judge's answers to them.
    scores : ndarray, shape (N,)
        Posterior mean score of every candidate (higher is better).
    score_sd : ndarray, shape (N,)
        Posterior standard deviation of every score (model units).
    position_bias_term : float
        Posterior mean of the first-position bias b (0 when ``model_bias`` is False): the
        judge's average excess p for the first candidate.
    rule : str
        The selection rule used.
    """

    pairs: np.ndarray
    p: np.ndarray
    scores: np.ndarray
    score_sd: np.ndarray
    position_bias_term: float
    rule: str


def adaptive_rank(
    oracle,
    budget,
    rule="poe-max-info",
    *,
    n_items=None,
    prior_weight=0.1,
    model_bias=True,
    random_state=None,
):
    """Rank candidates by asking the judge adaptively chosen comparisons.

    Each comparison (i first, j second) answering p is treated as a Gaussian expert on the
    score difference, p - 0.5 = s_i - s_j + b + noise, where b is the judge's first-position
    bias (estimated along the way when ``model_bias``). The product of the experts is a
    Gaussian posterior over the scores, updated after every answer. The next comparison is
    the not-yet-asked ordered pair chosen by ``rule``:

    * ``"poe-max-info"``: the pair whose answer carries the most information about the
      scores, i.e. the largest posterior variance of s_i - s_j + b (maximum expected entropy
      reduction, the product-of-experts rule of Liusie et al. 2024). Under this Gaussian model
      the choice depends on which pairs were asked, not on the answers: it spreads the
      comparisons evenly over candidates and presentation orders.
    * ``"uncertainty"``: the pair whose order is least certain given the answers so far: the
      smallest |expected p - 0.5| per posterior standard deviation.

    Ties are broken at random (``random_state``).

    Parameters
    ----------
    oracle : array_like of shape (N, N), or callable
        The judge: an (N, N) matrix of answers P[i, j] (NaN where a pair cannot be asked), or
        a function ``oracle(i, j) -> p`` called once per chosen pair (then ``n_items`` is
        required).
    budget : int
        Number of comparisons to ask (at most the number of askable ordered pairs).
    rule : {"poe-max-info", "uncertainty"}, default "poe-max-info"
    n_items : int, optional
        Number of candidates when ``oracle`` is a callable.
    prior_weight : float, default 0.1
        Ratio of answer-noise variance to prior score variance (a ridge penalty); keeps the
        scores finite while the comparison graph is disconnected.
    model_bias : bool, default True
        Estimate a first-position bias term b (otherwise b = 0).
    random_state : None, int or numpy.random.Generator
        Seed for tie-breaking.

    Returns
    -------
    AdaptiveResult
    """
    if rule not in ADAPTIVE_RULES:
        raise ValueError(
            f"unknown adaptive rule {rule!r}; choose one of "
            f"{', '.join(repr(r) for r in ADAPTIVE_RULES)}"
        )
    rule_code = ADAPTIVE_RULES.index(rule)
    budget = _check_budget(budget)
    prior_weight = float(prior_weight)
    if not (prior_weight > 0.0 and math.isfinite(prior_weight)):
        raise ValueError(f"prior_weight must be positive and finite; got {prior_weight!r}")
    rng = check_random_state(random_state)
    if callable(oracle):
        if n_items is None:
            raise ValueError("adaptive_rank with a callable oracle needs n_items")
        n = _check_n_items(n_items)
        P = None
        available = ~np.eye(n, dtype=bool)
    else:
        P = np.asarray(oracle, dtype=np.float64)
        if P.ndim != 2 or P.shape[0] != P.shape[1]:
            raise ValueError(
                f"oracle must be an (N, N) answer matrix or a callable; got shape {P.shape}"
            )
        n = _check_n_items(P.shape[0])
        if n_items is not None and n_items != n:
            raise ValueError(f"n_items = {n_items} does not match the oracle's N = {n}")
        P = np.ascontiguousarray(P.copy())
        np.fill_diagonal(P, np.nan)
        if np.isinf(P).any():
            raise ValueError("oracle contains infinite values; use NaN for pairs not askable")
        finite = np.isfinite(P)
        if (finite & ((P < 0.0) | (P > 1.0))).any():
            raise ValueError("oracle holds probabilities, so values must lie in [0, 1]")
        available = finite
    n_avail = int(available.sum())
    if n_avail == 0:
        raise ValueError("oracle has no askable pair (all NaN)")
    if budget > n_avail:
        raise ValueError(
            f"budget {budget} is larger than the number of askable ordered pairs ({n_avail})"
        )
    priority = rng.random((n, n))
    if P is not None:
        ones = np.ones_like(P)
        pairs, mu = _poe_run(P, ones, budget, rule_code, prior_weight, bool(model_bias), priority)
        answers = P[pairs[:, 0], pairs[:, 1]]
        sigma = _replay_sigma(n, pairs, prior_weight, bool(model_bias))
    else:
        sigma, mu = _poe_init(n, prior_weight, bool(model_bias))
        available = np.ascontiguousarray(available)
        pairs = np.empty((budget, 2), dtype=np.int64)
        answers = np.empty(budget)
        for r in range(budget):
            i, j = _poe_pick(sigma, mu, available, priority, rule_code)
            p = float(oracle(int(i), int(j)))
            if not (0.0 <= p <= 1.0):
                raise ValueError(
                    f"oracle({i}, {j}) returned {p!r}; it must return a probability in [0, 1]"
                )
            available[i, j] = False
            _poe_update(sigma, mu, i, j, p - 0.5, 1.0)
            pairs[r] = (i, j)
            answers[r] = p
    return AdaptiveResult(
        pairs=pairs,
        p=answers,
        scores=mu[:n].copy(),
        score_sd=np.sqrt(np.maximum(np.diag(sigma)[:n], 0.0)),
        position_bias_term=float(mu[n]),
        rule=rule,
    )


def _replay_sigma(n, pairs, prior_weight, model_bias):
    # The covariance does not depend on the answers, so replaying the pairs with y = 0
    # recovers it without returning it from the kernel.
    sigma, mu = _poe_init(n, prior_weight, model_bias)
    for i, j in pairs:
        _poe_update(sigma, mu, i, j, 0.0, 1.0)
    return sigma


@njit
def _adaptive_draw(P, G, present_n, rule_code, prior_weight, model_bias, priority, orders_d):
    """One draw of the adaptive sequences: context c is ``adaptive_rank(P[c], ...)`` with
    the tie-break priorities ``priority[c]`` and each answer counted with its weight
    ``G[c, i, j]``, into orders_d[c] (-1 beforehand)."""
    n_contexts, n_items, _ = P.shape
    for c in range(n_contexts):
        m = min(orders_d.shape[1], present_n[c])
        pairs, _ = _poe_run(P[c], G[c], m, rule_code, prior_weight, model_bias, priority[c])
        for k in range(m):
            orders_d[c, k] = pairs[k, 0] * n_items + pairs[k, 1]


def _adaptive_orders(
    P, present_n, rule_code, prior_weight, model_bias, n_draws, length, rng, weights=None
):
    """Adaptive sequences (n_draws, n_contexts, length) for ``budget_curves``.

    Context c of draw d is ``adaptive_rank(P[c], ...)`` with tie-break priorities drawn from
    the numpy Generator ``rng`` in (draw, context) order. ``weights`` (P's shape, optional):
    each answer's weight, the precision of its expert once asked (the selector learns a
    strong verdict's weight with the answer); None: every answer counts once.
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    if weights is None:
        G = np.ones_like(P)
    else:
        # where P has no answer the pair is never asked: any positive value will do
        G = np.ascontiguousarray(np.where(np.isfinite(P), weights, 1.0), dtype=np.float64)
    n_contexts, n_items, _ = P.shape
    present_n = np.ascontiguousarray(present_n, dtype=np.int64)
    orders = np.full((n_draws, n_contexts, length), -1, dtype=np.int32)
    for d in range(n_draws):
        priority = rng.random((n_contexts, n_items, n_items))
        _adaptive_draw(
            P, G, present_n, rule_code, float(prior_weight), bool(model_bias), priority, orders[d]
        )
    return orders

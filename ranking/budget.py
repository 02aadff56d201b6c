"""Budget curves: how well does a judge rank with R comparisons per context?

For every budget R, comparison strategy, debias on/off and seeded draw, the first R
comparisons of a random (or adaptive) sequence are ranked with the chosen method and
correlated with a reference (human scores, or a simulator's truth), per context, then averaged
over contexts. Repeating over draws gives the mean and the spread of the curve.

The static-strategy grid with a win-ratio method runs as one numba kernel: parallel over
draws; per context the win counts grow incrementally with the budget; with debias, the
threshold is re-estimated at every budget from all comparisons seen so far in that draw (all
contexts pooled, a Fenwick tree over the sorted probabilities gives the median in log time)
and only the comparisons whose decision the moved threshold changes are revisited.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numba import prange

from ranking._checks import as_P
from ranking._numba import njit
from ranking.metrics import (
    _doubled_centred_ranks,
    _kendall_row,
    _spearman_preranked,
    _spearman_row,
    as_reference,
)
from ranking.scores import _check_tau, _decide
from ranking.selection import (
    _STRATEGY_CODE,
    ADAPTIVE_RULES,
    _adaptive_orders,
    _poe_init,
    _poe_update,
    _static_orders,
    strategy_capacity,
)

METHODS = ("win_ratio", "soft_win_ratio", "bradley_terry", "poe")
CORRELATIONS = ("spearman", "kendall")
CURVE_STRATEGIES = ("random", "no-repeat", "symmetric") + ADAPTIVE_RULES


@dataclass(frozen=True)
class BudgetCurves:
    """Correlation with the reference as a function of the comparison budget.

    Axes: ``s`` strategy, ``b`` debias setting, ``d`` draw, ``k`` budget.

    Attributes
    ----------
    budgets : ndarray of int, shape (n_budgets,)
        Comparisons per context.
    strategies : tuple of str
    debias : tuple of bool
    values : ndarray, shape (n_strategies, n_debias, n_draws, n_budgets)
        Per draw: the correlation per context, averaged over the contexts where it is defined.
        NaN where the strategy cannot spend the budget or no context has a defined value.
    mean, std, p10, p90 : ndarray, shape (n_strategies, n_debias, n_budgets)
        Over draws (NaN draws left out): mean, standard deviation (ddof=1; 0 for one draw),
        10th and 90th percentiles.
    frac_defined : ndarray, shape (n_strategies, n_debias, n_budgets)
        Share of (draw, context) cells with a defined correlation (a constant prediction, or
        fewer than two scored candidates, has none).
    tau : ndarray, shape (n_strategies, n_draws, n_budgets)
        The balanced threshold estimated at each budget of each draw, used when debias is on
        (NaN when no debias setting is on, for ``method="poe"``, and where the budget is not
        spendable).
    method, correlation, unseen : str
    n_draws : int
    """

    budgets: np.ndarray
    strategies: tuple
    debias: tuple
    values: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    p10: np.ndarray
    p90: np.ndarray
    frac_defined: np.ndarray
    tau: np.ndarray
    method: str
    correlation: str
    unseen: str
    n_draws: int

    def curve(self, strategy, debias=False):
        """(mean, std, p10, p90) arrays over ``budgets`` for one strategy and debias setting."""
        s, b = self._index(strategy, debias)
        return self.mean[s, b], self.std[s, b], self.p10[s, b], self.p90[s, b]

    def _index(self, strategy, debias):
        if strategy not in self.strategies:
            raise ValueError(f"strategy {strategy!r} is not in these curves ({self.strategies})")
        if bool(debias) not in self.debias:
            raise ValueError(f"debias={debias!r} is not in these curves ({self.debias})")
        return self.strategies.index(strategy), self.debias.index(bool(debias))


# ---------------------------------------------------------------------------------------
# Pooled balanced threshold along the budget (Fenwick tree over global value ranks)
# ---------------------------------------------------------------------------------------


@njit
def _bit_add(tree, pos):
    k = pos + 1
    m = tree.shape[0]
    while k < m:
        tree[k] += 1
        k += k & (-k)


@njit
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


@njit
def _tau_from_tree(tree, log2, n, gvals, grp_lo, grp_hi):
    """``bias._balanced_from_sorted`` on the multiset held by the tree (same rule)."""
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
    n_equal = n - n_above - n_below
    best = t
    err = abs(2 * n_above + n_equal - n)
    if n_above > 0:
        e_up = abs(2 * n_above - n)
        if e_up < err:
            best = 0.5 * (t + gvals[_bit_kth(tree, n - n_above + 1, log2)])
            err = e_up
    if n_below > 0:
        e_dn = abs(2 * (n_above + n_equal) - n)
        if e_dn < err:
            best = 0.5 * (gvals[_bit_kth(tree, n_below, log2)] + t)
            err = e_dn
    return best


@njit
def _pooled_taus_draw(orders_d, n_avail, eval_r, grank, gvals, grp_lo, grp_hi, out):
    """Balanced threshold over all comparisons seen in one draw, at every budget."""
    n_contexts = orders_d.shape[0]
    m = gvals.shape[0]
    tree = np.zeros(m + 1, dtype=np.int64)
    log2 = 1
    while log2 * 2 <= m:
        log2 *= 2
    pos = np.zeros(n_contexts, dtype=np.int64)
    n_seen = 0
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


@njit(parallel=True)
def _pooled_taus(orders, n_avail, eval_r, grank, gvals, grp_lo, grp_hi):
    n_draws = orders.shape[0]
    out = np.empty((n_draws, eval_r.shape[0]))
    for d in prange(n_draws):
        _pooled_taus_draw(orders[d], n_avail, eval_r, grank, gvals, grp_lo, grp_hi, out[d])
    return out


# ---------------------------------------------------------------------------------------
# The win-ratio grid kernel
# ---------------------------------------------------------------------------------------


@njit
def _correlate(scores, ref_c, corr_code):
    if corr_code == 0:
        return _spearman_row(scores, ref_c)
    return _kendall_row(scores, ref_c, False)


@njit
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
    n = 0
    for u in range(ref_c.shape[0]):
        if ok_c[u]:
            idx[n] = u
            n += 1
    x = np.empty(n)
    for a in range(n):
        x[a] = ref_c[idx[a]]
    _doubled_centred_ranks(x, n, ref_rc)
    ss = 0
    for a in range(n):
        ss += ref_rc[a] * ref_rc[a]
    return n, ss


@njit
def _winratio_context(
    P_c,
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
    """Add one context's correlations at every budget of one draw into out_sum / out_n."""
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
    pos = 0
    tau_used = tau0
    for k in range(eval_r.shape[0]):
        r = eval_r[k]
        if r < 0:
            break
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
                wins[i] += v
                wins[j] += 1.0 - v
                cnt[i] += 1.0
                cnt[j] += 1.0
            pos = target
        else:
            if debias and t_new != tau_used:
                # Only comparisons with p between the old and new threshold change decision.
                lo = min(t_new, tau_used)
                hi = max(t_new, tau_used)
                n_c = csort_vals_c.shape[0]
                q = np.searchsorted(csort_vals_c, lo, side="left")
                while q < n_c and csort_vals_c[q] <= hi:
                    code = csort_codes_c[q]
                    if seen[code]:
                        i = code // n_items
                        j = code - i * n_items
                        p = P_c[i, j]
                        delta = _decide(p, t_new) - _decide(p, tau_used)
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
                wins[i] += v
                wins[j] += 1.0 - v
                cnt[i] += 1.0
                cnt[j] += 1.0
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
            rho = _correlate(scores, ref_c, corr_code)
        if math.isfinite(rho):
            out_sum[k] += rho
            out_n[k] += 1.0


@njit(parallel=True)
def _winratio_grid(
    P,
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
    n_draws, n_contexts, _ = orders.shape
    n_budgets = eval_r.shape[0]
    out_sum = np.zeros((n_draws, n_budgets))
    out_n = np.zeros((n_draws, n_budgets))
    for d in prange(n_draws):
        for c in range(n_contexts):
            _winratio_context(
                P[c],
                ref[c],
                ok[c],
                orders[d, c],
                n_avail[c],
                eval_r,
                taus[d],
                debias,
                soft,
                tau0,
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


@njit(parallel=True)
def _poe_grid(P, ref, ok, orders, n_avail, eval_r, model_bias, prior_weight, corr_code, neutral):
    n_draws, n_contexts, _ = orders.shape
    n_items = P.shape[1]
    n_budgets = eval_r.shape[0]
    out_sum = np.zeros((n_draws, n_budgets))
    out_n = np.zeros((n_draws, n_budgets))
    for d in prange(n_draws):
        scores = np.empty(n_items)
        cnt = np.zeros(n_items)
        for c in range(n_contexts):
            sigma, mu = _poe_init(n_items, prior_weight, model_bias)
            cnt[:] = 0.0
            pos = 0
            for k in range(n_budgets):
                r = eval_r[k]
                if r < 0:
                    break
                target = min(r, n_avail[c])
                while pos < target:
                    code = orders[d, c, pos]
                    i = code // n_items
                    j = code - i * n_items
                    _poe_update(sigma, mu, i, j, P[c, i, j] - 0.5)
                    cnt[i] += 1.0
                    cnt[j] += 1.0
                    pos += 1
                for u in range(n_items):
                    if not ok[c, u] or (cnt[u] == 0.0 and not neutral):
                        scores[u] = np.nan
                    else:
                        scores[u] = mu[u]
                rho = _correlate(scores, ref[c], corr_code)
                if math.isfinite(rho):
                    out_sum[d, k] += rho
                    out_n[d, k] += 1.0
    return out_sum, out_n


# ---------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------


def _check_budgets(budgets, n_ordered, method):
    if budgets is None:
        if method == "bradley_terry":
            # One BT fit per (draw, budget): a grid keeps this path affordable.
            grid = np.unique(np.round(np.geomspace(1, n_ordered, 24)).astype(np.int64))
            return np.unique(np.concatenate([grid, [n_ordered // 2, n_ordered]]))
        return np.arange(1, n_ordered + 1, dtype=np.int64)
    b = np.asarray(budgets)
    if b.ndim != 1 or b.size == 0:
        raise ValueError(f"budgets must be a non-empty 1-D list of integers; got shape {b.shape}")
    if not np.issubdtype(b.dtype, np.integer):
        if not np.all(np.isfinite(b)) or not np.all(b == np.round(b)):
            raise ValueError(f"budgets must be integers; got {budgets!r}")
    b = b.astype(np.int64)
    if b.min() < 1 or b.max() > n_ordered:
        raise ValueError(
            f"budgets must lie between 1 and N(N-1) = {n_ordered} comparisons per context; "
            f"got {b.min()}..{b.max()}"
        )
    return np.unique(b)


def _eval_r(strategy, budgets, n_items):
    """Comparisons actually used per budget (-1 where the strategy cannot spend it)."""
    cap = strategy_capacity(strategy, n_items)
    r = budgets.copy()
    if strategy == "symmetric":
        r -= r % 2  # pairs come in both orders: an odd budget spends one less
    r[budgets > cap] = -1
    return r


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


def _summarise(values):
    with warnings.catch_warnings():
        # all-NaN columns (unspendable budgets) are expected and stay NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=-2)
        n_ok = np.sum(np.isfinite(values), axis=-2)
        if values.shape[-2] > 1:
            std = np.nanstd(values, axis=-2, ddof=1)
        else:
            std = np.zeros_like(mean)
        std = np.where(n_ok == 1, 0.0, np.where(n_ok == 0, np.nan, std))
        p10 = np.nanpercentile(values, 10, axis=-2)
        p90 = np.nanpercentile(values, 90, axis=-2)
    return mean, std, p10, p90


def _strategy_orders(P, strategies, n_draws, rng, prior_weight):
    """(orders, n_avail) per strategy: the comparison sequences of every draw and context.

    ``orders[d, c, :R]`` are the ordered-pair codes i * N + j a budget R uses.
    """
    n_items = P.shape[1]
    present = np.isfinite(P)
    n_present = present.reshape(P.shape[0], -1).sum(axis=1).astype(np.int64)
    out = []
    for strategy in strategies:
        # one child stream per strategy, so adding a strategy leaves the others' draws alone
        child = np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
        if strategy in ADAPTIVE_RULES:
            orders = _adaptive_orders(
                P,
                n_present,
                ADAPTIVE_RULES.index(strategy),
                float(prior_weight),
                True,
                n_draws,
                n_items * (n_items - 1),
                child,
            )
            out.append((orders, n_present.copy()))
        else:
            out.append(_static_orders(present, _STRATEGY_CODE[strategy], n_draws, child))
    return out


def budget_curves(
    P,
    reference,
    *,
    budgets=None,
    strategies=("random", "no-repeat", "symmetric"),
    debias=(False, True),
    n_draws=50,
    method="win_ratio",
    correlation="spearman",
    tau=0.5,
    unseen="neutral",
    random_state=0,
    prior_weight=0.1,
    bt_kwargs=None,
):
    """Correlation with a reference as a function of the number of comparisons per context.

    For every strategy, debias setting, draw and budget R, each context's first R comparisons
    of a seeded random sequence (or an adaptive one) are ranked with ``method`` and correlated
    with ``reference``; the value of the draw is the mean over contexts.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N)
        The judge's answers for every ordered pair (NaN where a pair was not judged, and for
        padding candidates): the comparisons that a budget draws from.
    reference : array_like, shape (n_contexts, N)
        Reference scores (human scores or the simulator's truth); NaN where missing.
    budgets : array_like of int, optional
        Comparisons per context, between 1 and N(N-1). Default: every budget 1..N(N-1) (a
        geometric grid of about 25 budgets for ``"bradley_terry"``).
    strategies : sequence of str
        Any of ``"random"``, ``"no-repeat"``, ``"symmetric"`` (see ``select_comparisons``) and
        the adaptive rules ``"poe-max-info"``, ``"uncertainty"`` (see ``adaptive_rank``; the
        adaptive choice is replayed on P, draws differ by random tie-breaking). A budget a
        strategy cannot spend (over N(N-1)/2 for ``"no-repeat"``) gives NaN; ``"symmetric"``
        spends pairs in both orders, so an odd budget R uses R - 1 comparisons. A context
        with fewer present pairs than R uses all it has.
    debias : sequence of bool, default (False, True)
        Without debias, hard decisions use ``tau``. With debias, the threshold is the
        balanced threshold (``ranking.bias.balanced_threshold``) of all comparisons seen in
        that draw at that budget, every context pooled; soft scores use the equivalent weight
        alpha (``debias``). For ``method="poe"`` debias instead fits the model's
        first-position bias term.
    n_draws : int, default 50
        Seeded random sequences per strategy.
    method : {"win_ratio", "soft_win_ratio", "bradley_terry", "poe"}
        Hard or soft win-ratio (fast numba grid), Bradley–Terry (``ranking.bradley_terry``,
        one fit per draw and budget, soft outcomes), or the Gaussian product-of-experts
        posterior mean of ``adaptive_rank``.
    correlation : {"spearman", "kendall"}
        Kendall is tau-b.
    tau : float, default 0.5
        Decision threshold when debias is off.
    unseen : {"neutral", "omit"}, default "neutral"
        A candidate not yet compared at budget R: ``"neutral"`` ranks it in the middle
        (win-ratio 0.5; the prior mean for PoE; the mean of the context's fitted scores for
        Bradley–Terry), so every value correlates all scored candidates; ``"omit"`` leaves it
        out of the correlation, which flatters small budgets (two candidates always correlate
        perfectly or inversely).
    random_state : None, int or numpy.random.Generator, default 0
    prior_weight : float, default 0.1
        Ridge weight of the PoE model (``method="poe"`` and the adaptive strategies).
    bt_kwargs : dict, optional
        Extra keyword arguments for ``bradley_terry``.

    Returns
    -------
    BudgetCurves

    Raises
    ------
    ValueError
        Bad P or reference, unknown strategy, method or correlation, budgets out of range,
        n_draws < 1, or no context with two scored reference candidates.
    """
    P = as_P(P)
    n_contexts, n_items, _ = P.shape
    ref = as_reference(reference, n_contexts, n_items)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}")
    if correlation not in CORRELATIONS:
        raise ValueError(f"unknown correlation {correlation!r}; choose one of {CORRELATIONS}")
    if unseen not in ("neutral", "omit"):
        raise ValueError(f"unseen must be 'neutral' or 'omit'; got {unseen!r}")
    strategies = tuple(strategies)
    if len(strategies) == 0:
        raise ValueError("strategies is empty")
    for s in strategies:
        if s not in CURVE_STRATEGIES:
            raise ValueError(
                f"unknown strategy {s!r} for budget curves; choose from {CURVE_STRATEGIES} "
                "('all' is the end point of every curve)"
            )
    debias = tuple(debias) if np.ndim(debias) else (debias,)
    if len(debias) == 0 or not all(isinstance(x, (bool, np.bool_)) for x in debias):
        raise ValueError(
            f"debias must be a tuple of booleans such as (False, True); got {debias!r}"
        )
    debias = tuple(bool(x) for x in debias)
    prior_weight = float(prior_weight)
    if not (prior_weight > 0.0 and math.isfinite(prior_weight)):
        raise ValueError(f"prior_weight must be positive and finite; got {prior_weight!r}")
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer; got {n_draws!r}")
    n_draws = int(n_draws)
    tau = _check_tau(tau)
    n_ordered = n_items * (n_items - 1)
    budgets = _check_budgets(budgets, n_ordered, method)
    present = np.isfinite(P)
    ok = present.any(axis=2) | present.any(axis=1)
    ok &= np.isfinite(ref)
    if not (ok.sum(axis=1) >= 2).any():
        raise ValueError(
            "no context has two candidates with both comparisons and a finite reference score"
        )
    ref_ok = np.where(ok, ref, np.nan)
    rng = np.random.default_rng(random_state)
    tables = _value_tables(P)
    gvals, grank, grp_lo, grp_hi, csort_codes, csort_vals, csort_n = tables
    corr_code = CORRELATIONS.index(correlation)
    neutral = unseen == "neutral"

    n_s, n_b, n_k = len(strategies), len(debias), budgets.size
    values = np.full((n_s, n_b, n_draws, n_k), np.nan)
    frac = np.full((n_s, n_b, n_k), np.nan)
    taus_out = np.full((n_s, n_draws, n_k), np.nan)
    sequences = _strategy_orders(P, strategies, n_draws, rng, prior_weight)
    for si, strategy in enumerate(strategies):
        orders, n_avail = sequences[si]
        eval_r = _eval_r(strategy, budgets, n_items)
        taus = None
        if any(debias) and method != "poe":
            taus = _pooled_taus(orders, n_avail, eval_r, grank, gvals, grp_lo, grp_hi)
            taus_out[si] = taus
        for bi, deb in enumerate(debias):
            if method in ("win_ratio", "soft_win_ratio"):
                out_sum, out_n = _winratio_grid(
                    P,
                    ref_ok,
                    ok,
                    orders,
                    n_avail,
                    eval_r,
                    taus if deb else np.zeros((n_draws, n_k)),
                    deb,
                    method == "soft_win_ratio",
                    tau,
                    corr_code,
                    neutral,
                    csort_codes,
                    csort_vals,
                    csort_n,
                )
            elif method == "poe":
                out_sum, out_n = _poe_grid(
                    P,
                    ref_ok,
                    ok,
                    orders,
                    n_avail,
                    eval_r,
                    deb,
                    float(prior_weight),
                    corr_code,
                    neutral,
                )
            else:
                out_sum, out_n = _bt_grid(
                    P,
                    ref_ok,
                    ok,
                    orders,
                    n_avail,
                    eval_r,
                    taus if deb else None,
                    tau,
                    corr_code,
                    neutral,
                    bt_kwargs or {},
                )
            out_n[:, eval_r < 0] = 0.0
            with np.errstate(invalid="ignore", divide="ignore"):
                values[si, bi] = np.where(out_n > 0, out_sum / np.maximum(out_n, 1.0), np.nan)
            frac[si, bi] = np.where(eval_r >= 0, out_n.sum(axis=0) / (n_draws * n_contexts), np.nan)
    mean, std, p10, p90 = _summarise(values)
    return BudgetCurves(
        budgets=budgets,
        strategies=strategies,
        debias=debias,
        values=values,
        mean=mean,
        std=std,
        p10=p10,
        p90=p90,
        frac_defined=frac,
        tau=taus_out,
        method=method,
        correlation=correlation,
        unseen=unseen,
        n_draws=n_draws,
    )


def _bt_grid(P, ref, ok, orders, n_avail, eval_r, taus, tau0, corr_code, neutral, bt_kwargs):
    """Bradley–Terry along the budget: one batched fit per (draw, budget). Slow path."""
    from ranking.bias import alpha_for_tau, debias
    from ranking.bradley_terry import bradley_terry
    from ranking.metrics import kendall, spearman

    n_draws, n_contexts, _ = orders.shape
    n_items = P.shape[1]
    out_sum = np.zeros((n_draws, eval_r.size))
    out_n = np.zeros((n_draws, eval_r.size))
    cols = np.arange(orders.shape[2])
    for d in range(n_draws):
        for k, r in enumerate(eval_r):
            if r <= 0:
                continue
            take = cols[None, :] < np.minimum(r, n_avail)[:, None]
            c_idx, q_idx = np.nonzero(take)
            codes = orders[d, c_idx, q_idx]
            sub = np.full(P.shape, np.nan)
            i, j = codes // n_items, codes % n_items
            sub[c_idx, i, j] = P[c_idx, i, j]
            if taus is not None:
                t = taus[d, k]
                if 0.0 < t < 1.0:
                    sub = debias(sub, alpha_for_tau(t))
                else:
                    sub = np.where(np.isfinite(sub), (sub > t) + 0.5 * (sub == t), np.nan)
            counts = np.isfinite(sub).sum(axis=2) + np.isfinite(sub).sum(axis=1)
            # contexts without comparisons cannot be fitted; they score nothing
            fit = counts.sum(axis=1) > 0
            scores = np.full((n_contexts, n_items), np.nan)
            fitted = np.asarray(bradley_terry(P=sub[fit], soft=True, **bt_kwargs).scores)
            scores[fit] = fitted
            seen = counts > 0
            if neutral:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    mid = np.nanmean(np.where(seen & ok, scores, np.nan), axis=1)
                scores = np.where(seen, scores, mid[:, None])
            else:
                scores = np.where(seen, scores, np.nan)
            scores = np.where(ok, scores, np.nan)
            rho = spearman(scores, ref) if corr_code == 0 else kendall(scores, ref)
            good = np.isfinite(rho)
            out_sum[d, k] = rho[good].sum()
            out_n[d, k] = good.sum()
    return out_sum, out_n


def comparisons_needed(curves, rho):
    """Smallest budget whose mean correlation reaches ``rho``, per strategy and debias setting.

    Parameters
    ----------
    curves : BudgetCurves
    rho : float
        Target correlation.

    Returns
    -------
    dict
        ``{(strategy, debias): budget}``, with None where the mean never reaches ``rho``
        within the budgets computed.
    """
    if not isinstance(curves, BudgetCurves):
        raise ValueError(f"curves must be a BudgetCurves; got {type(curves).__name__}")
    rho = float(rho)
    if not (-1.0 <= rho <= 1.0):
        raise ValueError(f"rho is a correlation and must lie in [-1, 1]; got {rho}")
    out = {}
    for si, s in enumerate(curves.strategies):
        for bi, deb in enumerate(curves.debias):
            m = curves.mean[si, bi]
            hit = np.flatnonzero(np.isfinite(m) & (m >= rho))
            out[(s, deb)] = int(curves.budgets[hit[0]]) if hit.size else None
    return out

"""Budget curves: how well does a judge rank with R comparisons per context?

For every budget R, comparison strategy, debias on/off and seeded draw, the first R
comparisons of a random (or adaptive) sequence are ranked with the chosen method and
correlated with a reference (human scores, or a simulator's truth), per context, then averaged
over contexts. Repeating over draws gives the mean and the spread of the curve.

This module checks the inputs, draws the comparison sequences (``ranking.budget.selection``), runs
the grid of one strategy at a time and summarises it over draws. The grid itself lives in
``ranking.budget.grid`` (numba kernels for the win-ratio and product-of-experts methods and
the pooled balanced threshold along the budget) and ``ranking.budget.bt`` (Bradley–Terry:
one compiled loop over draws, contexts and budgets, each fit warm started from the previous
budget's scores, in ``ranking.budget.bt_kernel``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ranking._core.checks import as_P, check_random_state, check_tau, weights_on
from ranking.agreement.metrics import as_reference

from .bt import _bt_grid
from .bt_kernel import _bt_grid_fast
from .grid import _poe_grid, _pooled_taus, _value_tables, _winratio_grid
from .selection import (
    _STRATEGY_CODE,
    ADAPTIVE_RULES,
    _adaptive_draw,
    _adaptive_orders,
    _check_count,
    _static_orders,
    strategy_capacity,
)

METHODS = ("win_ratio", "bradley_terry", "poe")
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
# Inputs, sequences and summaries
# ---------------------------------------------------------------------------------------


#: Keyword arguments of ``bradley_terry`` that ``budget_curves`` sets itself.
_BT_OWN = ("P", "first", "second", "outcome", "n_items", "tau", "weights")


def _check_method(method, tau, bt_kwargs, n_contexts):
    """(tau0, bt_kwargs): the win-ratio's threshold per context (NaN when soft; unused) and
    the extra arguments of ``bradley_terry``, after checking that the method uses them."""
    if method == "soft_win_ratio":
        raise ValueError(
            "method 'soft_win_ratio' is now method='win_ratio' with tau=None (soft outcomes, "
            "the default); a float tau gives hard decisions"
        )
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}")
    if tau is not None and method != "win_ratio":
        raise ValueError(
            f"tau applies to method='win_ratio' only: {method!r} uses the probabilities "
            "themselves (soft outcomes), so leave tau=None"
        )
    if bt_kwargs and method != "bradley_terry":
        raise ValueError(
            f"bt_kwargs are arguments of Bradley–Terry; method {method!r} does not use them"
        )
    bt_kwargs = dict(bt_kwargs or {})
    own = sorted(set(bt_kwargs) & set(_BT_OWN))
    if own:
        raise ValueError(
            f"bt_kwargs may not set {', '.join(own)}: budget_curves passes the comparisons "
            "of each budget itself"
        )
    tau0 = check_tau(tau, n_contexts, allow_none=True, broadcast=True)
    return (np.full(n_contexts, np.nan) if tau0 is None else tau0), bt_kwargs


def _check_strategies(strategies):
    strategies = tuple(strategies)
    if len(strategies) == 0:
        raise ValueError("strategies is empty")
    for s in strategies:
        if s not in CURVE_STRATEGIES:
            raise ValueError(
                f"unknown strategy {s!r} for budget curves; choose from {CURVE_STRATEGIES} "
                "('all' is the end point of every curve)"
            )
    return strategies


def _check_debias(debias):
    debias = tuple(debias) if np.ndim(debias) else (debias,)
    if len(debias) == 0 or not all(isinstance(x, (bool, np.bool_)) for x in debias):
        raise ValueError(
            f"debias must be a tuple of booleans such as (False, True); got {debias!r}"
        )
    return tuple(bool(x) for x in debias)


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
    r[budgets > cap] = -1
    if strategy == "symmetric":
        # as in select_comparisons: every pair in both orders, so an odd budget is refused
        r[budgets % 2 == 1] = -1
    return r


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


def _strategy_orders(P, strategies, n_draws, rng, prior_weight, weights=None):
    """(orders, n_avail) per strategy: the comparison sequences of every draw and context.

    ``orders[d, c, :R]`` are the ordered-pair codes i * N + j a budget R uses. ``weights``
    (P's shape, optional): the answers' weights, which the adaptive rules' product of
    experts counts (the static draws do not depend on them).
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
                weights,
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
    tau=None,
    unseen="neutral",
    random_state=None,
    prior_weight=0.1,
    bt_kwargs=None,
    weights=None,
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
        adaptive choice is replayed on P, draws differ by random tie-breaking). A budget that
        ``select_comparisons`` refuses for a strategy gives NaN: over N(N-1)/2 for
        ``"no-repeat"``, and an odd budget for ``"symmetric"``, which shows every pair in
        both orders (half a pair is not symmetric). A context with fewer present pairs than
        R uses all it has.
    debias : sequence of bool, default (False, True)
        Without debias, outcomes are soft or decided at ``tau``. With debias, the threshold
        is the balanced threshold (``ranking.bias.balanced_threshold``) of all comparisons
        seen in that draw at that budget, every context pooled: hard decisions use it in
        place of ``tau``, soft outcomes are reweighted by the equivalent weight alpha
        (``ranking.bias.debias``). For ``method="poe"`` debias instead fits the model's
        first-position bias term.
    n_draws : int, default 50
        Seeded random sequences per strategy.
    method : {"win_ratio", "bradley_terry", "poe"}
        Win-ratio (fast numba grid), Bradley–Terry (the maximum-likelihood scores of
        ``ranking.bradley_terry`` per context, draw and budget, fitted in one compiled loop
        with warm starts; scores within 1e-9 of each other count as tied), or the Gaussian
        product-of-experts posterior mean of ``adaptive_rank``.
    correlation : {"spearman", "kendall"}
        Kendall is tau-b.
    tau : None, float or array_like of shape (n_contexts,), default None
        Outcomes of the win-ratio. None: soft, the first candidate wins p and the second
        1 - p. A threshold (one, or one per context): hard decisions ``ranking.decide``, 1
        if p > tau, 0 if p < tau, 0.5 if p == tau. Bradley–Terry and PoE always use the
        probabilities themselves, so they take no ``tau``.
    unseen : {"neutral", "omit"}, default "neutral"
        A candidate not yet compared at budget R: ``"neutral"`` ranks it in the middle
        (win-ratio 0.5; the prior mean for PoE; the mean of the context's fitted scores for
        Bradley–Terry), so every value correlates all scored candidates; ``"omit"`` leaves it
        out of the correlation, which flatters small budgets (two candidates always correlate
        perfectly or inversely).
    random_state : None, int or numpy.random.Generator, default None
        Seed of the draws; pass an int for reproducible curves.
    prior_weight : float, default 0.1
        Ridge weight of the PoE model (``method="poe"`` and the adaptive strategies).
    bt_kwargs : dict, optional
        Extra keyword arguments for ``bradley_terry`` (``method="bradley_terry"`` only).
    weights : array_like of float, optional
        P's shape: how many games each comparison counts (a finite number > 0 where P has
        one; Arena-Hard's 3 for a strong verdict); None counts every comparison once (the
        same curves as weights of 1, exactly). A weighted comparison costs one comparison
        of the budget and counts with its weight in every method: in the win-ratio,
        weighted wins / weighted games; in Bradley–Terry, the weighted log-likelihood (a
        comparison adds w y and w (1 - y) to the win weights, as ``bradley_terry(weights=)``);
        in the product of experts, a comparison of weight w is w identical Gaussian experts,
        i.e. one expert with noise variance 1 / w (its precision times w). With an integer
        weight w, the scores after a set of comparisons are those of the same set with each
        comparison written w times (``bradley_terry`` on the replicated rows, w updates of
        the posterior); along the budget a weighted comparison is still one step, so the
        identity holds per set of comparisons seen, not per budget. The debiasing threshold (the
        balanced threshold of the comparisons seen) counts each comparison once; the
        adaptive strategies' product of experts counts each answer with its weight once
        asked (the judge's strong verdict is known with its answer), so with weights they
        may choose other sequences.

    Returns
    -------
    BudgetCurves

    Raises
    ------
    ValueError
        Bad P or reference, unknown strategy, method or correlation, budgets out of range,
        n_draws < 1, a ``tau`` or ``bt_kwargs`` the method does not use, bad weights (not
        P's shape, or not a finite number > 0 where P has a comparison), or no context with
        two scored reference candidates.
    """
    P = as_P(P)
    W = weights_on(P, weights)
    W = np.where(np.isfinite(P), 1.0, 0.0) if W is None else W
    n_contexts, n_items, _ = P.shape
    ref = as_reference(reference, n_contexts, n_items)
    tau0, bt_kwargs = _check_method(method, tau, bt_kwargs, n_contexts)
    if correlation not in CORRELATIONS:
        raise ValueError(f"unknown correlation {correlation!r}; choose one of {CORRELATIONS}")
    if unseen not in ("neutral", "omit"):
        raise ValueError(f"unseen must be 'neutral' or 'omit'; got {unseen!r}")
    strategies = _check_strategies(strategies)
    debias = _check_debias(debias)
    prior_weight = float(prior_weight)
    if not (prior_weight > 0.0 and math.isfinite(prior_weight)):
        raise ValueError(f"prior_weight must be positive and finite; got {prior_weight!r}")
    n_draws = _check_count(n_draws, "n_draws", 1, "a positive integer")
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
    rng = check_random_state(random_state)
    tables = _value_tables(P)
    gvals, grank, grp_lo, grp_hi, csort_codes, csort_vals, csort_n = tables
    corr_code = CORRELATIONS.index(correlation)
    neutral = unseen == "neutral"

    n_s, n_b, n_k = len(strategies), len(debias), budgets.size
    values = np.full((n_s, n_b, n_draws, n_k), np.nan)
    frac = np.full((n_s, n_b, n_k), np.nan)
    taus_out = np.full((n_s, n_draws, n_k), np.nan)
    sequences = _strategy_orders(P, strategies, n_draws, rng, prior_weight, W)
    for si, strategy in enumerate(strategies):
        orders, n_avail = sequences[si]
        eval_r = _eval_r(strategy, budgets, n_items)
        taus = None
        if any(debias) and method != "poe":
            taus = _pooled_taus(orders, n_avail, eval_r, grank, gvals, grp_lo, grp_hi)
            taus_out[si] = taus
        for bi, deb in enumerate(debias):
            if method == "win_ratio":
                out_sum, out_n = _winratio_grid(
                    P,
                    W,
                    ref_ok,
                    ok,
                    orders,
                    n_avail,
                    eval_r,
                    taus if deb else np.zeros((n_draws, n_k)),
                    deb,
                    tau is None,
                    tau0,
                    corr_code,
                    neutral,
                    csort_codes,
                    csort_vals,
                    csort_n,
                )
            elif method == "poe":
                out_sum, out_n = _poe_grid(
                    P,
                    W,
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
                    W,
                    ref_ok,
                    ok,
                    orders,
                    n_avail,
                    eval_r,
                    taus if deb else None,
                    corr_code,
                    neutral,
                    bt_kwargs,
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


def kernels_on_disk(method="win_ratio", strategies=CURVE_STRATEGIES, debias=True) -> bool:
    """Whether the compiled code :func:`budget_curves` needs for ``method`` and
    ``strategies`` is ready: compiled in this process, or in numba's disk cache for today's
    sources (any signature). False says a call compiles first (about 20 s on a fresh
    install for the win-ratio curves); a page can then wait for a background warm-up
    instead of compiling beside it. Never raises: when numba's cache cannot be read it
    answers True (the call compiles, as it would have).
    """
    grid = {"win_ratio": _winratio_grid, "poe": _poe_grid, "bradley_terry": _bt_grid_fast}
    kernels = [grid[method].serial]
    if any(s in ADAPTIVE_RULES for s in strategies):
        kernels.append(_adaptive_draw)
    if any(s not in ADAPTIVE_RULES for s in strategies):
        kernels.append(_static_orders)
    if debias and method != "poe":
        kernels.append(_pooled_taus.serial)
    try:
        return all(k.signatures or k._cache._cache_file._load_index() for k in kernels)
    except Exception:  # noqa: BLE001 - numba internals moved: behave as before (compile)
        return True

"""Budget curves: the numba grid against a loop-and-scipy twin, end points, adaptive curve."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import (
    balanced_threshold,
    budget_curves,
    comparisons_needed,
    kendall,
    select_comparisons,
    spearman,
    win_ratio,
)
from ranking._core import as_P
from ranking.budget.curves import _strategy_orders
from tests.ranking import naive

STATIC = ("random", "no-repeat", "symmetric")


def simulate(rng, n_contexts, n_items, bias=0.6, noise=1.0, grid=None):
    truth = rng.normal(size=(n_contexts, n_items))
    logit = (
        truth[:, :, None]
        - truth[:, None, :]
        + bias
        + noise * rng.normal(size=(n_contexts, n_items, n_items))
    )
    P = 1 / (1 + np.exp(-logit))
    if grid is not None:
        P = np.round(P * grid) / grid
    idx = np.arange(n_items)
    P[:, idx, idx] = np.nan
    return truth, P


def _awkward_case(seed, grid=None):
    """Padding, missing pairs, a missing reference score and a tied reference."""
    rng = np.random.default_rng(seed)
    ref, P = simulate(rng, 4, 5, grid=grid)
    P[1, 4, :] = np.nan  # context 1 has 4 candidates
    P[1, :, 4] = np.nan
    P[2][rng.random((5, 5)) < 0.3] = np.nan  # some pairs never judged
    P[2, 0, 1] = 0.6
    ref[3, 2] = np.nan
    ref[0, 1] = ref[0, 3]
    return P, ref


@pytest.mark.parametrize("soft", [False, True])
@pytest.mark.parametrize("correlation", ["spearman", "kendall"])
@pytest.mark.parametrize("unseen", ["neutral", "omit"])
@pytest.mark.parametrize("grid", [None, 4])
def test_grid_matches_naive(soft, correlation, unseen, grid):
    P, ref = _awkward_case(1 + (grid or 0), grid=grid)
    n_draws = 2
    curves = budget_curves(
        P,
        ref,
        strategies=STATIC,
        n_draws=n_draws,
        method="win_ratio",
        tau=None if soft else 0.5,
        correlation=correlation,
        unseen=unseen,
        random_state=42,
    )
    seqs = _strategy_orders(as_P(P), STATIC, n_draws, np.random.default_rng(42), 0.1)
    for si, strategy in enumerate(STATIC):
        orders, n_avail = seqs[si]
        for bi, deb in enumerate((False, True)):
            want, taus = naive.naive_budget_grid(
                P,
                ref,
                orders,
                n_avail,
                curves.budgets,
                strategy,
                deb,
                soft=soft,
                correlation=correlation,
                unseen=unseen,
            )
            if strategy == "symmetric":
                # an odd budget is refused, as by select_comparisons: no value, no threshold
                odd = curves.budgets % 2 == 1
                assert np.isnan(curves.values[si, bi][:, odd]).all()
                assert np.isnan(curves.tau[si][:, odd]).all()
                want[:, odd] = np.nan
                taus[:, odd] = np.nan
            np.testing.assert_allclose(
                curves.values[si, bi],
                want,
                atol=1e-12,
                equal_nan=True,
                err_msg=f"{strategy} debias={deb}",
            )
            got_tau = curves.tau[si]
            both = np.isfinite(got_tau) & np.isfinite(taus)
            np.testing.assert_array_equal(got_tau[both], taus[both])
            assert both.sum() > 0.8 * np.isfinite(taus).sum()


def test_end_point_equals_ranking_all_comparisons():
    rng = np.random.default_rng(3)
    truth, P = simulate(rng, 12, 6)
    n_ord = 30
    curves = budget_curves(
        P, truth, n_draws=4, budgets=[1, 2, 3, 15, 16, n_ord], tau=0.5, random_state=1
    )
    full = np.mean(spearman(win_ratio(P, tau=0.5), truth))
    t = balanced_threshold(P)
    full_debiased = np.mean(spearman(win_ratio(P, tau=t), truth))
    for s in ("random", "symmetric"):
        si = curves.strategies.index(s)
        np.testing.assert_allclose(curves.values[si, 0, :, -1], full, atol=1e-12)
        np.testing.assert_allclose(curves.values[si, 1, :, -1], full_debiased, atol=1e-12)
        np.testing.assert_array_equal(curves.tau[si, :, -1], t)
        assert curves.std[si, 0, -1] == pytest.approx(0.0, abs=1e-12)
    nr = curves.strategies.index("no-repeat")
    assert np.isnan(curves.mean[nr, :, -2:]).all()  # beyond N(N-1)/2 = 15
    assert np.isfinite(curves.mean[nr, :, :4]).all()
    sy = curves.strategies.index("symmetric")
    # an odd budget is not spendable (half a pair is not symmetric): budgets 1 and 3
    for k in (0, 2):
        assert np.isnan(curves.values[sy, :, :, k]).all()
        assert np.isnan(curves.frac_defined[sy, :, k]).all()
        assert np.isnan(curves.tau[sy, :, k]).all()
    assert np.isfinite(curves.values[sy, :, :, 1]).all()
    assert (curves.frac_defined[sy, :, 1] > 0).all()
    assert curves.mean[0, 0, -1] > curves.mean[0, 0, 0] + 0.3


def test_summary_statistics_over_draws():
    rng = np.random.default_rng(4)
    truth, P = simulate(rng, 10, 5)
    c = budget_curves(P, truth, n_draws=7, strategies=("random",), debias=(False,), random_state=0)
    v = c.values[0, 0]
    np.testing.assert_allclose(c.mean[0, 0], v.mean(axis=0))
    np.testing.assert_allclose(c.std[0, 0], v.std(axis=0, ddof=1))
    np.testing.assert_allclose(c.p10[0, 0], np.percentile(v, 10, axis=0))
    np.testing.assert_allclose(c.p90[0, 0], np.percentile(v, 90, axis=0))
    m, s, lo, hi = c.curve("random", False)
    np.testing.assert_array_equal(m, c.mean[0, 0])
    np.testing.assert_array_equal(c.budgets, np.arange(1, 21))


def test_kendall_end_point():
    rng = np.random.default_rng(6)
    truth, P = simulate(rng, 8, 6)
    c = budget_curves(
        P,
        truth,
        n_draws=2,
        correlation="kendall",
        budgets=[30],
        strategies=("random",),
        debias=(False,),
        tau=0.5,
        random_state=0,
    )
    assert c.mean[0, 0, 0] == pytest.approx(np.mean(kendall(win_ratio(P, tau=0.5), truth)))


def _assert_poe_is_the_naive_posterior(P, ref, weights=None):
    """At every budget, strategy, debias setting and draw, the PoE curve equals the naive
    posterior of the budget's comparisons (each written ``weights[ctx][pair]`` times)."""
    n_draws = 2
    c = budget_curves(
        P,
        ref,
        weights=weights,
        method="poe",
        n_draws=n_draws,
        random_state=5,
        strategies=("random", "symmetric"),
    )
    seqs = _strategy_orders(
        as_P(P), ("random", "symmetric"), n_draws, np.random.default_rng(5), 0.1
    )
    Pc = as_P(P)
    ok = (np.isfinite(Pc).any(axis=2) | np.isfinite(Pc).any(axis=1)) & np.isfinite(ref)
    for si, strategy in enumerate(("random", "symmetric")):
        orders, n_avail = seqs[si]
        for bi, deb in enumerate((False, True)):
            for d in range(n_draws):
                for k, R in enumerate(c.budgets):
                    if strategy == "symmetric" and R % 2:
                        assert np.isnan(c.values[si, bi, d, k])  # refused, as by select_comparisons
                        continue
                    rhos = []
                    for ctx in range(4):
                        codes = orders[d, ctx, : min(R, n_avail[ctx])]
                        pairs = [(int(x) // 5, int(x) % 5) for x in codes]
                        if weights is not None:
                            pairs = [p for p in pairs for _ in range(int(weights[ctx][p]))]
                        s = naive.naive_poe_scores(Pc[ctx], pairs, 0.1, deb)
                        rho = naive.naive_spearman(
                            np.where(ok[ctx], s, np.nan), np.where(ok[ctx], ref[ctx], np.nan)
                        )[0]
                        if np.isfinite(rho):
                            rhos.append(rho)
                    want = np.mean(rhos) if rhos else np.nan
                    np.testing.assert_allclose(c.values[si, bi, d, k], want, atol=1e-7)
    return c


def test_poe_method_matches_naive_posterior():
    P, ref = _awkward_case(9)
    _assert_poe_is_the_naive_posterior(P, ref)


def test_bradley_terry_method_end_point():
    from ranking import bradley_terry

    rng = np.random.default_rng(2)
    truth, P = simulate(rng, 6, 5)
    c = budget_curves(
        P,
        truth,
        method="bradley_terry",
        n_draws=2,
        budgets=[4, 10, 20],
        strategies=("random",),
        random_state=0,
    )
    full = np.mean(spearman(bradley_terry(P=P).scores, truth))
    np.testing.assert_allclose(c.values[0, 0, :, -1], full, atol=1e-9)
    assert np.isfinite(c.mean).all()


def test_adaptive_curve_beats_no_repeat():
    """At equal budget (averaged over contexts and draws) PoE max-info beats no-repeat."""
    rng = np.random.default_rng(0)
    truth, P = simulate(rng, 30, 16, bias=0.5)
    budgets = np.arange(16, 49, 8)  # 1 to 3 comparisons per candidate
    for method in ("win_ratio", "poe"):
        c = budget_curves(
            P,
            truth,
            budgets=budgets,
            n_draws=4,
            method=method,
            tau=0.5 if method == "win_ratio" else None,
            strategies=("no-repeat", "poe-max-info"),
            debias=(False,),
            random_state=0,
        )
        gain = c.mean[1, 0] - c.mean[0, 0]
        assert gain.mean() > 0.015, (method, gain)
        assert (gain > 0).all(), (method, gain)


def test_comparisons_needed():
    rng = np.random.default_rng(5)
    truth, P = simulate(rng, 20, 6, noise=0.3)
    c = budget_curves(P, truth, n_draws=5, tau=0.5, random_state=0)
    need = comparisons_needed(c, 0.6)
    for (s, deb), budget in need.items():
        si, bi = c.strategies.index(s), c.debias.index(deb)
        assert budget is not None
        k = int(np.flatnonzero(c.budgets == budget)[0])
        assert c.mean[si, bi, k] >= 0.6
        assert not (c.mean[si, bi, :k] >= 0.6).any()
    assert comparisons_needed(c, -1.0)[("random", False)] == 1
    with pytest.raises(ValueError, match="correlation"):
        comparisons_needed(c, 2.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(strategies=("all",)), "end point"),
        (dict(strategies=("sorted",)), "unknown strategy"),
        (dict(strategies=()), "empty"),
        (dict(method="elo"), "unknown method"),
        (dict(correlation="pearson"), "unknown correlation"),
        (dict(budgets=[0, 3]), "between 1"),
        (dict(budgets=[31]), "between 1"),
        (dict(budgets=[1.5]), "integers"),
        (dict(n_draws=0), "n_draws"),
        (dict(debias=("yes",)), "booleans"),
        (dict(unseen="zero"), "unseen"),
        (dict(tau=2.0), "tau"),
        (dict(method="soft_win_ratio"), "method='win_ratio' with tau=None"),
        (dict(method="bradley_terry", tau=0.5), "tau applies to method='win_ratio' only"),
        (dict(method="poe", tau=0.5), "tau applies to method='win_ratio' only"),
        (dict(bt_kwargs={"alpha": 0.1}), "does not use them"),
        (dict(method="bradley_terry", bt_kwargs={"tau": 0.5}), "may not set tau"),
        (dict(tau=[0.5, 0.5]), r"one per context, shape \(3,\)"),
        (dict(tau=[0.5, 0.5, 1.5]), r"must lie in \[0, 1\]; got tau\[2\]"),
        (dict(random_state=1.5), "random_state"),
    ],
)
def test_bad_input(kwargs, match):
    rng = np.random.default_rng(0)
    truth, P = simulate(rng, 3, 6)
    with pytest.raises(ValueError, match=match):
        budget_curves(P, truth, **kwargs)


def test_bad_arrays():
    rng = np.random.default_rng(0)
    truth, P = simulate(rng, 3, 4)
    with pytest.raises(ValueError, match="shape"):
        budget_curves(P, truth[:, :3])
    with pytest.raises(ValueError, match="no context has two"):
        budget_curves(P, np.full_like(truth, np.nan))
    with pytest.raises(ValueError, match="no comparison"):
        budget_curves(np.full((2, 3, 3), np.nan), np.ones((2, 3)))
    with pytest.raises(ValueError, match="at least 2"):
        budget_curves(np.zeros((2, 1, 1)), np.ones((2, 1)))


@pytest.mark.parametrize("n_items", [2, 3, 4, 5])
def test_budgets_refused_exactly_as_select_comparisons(n_items):
    """A budget is spendable in the curves exactly when select_comparisons accepts it (an odd
    budget for "symmetric", over N(N-1)/2 for "no-repeat"), and then the curves use exactly
    that many comparisons, with the same structure."""
    rng = np.random.default_rng(n_items)
    truth, P = simulate(rng, 3, n_items)
    n_ord = n_items * (n_items - 1)
    budgets = np.arange(1, n_ord + 1)
    c = budget_curves(P, truth, budgets=budgets, strategies=STATIC, n_draws=2, random_state=7)
    seqs = _strategy_orders(as_P(P), STATIC, 2, np.random.default_rng(7), 0.1)
    for si, strategy in enumerate(STATIC):
        orders, n_avail = seqs[si]
        for k, R in enumerate(budgets):
            try:
                chosen = select_comparisons(strategy, n_items, int(R), random_state=0)
            except ValueError:
                chosen = None
            refused = np.isnan(c.frac_defined[si, :, k])
            assert refused.all() == (chosen is None) and refused.all() == refused.any(), (
                strategy,
                R,
            )
            if chosen is None:
                assert np.isnan(c.values[si, :, :, k]).all()
                continue
            for ctx in range(3):
                codes = orders[0, ctx, : min(R, n_avail[ctx])]
                pairs = {(int(x) // n_items, int(x) % n_items) for x in codes}
                assert len(codes) == len(pairs) == len(chosen) == R
                for pairs_of in (pairs, {tuple(map(int, row)) for row in chosen}):
                    reversed_present = sum((j, i) in pairs_of for i, j in pairs_of)
                    if strategy == "symmetric":
                        assert reversed_present == R  # every pair in both orders
                    elif strategy == "no-repeat":
                        assert reversed_present == 0  # never both orders


def test_random_state_generator_or_seed():
    rng = np.random.default_rng(8)
    truth, P = simulate(rng, 4, 5)
    kw = dict(n_draws=3, budgets=[2, 5, 9], strategies=("random", "poe-max-info"))
    by_seed = budget_curves(P, truth, random_state=3, **kw)
    by_gen = budget_curves(P, truth, random_state=np.random.default_rng(3), **kw)
    np.testing.assert_array_equal(by_seed.values, by_gen.values)
    assert np.isfinite(budget_curves(P, truth, **kw).mean).any()  # default None: fresh draws


def test_soft_and_hard_win_ratio_differ_only_through_tau():
    """tau=None is the soft win-ratio (p as the first candidate's win); a float decides."""
    rng = np.random.default_rng(10)
    truth, P = simulate(rng, 6, 5)
    kw = dict(budgets=[20], strategies=("random",), debias=(False,), n_draws=2, random_state=0)
    soft = budget_curves(P, truth, **kw)
    hard = budget_curves(P, truth, tau=0.5, **kw)
    assert soft.mean[0, 0, 0] == pytest.approx(np.mean(spearman(win_ratio(P, tau=None), truth)))
    assert hard.mean[0, 0, 0] == pytest.approx(np.mean(spearman(win_ratio(P, tau=0.5), truth)))
    assert soft.mean[0, 0, 0] != hard.mean[0, 0, 0]


def test_tau_per_context():
    """One threshold per context decides that context's comparisons (debias off); the
    balanced threshold of the debiased curve is pooled and does not depend on it."""
    rng = np.random.default_rng(11)
    truth, P = simulate(rng, 5, 5, grid=10)
    taus = np.array([0.3, 0.5, 0.6, 0.7, 0.5])
    kw = dict(strategies=("random",), n_draws=2, random_state=0)
    c = budget_curves(P, truth, budgets=[5, 20], tau=taus, **kw)
    want = np.mean(spearman(win_ratio(P, tau=taus), truth))
    np.testing.assert_allclose(c.values[0, 0, :, -1], want, atol=1e-12)
    scalar = budget_curves(P, truth, budgets=[5, 20], tau=0.5, **kw)
    assert not np.allclose(c.values[0, 0], scalar.values[0, 0])
    np.testing.assert_array_equal(c.values[0, 1], scalar.values[0, 1])
    same = budget_curves(P, truth, budgets=[5, 20], tau=np.full(5, 0.5), **kw)
    np.testing.assert_array_equal(same.values, scalar.values)


@pytest.mark.parametrize("method", ["win_ratio", "bradley_terry", "poe"])
def test_strategy_without_any_usable_pair(method):
    """Only one order of every pair was judged: "symmetric" has nothing to spend in any
    context, so its curve has no value (and Bradley–Terry has nothing to fit), not an error."""
    rng = np.random.default_rng(12)
    truth, P = simulate(rng, 3, 4)
    lower = np.tril_indices(4)
    P[:, lower[0], lower[1]] = np.nan
    c = budget_curves(
        P,
        truth,
        method=method,
        strategies=("random", "symmetric"),
        budgets=[2, 4, 6],
        n_draws=2,
        random_state=0,
    )
    assert np.isfinite(c.mean[0]).all()
    assert np.isnan(c.mean[1]).all() and (c.frac_defined[1] == 0).all()


# ---------------------------------------------------------------------------------------
# Weights in every method: a weighted comparison spends one comparison of the budget and
# counts with its weight (win-ratio: tests/ranking/test_weights.py; Bradley–Terry:
# tests/ranking/test_budget_bt.py)
# ---------------------------------------------------------------------------------------


def test_poe_weighted_equals_the_posterior_of_the_replicated_comparisons():
    """An integer weight w is w identical Gaussian experts: at every budget the curve is
    the naive posterior of the budget's comparisons, each written w times."""
    P, ref = _awkward_case(10)
    rng = np.random.default_rng(4)
    G = np.where(np.isfinite(P), rng.choice([1.0, 2.0, 3.0], size=P.shape), np.nan)
    c = _assert_poe_is_the_naive_posterior(P, ref, weights=G)
    kw = dict(method="poe", n_draws=2, random_state=5, strategies=("random", "symmetric"))
    plain = budget_curves(P, ref, **kw)
    assert not np.allclose(c.values, plain.values, equal_nan=True)


@pytest.mark.parametrize("method", ["win_ratio", "poe", "bradley_terry"])
def test_weights_none_and_ones_give_the_same_curves_exactly(method):
    rng = np.random.default_rng(2)
    truth, P = simulate(rng, 3, 5)
    kw = dict(method=method, n_draws=3, random_state=1, strategies=STATIC + ("uncertainty",))
    plain = budget_curves(P, truth, **kw)
    ones = budget_curves(P, truth, weights=np.ones_like(P), **kw)
    np.testing.assert_array_equal(ones.values, plain.values)
    np.testing.assert_array_equal(ones.tau, plain.tau)


@pytest.mark.parametrize("method", ["win_ratio", "poe", "bradley_terry"])
@pytest.mark.parametrize(
    "bad, match",
    [
        # the value is written as numpy's repr (np.float64(0.0) on numpy 2)
        (0.0, r"weights must be finite numbers > 0 .*weights\[\(1, 0, 2\)\] = \S*0\.0"),
        (-1.0, r"weights\[\(1, 0, 2\)\] = \S*-1\.0"),
        (np.nan, r"weights\[\(1, 0, 2\)\] = \S*nan"),
        (np.inf, r"weights\[\(1, 0, 2\)\] = \S*inf"),
    ],
)
def test_bad_weights_refused_in_every_method(method, bad, match):
    rng = np.random.default_rng(0)
    truth, P = simulate(rng, 3, 4)
    G = np.ones_like(P)
    G[1, 0, 2] = bad
    with pytest.raises(ValueError, match=match):
        budget_curves(P, truth, method=method, weights=G, n_draws=1)
    with pytest.raises(ValueError, match=r"weights must have the shape of P \(3, 4, 4\)"):
        budget_curves(P, truth, method=method, weights=np.ones((3, 4, 5)), n_draws=1)
    with pytest.raises(ValueError, match="may not set weights"):
        budget_curves(P, truth, method="bradley_terry", bt_kwargs={"weights": G}, n_draws=1)
    # where P has no comparison (the diagonal) a weight is ignored, NaN or not
    G = np.ones_like(P)
    G[:, 0, 0] = np.nan
    budget_curves(P, truth, method=method, weights=G, n_draws=1)


def test_adaptive_max_info_counts_each_answer_with_its_weight():
    """With weights, poe-max-info's next pair is the one of largest posterior variance of
    s_i - s_j + b under the weighted posterior (precision prior + sum of w x x^T over the
    pairs asked), computed here by hand; the sequences differ from the unweighted ones."""
    from ranking.budget.selection import _adaptive_orders

    rng = np.random.default_rng(6)
    truth, P = simulate(rng, 3, 5)
    G = rng.choice([1.0, 3.0], size=P.shape)
    n, n_pres = 5, np.full(3, 20)
    weighted = _adaptive_orders(P, n_pres, 0, 0.1, True, 2, 20, np.random.default_rng(1), G)
    plain = _adaptive_orders(P, n_pres, 0, 0.1, True, 2, 20, np.random.default_rng(1))
    assert not np.array_equal(weighted, plain)
    ones = _adaptive_orders(
        P, n_pres, 0, 0.1, True, 2, 20, np.random.default_rng(1), np.ones_like(P)
    )
    np.testing.assert_array_equal(ones, plain)
    for d in range(2):
        for c in range(3):
            prec = np.eye(n + 1) * 0.1
            asked = set()
            for code in weighted[d, c]:
                i, j = divmod(int(code), n)
                cov = np.linalg.inv(prec)
                var = {}
                for a in range(n):
                    for b in range(n):
                        if a != b and (a, b) not in asked:
                            x = np.zeros(n + 1)
                            x[a], x[b], x[n] = 1.0, -1.0, 1.0
                            var[(a, b)] = x @ cov @ x
                assert var[(i, j)] >= max(var.values()) - 1e-9
                x = np.zeros(n + 1)
                x[i], x[j], x[n] = 1.0, -1.0, 1.0
                prec += G[c, i, j] * np.outer(x, x)
                asked.add((i, j))

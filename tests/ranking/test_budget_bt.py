"""Budget curves with Bradley–Terry: the compiled loop against the Python path (slow twin).

The slow twin, ``ranking.budget.bt._bt_grid_slow``, fits one batched ``bradley_terry`` per
(draw, budget) from Python; the compiled loop warm starts each fit from the previous budget.
Every curve value must agree to 1e-6 (mean and spread included), on soft and on discrete
probabilities (where mathematically tied scores meet the snapping of ties).
"""

from __future__ import annotations

import numpy as np
import pytest

from ranking import budget_curves
from ranking.bradley_terry.dense import _fit_context
from ranking.budget import curves as budget_mod
from ranking.budget.bt import _bt_grid_slow
from ranking.budget.bt_kernel import SNAP, _snap_rows
from ranking.budget.bt_newton import fit_warm, make_work
from tests.ranking.test_budget import _awkward_case, simulate

STATIC = ("random", "no-repeat", "symmetric")
FIELDS = ("values", "mean", "std", "p10", "p90", "frac_defined", "tau")


def _both(monkeypatch, P, ref, **kw):
    fast = budget_curves(P, ref, method="bradley_terry", random_state=3, **kw)
    with monkeypatch.context() as m:
        m.setattr(budget_mod, "_bt_grid", _bt_grid_slow)
        slow = budget_curves(P, ref, method="bradley_terry", random_state=3, **kw)
    return fast, slow


def _assert_same(fast, slow):
    for name in FIELDS:
        a, b = getattr(fast, name), getattr(slow, name)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=name)
        np.testing.assert_allclose(a, b, atol=1e-6, rtol=0, equal_nan=True, err_msg=name)


def _holey(seed, grid):
    """Holes, padding, NaN references, and a context with a single judged pair (so most
    budgets leave some context without a comparison or with unseen candidates)."""
    P, ref = _awkward_case(seed, grid=grid)
    rng = np.random.default_rng(seed + 100)
    more_ref, more_P = simulate(rng, 3, 5, grid=grid)
    more_P[0] = np.nan
    more_P[0, 0, 2] = 0.7 if grid is None else 1.0
    more_ref[1, 0] = np.nan
    return np.concatenate([P, more_P]), np.concatenate([ref, more_ref])


@pytest.mark.parametrize("grid", [None, 2, 10])
@pytest.mark.parametrize("correlation", ["spearman", "kendall"])
@pytest.mark.parametrize("unseen", ["neutral", "omit"])
def test_compiled_loop_matches_the_python_path(monkeypatch, grid, correlation, unseen):
    P, ref = _holey(4, grid)
    fast, slow = _both(
        monkeypatch,
        P,
        ref,
        budgets=np.arange(1, 21),
        strategies=STATIC,
        debias=(False, True),
        n_draws=4,
        correlation=correlation,
        unseen=unseen,
    )
    _assert_same(fast, slow)
    assert np.isfinite(fast.values).any()


@pytest.mark.parametrize("grid", [None, 2])
def test_larger_contexts_adaptive_strategy_and_ridge(monkeypatch, grid):
    rng = np.random.default_rng(7)
    ref, P = simulate(rng, 6, 8, grid=grid)
    P[2][rng.random((8, 8)) < 0.4] = np.nan
    for bt_kwargs in (None, {"ridge": 0.05}):
        fast, slow = _both(
            monkeypatch,
            P,
            ref,
            budgets=np.arange(1, 57),
            strategies=("random", "symmetric", "poe-max-info"),
            n_draws=3,
            bt_kwargs=bt_kwargs,
        )
        _assert_same(fast, slow)


def test_other_bt_kwargs_take_the_python_path(monkeypatch):
    """An argument the compiled loop does not take (here ``weights``-free intervals) sends
    the grid to the slow path, whose scores are the same."""
    P, ref = _holey(5, None)
    calls = []

    def spy(*args):
        calls.append(1)
        return _bt_grid_slow(*args)

    monkeypatch.setattr("ranking.budget.bt._bt_grid_slow", spy)
    kw = dict(budgets=[2, 6, 12], strategies=("random",), n_draws=2, random_state=0)
    a = budget_curves(P, ref, method="bradley_terry", bt_kwargs={"intervals": "fisher"}, **kw)
    assert calls
    b = budget_curves(P, ref, method="bradley_terry", **kw)
    np.testing.assert_allclose(a.values, b.values, atol=1e-6)


def _sequence(seed, n):
    """One context of ``n`` candidates, every ordered pair in a random order, and an
    empty warm fit's state: (rng, P, codes, W, theta, work, ok, cnt, scores)."""
    rng = np.random.default_rng(seed)
    _, P = simulate(rng, 1, n)
    codes = rng.permutation([i * n + j for i in range(n) for j in range(n) if i != j])
    return (
        rng, P, codes, np.zeros((n, n)), np.zeros(n), make_work(n), np.ones(n, bool),
        np.zeros(n), np.empty(n),
    )  # fmt: skip


def test_warm_fit_equals_the_cold_fit_along_a_sequence():
    n = 9
    _, P, codes, W, theta, work, ok, cnt, scores = _sequence(11, n)
    for code in codes:
        i, j = divmod(int(code), n)
        W[i, j] += P[0, i, j]
        W[j, i] += 1.0 - P[0, i, j]
        cnt[i] += 1
        cnt[j] += 1
        assert fit_warm(W, 0.0, 10_000, 1e-8, theta, work, False, ok, cnt, True, scores, True, True)
        cold = np.zeros(n)
        assert _fit_context(W.copy(), 0.0, 10_000, 1e-8, cold, False)[0]
        np.testing.assert_allclose(theta, cold, atol=1e-9, equal_nan=True)


def test_snapping_ties():
    S = np.array(
        [
            [0.0, 1e-12, 1.0, np.nan, 1.0 + SNAP / 2, -2.0],
            [3.0, 3.0 + 10 * SNAP, np.nan, np.nan, np.nan, np.nan],
        ]
    )
    _snap_rows(S)
    np.testing.assert_array_equal(S[0], [0.0, 0.0, 1.0, np.nan, 1.0, -2.0])
    np.testing.assert_array_equal(S[1, :2], [3.0, 3.0 + 10 * SNAP])


def test_mathematically_tied_candidates_tie():
    """Hard verdicts A > B and C > D: A and C (and B and D) have the same score, so Spearman
    with a reference that orders them A, C, B, D sees two ties (not an order left to rounding)."""
    P = np.full((1, 4, 4), np.nan)
    P[0, 0, 1] = 1.0  # A beats B
    P[0, 2, 3] = 1.0  # C beats D
    ref = np.array([[4.0, 2.0, 3.0, 1.0]])
    c = budget_curves(
        P,
        ref,
        method="bradley_terry",
        budgets=[2],
        strategies=("random",),
        n_draws=1,
        debias=(False,),
        random_state=0,
    )
    # ranks: scores (a, b, a, b) -> (3.5, 1.5, 3.5, 1.5); reference ranks (4, 2, 3, 1)
    want = np.corrcoef([3.5, 1.5, 3.5, 1.5], [4, 2, 3, 1])[0, 1]
    np.testing.assert_allclose(c.values[0, 0, 0, 0], want, atol=1e-12)


def test_rank1_update_of_the_factor_equals_a_new_factor():
    from ranking.budget.bt_linalg import _chol_rank1, _cholesky_inv

    rng = np.random.default_rng(2)
    n = 7
    M = rng.normal(size=(n, n))
    A = M @ M.T + n * np.eye(n)
    L = np.zeros((n, n))
    x = np.zeros(n)
    assert _cholesky_inv(A.copy(), L, np.ones(n), x)
    for i, j, a in [(0, 6, 0.5), (4, 2, 1.3), (5, 5 - 1, 1e-3)]:
        _chol_rank1(L, i, j, a, np.empty(n))
        v = np.zeros(n)
        v[i], v[j] = a, -a
        A += np.outer(v, v)
        b = rng.normal(size=n)
        from ranking.budget.bt_linalg import _chord_solve

        _chord_solve(L, b, x)
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("spread", [0.0, 5.0, 590.0, 700.0])
def test_gradient_and_hessian_from_one_exp_per_item(spread):
    """e_i / (e_i + e_j) with e = exp(theta - max) (and the per-pair sigmoid past
    EXP_SPREAD) against the textbook formulas, on scores spread over ``spread``."""
    from ranking.budget.bt_linalg import _eval_g, _eval_gh
    from ranking.budget.bt_newton import _structure

    rng = np.random.default_rng(int(spread))
    n = 6
    W = rng.random((n, n)) * 2
    np.fill_diagonal(W, 0.0)
    W[0, 1] = W[1, 0] = 0.0  # one pair never compared
    theta = np.linspace(-spread / 2, spread / 2, n) + rng.normal(size=n)
    work = make_work(n)
    m, _, _, _ = _structure(W, 0.1, work, True)
    g, H, g2 = np.empty(n), np.empty((n, n)), np.empty(n)
    _eval_gh(W, work.Ntot, work.pi, work.pj, m, theta, work.ridge_vec, g, H, np.empty(n))
    _eval_g(W, work.Ntot, work.pi, work.pj, m, theta, work.ridge_vec, g2, np.empty(n))
    N = W + W.T
    with np.errstate(over="ignore"):
        S = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    want_g = (W - N * S).sum(axis=1) - 0.1 * theta
    Hm = N * S * S.T
    want_H = np.diag(Hm.sum(axis=1) + 0.1) - Hm
    np.testing.assert_allclose(g, want_g, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g2, g, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(H, want_H, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("hard", [False, True])
def test_kept_structure_gradient_and_hessian_follow_each_comparison(hard, weighted):
    """After every add_comparison (soft or 0/1 outcomes, weights of 1 or not, new pairs,
    merges of components, MLE becoming finite), the kept structure equals one recomputed
    from scratch, and the kept gradient and Hessian equal a fresh evaluation at the kept
    point."""
    from ranking.budget.bt_linalg import _eval_gh
    from ranking.budget.bt_newton import _structure, add_comparison

    rng = np.random.default_rng(5)
    n = 6
    W = np.zeros((n, n))
    work = make_work(n)
    theta = np.zeros(n)
    ok = np.ones(n, bool)
    cnt = np.zeros(n)
    scores = np.empty(n)
    checked = 0
    for _ in range(40):
        i, j = rng.choice(n, 2, replace=False)
        y = float(rng.random() < 0.7) if hard else rng.random()
        w = rng.choice([0.5, 1.0, 3.0]) if weighted else 1.0
        add_comparison(W, work, i, j, y, w)
        cnt[i] += 1
        cnt[j] += 1
        fit_warm(W, 0.0, 10_000, 1e-8, theta, work, True, ok, cnt, True, scores, False, False)
        fresh = make_work(n)
        m, n_comp, _, _ = _structure(W, 0.0, fresh, True)
        assert work.meta[0] == m
        got = {(int(a), int(b)) for a, b in zip(work.pi[:m], work.pj[:m], strict=True)}
        assert got == {(int(a), int(b)) for a, b in zip(fresh.pi[:m], fresh.pj[:m], strict=True)}
        np.testing.assert_array_equal(work.comp, fresh.comp)
        np.testing.assert_array_equal(work.ridge_vec, fresh.ridge_vec)
        # the kept point: g and H there, with the next comparison's terms added
        k, l_ = rng.choice(n, 2, replace=False)
        if work.Ntot[k, l_] > 0 and work.meta[3] == 1:
            W2 = W.copy()
            kept = (work.g, work.H, work.L, work.Ntot, work.edge, work.meta)
            saved = [a.copy() for a in kept]
            add_comparison(W2, work, k, l_, 0.3, 3.0 if weighted else 1.0)
            g, H = np.empty(n), np.empty((n, n))
            _eval_gh(
                W2,
                work.Ntot,
                work.pi,
                work.pj,
                work.meta[0],
                work.theta_e,
                work.ridge_vec,
                g,
                H,
                np.empty(n),
            )
            np.testing.assert_allclose(work.g, g, atol=1e-10)
            np.testing.assert_allclose(work.H, H, atol=1e-10)
            for a, b in zip(kept, saved, strict=True):
                a[...] = b
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("rank_only", [True, False])
@pytest.mark.parametrize("grid", [None, 10])
def test_sparse_budgets_many_comparisons_between_fits(monkeypatch, rank_only, grid):
    """Budgets far apart: many comparisons (rank-1 updates of the kept factor, kept gradient
    terms, new edges) between two fits, so the first chord step starts far from the maximum;
    and every fit converged to ``tol`` (no rank certificate)."""
    monkeypatch.setattr("ranking.budget.bt.RANK_ONLY", rank_only)
    rng = np.random.default_rng(9)
    ref, P = simulate(rng, 5, 9, grid=grid)
    fast, slow = _both(
        monkeypatch,
        P,
        ref,
        budgets=[1, 3, 17, 40, 41, 72],
        strategies=("random", "no-repeat"),
        n_draws=3,
    )
    _assert_same(fast, slow)
    assert np.isfinite(fast.values[0]).all()  # random spends every budget


# ---------------------------------------------------------------------------------------
# Weights: a comparison counts w games (w y and w (1 - y) in the win weights) and spends one
# comparison of the budget
# ---------------------------------------------------------------------------------------


def _weights_for(P, seed, values=(0.5, 1.0, 3.0)):
    rng = np.random.default_rng(seed)
    return np.where(np.isfinite(P), rng.choice(values, size=P.shape), np.nan)


@pytest.mark.parametrize("grid", [None, 2])
def test_weighted_compiled_loop_matches_the_python_path(monkeypatch, grid):
    """The compiled loop (rank-1 updates of weighted comparisons, rebuilds of W under
    debias) against one ``bradley_terry(weights=)`` fit per draw and budget."""
    P, ref = _holey(6, grid)
    G = _weights_for(P, 1)
    fast, slow = _both(
        monkeypatch,
        P,
        ref,
        budgets=np.arange(1, 21),
        strategies=STATIC + ("poe-max-info",),
        debias=(False, True),
        n_draws=3,
        weights=G,
    )
    _assert_same(fast, slow)
    plain = budget_curves(
        P,
        ref,
        method="bradley_terry",
        random_state=3,
        budgets=np.arange(1, 21),
        strategies=STATIC + ("poe-max-info",),
        n_draws=3,
    )
    assert not np.allclose(fast.values, plain.values, equal_nan=True)


def test_weights_none_equal_weights_of_one_exactly():
    P, ref = _holey(7, None)
    kw = dict(method="bradley_terry", budgets=np.arange(1, 21), n_draws=3, random_state=0)
    plain = budget_curves(P, ref, **kw)
    ones = budget_curves(P, ref, weights=np.where(np.isfinite(P), 1.0, np.nan), **kw)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(ones, name), getattr(plain, name), err_msg=name)


def test_warm_weighted_fit_equals_the_cold_fit_of_the_replicated_comparisons():
    """Along a sequence, each comparison added once with an integer weight w: the warm
    fit after every comparison equals the cold fit of the same comparisons each added w
    times (the rows written w times)."""
    from ranking.budget.bt_newton import add_comparison

    n = 7
    rng, P, codes, W, theta, work, ok, cnt, scores = _sequence(12, n)
    w_of = rng.choice([1, 2, 3], size=(n, n))
    W_rep = np.zeros((n, n))
    for code in codes:
        i, j = divmod(int(code), n)
        y = P[0, i, j]
        add_comparison(W, work, i, j, y, float(w_of[i, j]))
        for _ in range(w_of[i, j]):
            W_rep[i, j] += y
            W_rep[j, i] += 1.0 - y
        cnt[i] += 1
        cnt[j] += 1
        assert fit_warm(
            W, 0.0, 10_000, 1e-8, theta, work, False, ok, cnt, True, scores, False, False
        )
        cold = np.zeros(n)
        assert _fit_context(W_rep.copy(), 0.0, 10_000, 1e-8, cold, False)[0]
        np.testing.assert_allclose(theta, cold, atol=1e-8, equal_nan=True)
    assert w_of[~np.eye(n, dtype=bool)].min() == 1 and w_of.max() == 3


def test_weighted_curve_at_the_whole_budget_is_bradley_terry_on_the_replicated_rows():
    """Integer weights: at the whole budget (every comparison seen) every draw's value is
    the Spearman of ``bradley_terry`` fitted on the flat rows, each written w times."""
    from ranking import bradley_terry, spearman

    rng = np.random.default_rng(8)
    ref, P = simulate(rng, 5, 6)
    G = _weights_for(P, 2, values=(1.0, 3.0))
    full = 6 * 5
    got = budget_curves(
        P, ref, method="bradley_terry", weights=G, budgets=[full // 3, full], n_draws=3,
        strategies=("random",), debias=(False,), random_state=0,
    )  # fmt: skip
    plain = budget_curves(
        P, ref, method="bradley_terry", budgets=[full // 3, full], n_draws=3,
        strategies=("random",), debias=(False,), random_state=0,
    )  # fmt: skip
    want = []
    for c in range(P.shape[0]):
        first, second = np.nonzero(np.isfinite(P[c]))
        reps = G[c, first, second].astype(np.int64)
        f2, s2 = np.repeat(first, reps), np.repeat(second, reps)
        y2 = np.repeat(P[c, first, second], reps)
        s = bradley_terry(first=f2, second=s2, outcome=y2, n_items=6).scores
        want.append(spearman(s[None], ref[c][None])[0])
    np.testing.assert_allclose(got.values[0, 0, :, -1], np.mean(want), atol=1e-12)
    assert got.mean[0, 0, -1] != pytest.approx(plain.mean[0, 0, -1])

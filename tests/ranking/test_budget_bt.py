"""Budget curves with Bradley–Terry: the compiled loop against the Python path (slow twin).

The slow twin, ``ranking._budget_bt._bt_grid_slow``, fits one batched ``bradley_terry`` per
(draw, budget) from Python; the compiled loop warm starts each fit from the previous budget.
Every curve value must agree to 1e-6 (mean and spread included), on soft and on discrete
probabilities (where mathematically tied scores meet the snapping of ties).
"""

from __future__ import annotations

import numpy as np
import pytest

import ranking.budget as budget_mod
from ranking._bt_dense import _fit_context
from ranking._budget_bt import _bt_grid_slow
from ranking._budget_bt_kernel import SNAP, _snap_rows
from ranking._budget_bt_newton import fit_warm, make_work
from ranking.budget import budget_curves
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

    monkeypatch.setattr("ranking._budget_bt._bt_grid_slow", spy)
    kw = dict(budgets=[2, 6, 12], strategies=("random",), n_draws=2, random_state=0)
    a = budget_curves(P, ref, method="bradley_terry", bt_kwargs={"intervals": "fisher"}, **kw)
    assert calls
    b = budget_curves(P, ref, method="bradley_terry", **kw)
    np.testing.assert_allclose(a.values, b.values, atol=1e-6)


def test_warm_fit_equals_the_cold_fit_along_a_sequence():
    rng = np.random.default_rng(11)
    _, P = simulate(rng, 1, 9)
    n = 9
    codes = rng.permutation([i * n + j for i in range(n) for j in range(n) if i != j])
    W = np.zeros((n, n))
    theta = np.zeros(n)
    work = make_work(n)
    ok = np.ones(n, bool)
    cnt = np.zeros(n)
    scores = np.empty(n)
    for code in codes:
        i, j = divmod(int(code), n)
        W[i, j] += P[0, i, j]
        W[j, i] += 1.0 - P[0, i, j]
        cnt[i] += 1
        cnt[j] += 1
        assert fit_warm(W, 0.0, 10_000, 1e-8, theta, work, False, ok, cnt, True, scores, True)
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

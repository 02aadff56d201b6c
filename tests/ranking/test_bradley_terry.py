"""bradley_terry against closed forms, its scipy twin, choix, and bad input."""

from __future__ import annotations

import choix
import numpy as np
import pytest

from ranking import bradley_terry, decide
from ranking.bradley_terry import MAX_FISHER_ITEMS, RIDGE_FALLBACK
from tests.ranking import naive


def _random_P(rng, n_contexts, n_items, p_missing=0.2):
    P = rng.random((n_contexts, n_items, n_items)) * 0.9 + 0.05
    P[rng.random(P.shape) < p_missing] = np.nan
    idx = np.arange(n_items)
    P[:, idx, idx] = np.nan
    # a chain of comparisons keeps every context connected
    P[:, idx[:-1], idx[1:]] = rng.random((n_contexts, n_items - 1)) * 0.9 + 0.05
    return P


def _connected_flat(rng, n_items, n_comp, hard=True):
    """Comparisons from a BT model on a connected random graph (a random path + random pairs)."""
    perm = rng.permutation(n_items)
    first = np.concatenate([perm[:-1], rng.integers(0, n_items, n_comp - n_items + 1)])
    second = np.concatenate([perm[1:], rng.integers(0, n_items, n_comp - n_items + 1)])
    same = first == second
    second[same] = (second[same] + 1) % n_items
    theta = rng.normal(size=n_items)
    p = 1.0 / (1.0 + np.exp(-(theta[first] - theta[second])))
    outcome = (rng.random(n_comp) < p).astype(float) if hard else p
    return first, second, outcome


# ---------------------------------------------------------------------------------------------
# hand-made cases
# ---------------------------------------------------------------------------------------------


def test_three_cycle_gives_equal_scores():
    P = np.full((3, 3), np.nan)
    P[0, 1] = P[1, 2] = P[2, 0] = 1.0
    for tau in (None, 0.5):
        res = bradley_terry(P, tau=tau)
        np.testing.assert_allclose(res.scores, [[0.0, 0.0, 0.0]], atol=1e-12)
        assert res.converged.all() and res.finite_mle.all()


def test_two_items_closed_form_log_odds():
    # 3 wins out of 4 for item 0: theta_0 - theta_1 = log 3, centred -> +-log(3)/2
    res = bradley_terry(first=[0, 0, 1, 1], second=[1, 1, 0, 0], outcome=[1, 1, 0, 1], n_items=2)
    np.testing.assert_allclose(res.scores, [np.log(3) / 2, -np.log(3) / 2], atol=1e-12)
    # soft outcomes: one comparison at p = 0.8 is 0.8 of a win
    res = bradley_terry(first=[0, 1], second=[1, 0], outcome=[0.8, 0.2], n_items=2)
    np.testing.assert_allclose(res.scores, [np.log(4) / 2, -np.log(4) / 2], atol=1e-12)


def test_position_is_ignored_and_ties_count_half():
    P = np.array([[np.nan, 0.5], [0.5, np.nan]])
    np.testing.assert_allclose(bradley_terry(P, tau=0.5).scores, [[0.0, 0.0]], atol=1e-12)
    # hard decisions: 0.7 > tau=0.6 is a win, 0.6 == tau is a tie -> 1.5 wins of 2 = log 3
    P = np.array([[np.nan, 0.7], [0.65, np.nan]])
    res = bradley_terry(P, tau=0.6)
    np.testing.assert_allclose(res.scores, [[0.0, 0.0]], atol=1e-12)  # both first: 1 win each
    P = np.array([[np.nan, 0.7], [0.6, np.nan]])
    res = bradley_terry(P, tau=0.6)
    np.testing.assert_allclose(res.scores[0, 0] - res.scores[0, 1], np.log(3), atol=1e-12)


def test_clear_order_gives_same_order_for_bt_ml_and_win_ratio():
    from ranking import ml_ranking

    true = np.array([3.0, 1.0, 4.0, 0.0, 2.0])
    P = 1.0 / (1.0 + np.exp(-(true[:, None] - true[None, :])))
    expected = np.argsort(-true)
    bt = bradley_terry(P).scores[0]
    np.testing.assert_array_equal(np.argsort(-bt), expected)
    np.testing.assert_allclose(bt, true - true.mean(), atol=1e-7)  # soft P from BT recovers it
    np.testing.assert_array_equal(ml_ranking(P).order[0], expected)
    np.testing.assert_array_equal(ml_ranking(P, tau=0.5).order[0], expected)
    try:
        from ranking import win_ratio
    except ImportError:  # written by another helper; the BT/ML agreement above still runs
        return
    np.testing.assert_array_equal(np.argsort(-win_ratio(P, tau=0.5)[0]), expected)


# ---------------------------------------------------------------------------------------------
# against the slow twin and choix
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("soft", [True, False])
def test_P_matches_scipy_twin_on_random_contexts(soft):
    rng = np.random.default_rng(3)
    P = _random_P(rng, 6, 7)
    res = bradley_terry(P, tau=None if soft else 0.5)
    for c in range(P.shape[0]):
        f, s, y = naive.naive_bt_flat_from_P(P[c], soft=soft)
        # hard decisions on random P can leave an undefeated item: then the documented
        # fallback prior applies to the (single, chained) component
        ridge = 0.0 if res.finite_mle[c] else RIDGE_FALLBACK
        expected = naive.naive_bt_fit(f, s, y, P.shape[1], alpha=ridge)
        np.testing.assert_allclose(res.scores[c], expected - expected.mean(), atol=1e-6)
    assert res.converged.all()
    assert (res.max_change < 1e-8).all()


def test_flat_with_weights_and_ridge_matches_scipy_twin():
    rng = np.random.default_rng(4)
    f, s, y = _connected_flat(rng, 12, 80, hard=False)
    w = rng.random(80) * 2
    for ridge in (0.0, 0.3):
        res = bradley_terry(first=f, second=s, outcome=y, n_items=12, weights=w, ridge=ridge)
        expected = naive.naive_bt_fit(f, s, y, 12, weights=w, alpha=ridge)
        np.testing.assert_allclose(res.scores, expected, atol=1e-7)
        assert res.converged


def test_P_and_flat_inputs_agree():
    rng = np.random.default_rng(5)
    P = _random_P(rng, 1, 9)
    f, s, y = naive.naive_bt_flat_from_P(P[0])
    a = bradley_terry(P).scores[0]
    b = bradley_terry(first=f, second=s, outcome=y, n_items=9).scores
    np.testing.assert_allclose(a, b, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_agrees_with_choix_fully_converged(seed):
    rng = np.random.default_rng(seed)
    n_items, n_comp = 30, 400
    f, s, y = _connected_flat(rng, n_items, n_comp)
    data = [(a, b) if o == 1 else (b, a) for a, b, o in zip(f, s, y, strict=True)]
    res = bradley_terry(first=f, second=s, outcome=y, n_items=n_items)
    assert res.finite_mle  # these seeds give a finite MLE, which choix's ILSR needs
    ref = choix.ilsr_pairwise(n_items, data, tol=1e-13, max_iter=10_000)
    ref -= ref.mean()
    np.testing.assert_allclose(res.scores, ref, atol=1e-6)
    # choix's penalty is alpha * ||theta||^2, ours alpha / 2 * ||theta||^2
    ridge = bradley_terry(first=f, second=s, outcome=y, n_items=n_items, ridge=0.1)
    ref2 = choix.opt_pairwise(n_items, data, alpha=0.05, method="Newton-CG", tol=1e-12)
    np.testing.assert_allclose(ridge.scores, ref2, atol=1e-6)
    assert abs(ridge.scores.mean()) < 1e-12


def test_converged_result_matches_a_much_longer_run():
    rng = np.random.default_rng(6)
    f, s, y = _connected_flat(rng, 300, 5000)
    a = bradley_terry(first=f, second=s, outcome=y, n_items=300).scores
    b = bradley_terry(first=f, second=s, outcome=y, n_items=300, tol=1e-15, max_iter=200)
    np.testing.assert_allclose(a, b.scores, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# MLE at infinity, several components, uncompared items
# ---------------------------------------------------------------------------------------------


def test_disconnected_components_are_centred_separately():
    P = np.full((4, 4), np.nan)
    P[0, 1], P[1, 0] = 0.8, 0.4  # component {0, 1}
    P[2, 3], P[3, 2] = 0.3, 0.3  # component {2, 3}
    res = bradley_terry(P)
    assert res.n_components[0] == 2
    np.testing.assert_array_equal(res.component[0], [0, 0, 1, 1])
    sc = res.scores[0]
    assert abs(sc[0] + sc[1]) < 1e-12 and abs(sc[2] + sc[3]) < 1e-12
    np.testing.assert_allclose(sc[0] - sc[1], np.log(1.4 / 0.6), atol=1e-10)
    np.testing.assert_allclose(sc[2] - sc[3], 0.0, atol=1e-10)  # 0.3 + (1 - 0.3) of 2 wins
    assert any("component" in note for note in res.notes)


def test_components_match_twin_on_sparse_random_graphs():
    rng = np.random.default_rng(10)
    for _ in range(5):
        n = 40
        first = rng.integers(0, n, 30)
        second = (first + rng.integers(1, n, 30)) % n
        outcome = rng.random(30) * 0.8 + 0.1  # soft, strictly inside (0, 1): finite MLE
        res = bradley_terry(first=first, second=second, outcome=outcome, n_items=n)
        expected = naive.naive_components(first, second, n)
        np.testing.assert_array_equal(res.component, expected)
        assert res.n_components == expected.max() + 1
        for c in range(res.n_components):
            members = np.flatnonzero(expected == c)
            keep = np.isin(first, members)
            remap = {item: k for k, item in enumerate(members)}
            theta = naive.naive_bt_fit(
                [remap[i] for i in first[keep]],
                [remap[j] for j in second[keep]],
                outcome[keep],
                members.size,
            )
            np.testing.assert_allclose(res.scores[members], theta, atol=1e-7)
        assert np.isnan(res.scores[expected == -1]).all()


def test_undefeated_item_uses_documented_fallback_and_is_flagged():
    # item 0 beats everyone; items 1..3 form a cycle: no finite MLE in that component
    f = [0, 0, 0, 1, 2, 3, 1]
    s = [1, 2, 3, 2, 3, 1, 3]
    y = [1, 1, 1, 1, 1, 1, 0]
    # a separate, healthy component {4, 5} keeps its exact MLE
    f += [4, 4, 5]
    s += [5, 5, 4]
    y += [1, 0, 0]
    res = bradley_terry(first=f, second=s, outcome=y, n_items=6)
    assert res.finite_mle is False and res.converged
    np.testing.assert_array_equal(res.ridge, [RIDGE_FALLBACK] * 4 + [0, 0])
    assert np.isfinite(res.scores).all()
    assert res.scores[0] > res.scores[1:4].max() + 4  # far ahead, yet finite
    expected = naive.naive_bt_fit(f[:7], s[:7], y[:7], 4, alpha=RIDGE_FALLBACK)
    np.testing.assert_allclose(res.scores[:4], expected - expected.mean(), atol=1e-7)
    np.testing.assert_allclose(res.scores[4] - res.scores[5], np.log(2), atol=1e-10)
    assert any("no finite MLE" in note for note in res.notes)


def test_item_that_never_wins_in_P_context_is_flagged_per_context():
    P = np.full((2, 3, 3), np.nan)
    P[0, 0, 1] = P[0, 1, 2] = P[0, 2, 0] = 0.9  # a healthy cycle
    P[1, 0, 1] = P[1, 0, 2] = 1.0  # item 0 beats both, hard
    P[1, 1, 2] = 0.5
    res = bradley_terry(P, tau=0.5)
    np.testing.assert_array_equal(res.finite_mle, [True, False])
    assert np.isfinite(res.scores).all()
    assert res.scores[1, 0] > res.scores[1, 1] + 4


def test_uncompared_items_are_nan_not_made_up():
    P = np.full((1, 4, 4), np.nan)
    P[0, 0, 1], P[0, 1, 0] = 0.7, 0.6
    res = bradley_terry(P, intervals="fisher")
    assert np.isnan(res.scores[0, 2:]).all() and np.isfinite(res.scores[0, :2]).all()
    np.testing.assert_array_equal(res.component[0], [0, 0, -1, -1])
    assert np.isnan(res.lower[0, 2:]).all()
    flat = bradley_terry(first=[0, 1], second=[1, 0], outcome=[0.7, 0.6], n_items=4)
    assert np.isnan(flat.scores[2:]).all()


def test_ridge_shrinks_and_keeps_mean_zero():
    P = np.array([[np.nan, 1.0], [0.0, np.nan]])
    res = bradley_terry(P, ridge=1.0)
    assert not res.finite_mle[0]  # reported, but ridge > 0 makes the MAP finite anyway
    d = res.scores[0, 0] - res.scores[0, 1]
    # MAP: 2 * (1 - s(d)) = ridge * d / 2  with theta = +-d/2
    np.testing.assert_allclose(2.0 * (1.0 - 1.0 / (1.0 + np.exp(-d))), d / 2.0, atol=1e-10)
    assert abs(res.scores[0].sum()) < 1e-12


# ---------------------------------------------------------------------------------------------
# intervals
# ---------------------------------------------------------------------------------------------


def test_fisher_intervals_match_pinv_twin():
    rng = np.random.default_rng(8)
    f, s, y = _connected_flat(rng, 10, 120)
    res = bradley_terry(
        first=f, second=s, outcome=y, n_items=10, intervals="fisher", confidence=0.9
    )
    se = naive.naive_bt_fisher_se(res.scores, f, s, 10)
    z = 1.6448536269514722
    np.testing.assert_allclose(res.upper - res.scores, z * se, rtol=1e-7)
    np.testing.assert_allclose(res.scores - res.lower, z * se, rtol=1e-7)
    f2, s2, y2 = naive.naive_bt_flat_from_P(_random_P(rng, 1, 6)[0])
    resP = bradley_terry(first=f2, second=s2, outcome=y2, n_items=6, intervals="fisher")
    P = np.full((6, 6), np.nan)
    P[f2, s2] = y2
    resD = bradley_terry(P, intervals="fisher")
    np.testing.assert_allclose(resD.upper[0], resP.upper, rtol=1e-8)
    se2 = naive.naive_bt_fisher_se(resP.scores, f2, s2, 6)
    np.testing.assert_allclose(resP.upper - resP.scores, 1.959963984540054 * se2, rtol=1e-7)


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(9)
    P = _random_P(rng, 3, 5, p_missing=0.0)
    a = bradley_terry(P, intervals="bootstrap", n_boot=60, random_state=1)
    b = bradley_terry(P, intervals="bootstrap", n_boot=60, random_state=1)
    c = bradley_terry(P, intervals="bootstrap", n_boot=60, random_state=2)
    np.testing.assert_array_equal(a.lower, b.lower)
    assert not np.array_equal(a.lower, c.lower)
    assert (a.lower <= a.upper).all()
    assert ((a.lower <= a.scores + 1e-9) & (a.scores - 1e-9 <= a.upper)).mean() > 0.9
    f, s, y = _connected_flat(rng, 8, 300)
    fl = bradley_terry(
        first=f, second=s, outcome=y, n_items=8, intervals="bootstrap", n_boot=50, random_state=0
    )
    assert (fl.lower < fl.scores).all() and (fl.scores < fl.upper).all()
    # bootstrap and Fisher widths agree roughly on a well-determined problem
    fi = bradley_terry(first=f, second=s, outcome=y, n_items=8, intervals="fisher")
    ratio = (fl.upper - fl.lower) / (fi.upper - fi.lower)
    assert 0.5 < np.median(ratio) < 1.5


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"P": np.zeros((2, 3))}, "shape"),
        ({"P": np.zeros((1, 2, 3))}, "shape"),
        ({"P": np.full((2, 2), 1.5)}, r"\[0, 1\]"),
        ({"P": np.full((1, 3, 3), np.nan)}, "no comparison"),  # nothing in any context
        ({"P": np.zeros((1, 1, 1))}, "N = 1"),
        ({"P": np.zeros((0, 3, 3))}, "no contexts"),
        ({"first": [], "second": [], "outcome": []}, "empty"),
        ({"first": [0, 1], "second": [1], "outcome": [1, 0]}, "same length"),
        ({"first": [0, 5], "second": [1, 0], "outcome": [1, 0], "n_items": 3}, "out of range"),
        ({"first": [0, -1], "second": [1, 0], "outcome": [1, 0]}, "out of range"),
        ({"first": [0, 1], "second": [0, 0], "outcome": [1, 0]}, "itself"),
        ({"first": [0, 1], "second": [1, 0], "outcome": [1, 2]}, r"\[0, 1\]"),
        ({"first": [0, 1], "second": [1, 0], "outcome": [1, np.nan]}, "finite"),
        ({"first": [0.0, 1.0], "second": [1, 0], "outcome": [1, 0]}, "integer"),
        ({"first": [0, 1], "second": [1, 0], "outcome": [1, 0], "weights": [1]}, "weights"),
        ({"first": [0, 1], "second": [1, 0], "outcome": [1, 0], "weights": [1, -1]}, "weights"),
        ({"first": [0, 1], "second": [1, 0], "outcome": [1, 0], "n_items": 1}, "n_items"),
        ({}, "no comparisons"),
        ({"P": np.full((2, 2), 0.5), "first": [0], "second": [1], "outcome": [1]}, "either"),
        ({"P": np.full((2, 2), 0.5), "intervals": "wald"}, "intervals"),
        ({"P": np.full((2, 2), 0.5), "tau": 1.5}, "tau"),
        ({"P": np.full((2, 2), 0.5), "tau": [0.5, 0.5]}, "one per context"),
        ({"first": [0, 1], "second": [1, 0], "outcome": [1, 0], "tau": [0.5]}, "scalar"),
        ({"P": np.full((2, 2), 0.5), "ridge": -1.0}, "ridge"),
        ({"P": np.full((2, 2), 0.5), "confidence": 1.0, "intervals": "fisher"}, "confidence"),
        ({"P": np.full((2, 2), 0.5), "random_state": 1.5}, "random_state"),
        ({"P": np.full((2, 2), 0.5), "weights": np.ones((3, 3))}, "weights"),
    ],
)
def test_bad_input_raises(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bradley_terry(**kwargs)


def test_fisher_refuses_huge_flat_sets():
    n = MAX_FISHER_ITEMS + 1
    f = np.arange(n - 1)
    with pytest.raises(ValueError, match="bootstrap"):
        bradley_terry(
            first=f, second=f + 1, outcome=np.full(n - 1, 0.5), n_items=n, intervals="fisher"
        )


def test_flat_hard_decisions_equal_fit_on_decided_outcomes():
    rng = np.random.default_rng(12)
    f, s, p = _connected_flat(rng, 15, 200, hard=False)
    p[:5] = 0.6  # exact ties at tau = 0.6
    hard = bradley_terry(first=f, second=s, outcome=p, n_items=15, tau=0.6)
    decided = np.where(p > 0.6, 1.0, np.where(p < 0.6, 0.0, 0.5))
    direct = bradley_terry(first=f, second=s, outcome=decided, n_items=15)
    np.testing.assert_array_equal(hard.scores, direct.scores)
    assert hard.finite_mle == direct.finite_mle
    expected = naive.naive_bt_fit(
        f, s, decided, 15, alpha=0.0 if direct.finite_mle else RIDGE_FALLBACK
    )
    np.testing.assert_allclose(direct.scores, expected - expected.mean(), atol=1e-6)


@pytest.mark.parametrize("intervals", [None, "fisher", "bootstrap"])
def test_context_without_any_comparison_gets_nan_scores_and_a_note(intervals):
    rng = np.random.default_rng(43)
    P = _random_P(rng, 3, 5)
    P[1] = np.nan  # every verdict of this context unparsed
    res = bradley_terry(P, intervals=intervals, n_boot=20, random_state=0)
    assert np.isnan(res.scores[1]).all() and (res.component[1] == -1).all()
    assert res.n_components[1] == 0 and res.converged.all()
    alone = bradley_terry(P[[0, 2]], intervals=intervals, n_boot=20, random_state=0)
    np.testing.assert_allclose(res.scores[[0, 2]], alone.scores, atol=1e-10)
    if intervals == "fisher":
        assert np.isnan(res.lower[1]).all() and np.isfinite(res.lower[[0, 2]]).all()
    assert any("context(s) [1]: no comparison at all" in n for n in res.notes)


def test_one_line_search_damps_both_solvers_alike():
    """The shared line search halves an overshooting step until Armijo holds, for both
    problem kinds: the dense problem (no early test) and the flat one (gradient tests that
    fail while the step overshoots) take the same step on the same comparisons."""
    from ranking.bradley_terry.dense import DenseProblem, _dense_F
    from ranking.bradley_terry.flat import FlatProblem, _flat_eval
    from ranking.bradley_terry.newton import _ARMIJO, line_search

    # item 0 beats item 1 three times out of four: optimum theta_0 - theta_1 = log 3
    W = np.array([[0.0, 3.0], [1.0, 0.0]])
    ridge = np.zeros(2)
    theta = np.zeros(2)
    step = np.array([20.0, -20.0])  # far past the optimum
    g = np.array([1.0, -1.0])  # gradient at 0: wins minus expected wins
    slope = float(g @ step)
    dense = DenseProblem(W, W + W.T, ridge)
    F0 = _dense_F(W, W + W.T, theta, ridge)
    trial_d = np.empty(2)
    t_dense = line_search(dense, theta, step, slope, F0, True, trial_d)

    ei, ej = np.array([0], np.int32), np.array([1], np.int32)
    wy, w = np.array([3.0]), np.array([4.0])
    h, g_flat, D, pi = np.empty(1), np.empty(2), np.empty(2), np.empty(2)
    _flat_eval(ei, ej, wy, w, theta, ridge, h, g_flat, D, pi)
    np.testing.assert_allclose(g_flat, g)
    flat = FlatProblem(ei, ej, wy, w, ridge, g_flat, np.empty(1), np.empty(2), np.empty(2), pi)
    trial_f = np.empty(2)
    t_flat = line_search(flat, theta, step, slope, 0.0, False, trial_f)

    assert t_dense == t_flat < 1.0
    np.testing.assert_array_equal(trial_d, trial_f)
    np.testing.assert_array_equal(trial_d, theta + t_dense * step)
    # Armijo holds at the step taken and fails at twice that step
    F = lambda x: _dense_F(W, W + W.T, x, ridge)  # noqa: E731
    assert F(trial_d) >= F0 + _ARMIJO * t_dense * slope
    assert F(theta + 2 * t_dense * step) < F0 + _ARMIJO * 2 * t_dense * slope


def test_per_context_tau_equals_one_fit_per_context_at_its_tau():
    rng = np.random.default_rng(13)
    P = np.round(_random_P(rng, 4, 6) * 8) / 8  # values on a grid: ties with tau happen
    taus = np.array([0.5, 0.375, 0.625, 0.5])
    res = bradley_terry(P, tau=taus)
    for c in range(4):
        alone = bradley_terry(P[c], tau=taus[c])
        np.testing.assert_array_equal(res.scores[c], alone.scores[0])
        np.testing.assert_array_equal(res.ridge[c], alone.ridge[0])
    # the same as the decisions fitted as soft outcomes
    np.testing.assert_array_equal(res.scores, bradley_terry(decide(P, taus)).scores)
    assert not np.array_equal(res.scores, bradley_terry(P, tau=0.5).scores)


def test_intervals_carry_the_confidence_in_their_description():
    P = _random_P(np.random.default_rng(14), 2, 4)
    res = bradley_terry(P, intervals="fisher", confidence=0.8)
    assert "confidence 0.8" in res.method
    wide = bradley_terry(P, intervals="fisher", confidence=0.99)
    assert ((wide.upper - wide.lower) > (res.upper - res.lower)).all()

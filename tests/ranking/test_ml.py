"""ml_ranking against brute force over permutations, hand-made cases and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ranking import ml_ranking, spearman
from ranking.comparative.max_likelihood import MAX_EXACT_N
from tests.ranking import naive


def _random_P(rng, n_items, p_missing=0.3, grid=None):
    P = rng.random((n_items, n_items))
    if grid is not None:  # coarse values: exact ties in the hard variant
        P = np.round(P * grid) / grid
    P[rng.random(P.shape) < p_missing] = np.nan
    np.fill_diagonal(P, np.nan)
    P[0, 1] = 0.6  # at least one comparison
    return P


def _against_brute_force(P, hard):
    """ml_ranking of ``P`` (``hard``: decisions at tau 0.5) with the brute force's best value and
    its equally good orders; the order ml_ranking returns must be one of them."""
    res = ml_ranking(P, tau=0.5 if hard else None)
    best, tied = naive.naive_ml_brute(P, hard=hard)
    order = tuple(int(i) for i in res.order[0] if i >= 0)
    assert order in tied
    return res, order, best, tied


@pytest.mark.parametrize("hard", [False, True])
def test_exact_dp_equals_brute_force_up_to_8_items(hard):
    rng = np.random.default_rng(11 + hard)
    n_checked = 0
    for trial in range(30):
        n = 8 if trial < 2 else int(rng.integers(2, 8))
        P = _random_P(rng, n, grid=4 if hard else None)
        res, order, best, tied = _against_brute_force(P, hard)
        value = naive.naive_ml_terms(P, hard=hard)(order)
        np.testing.assert_allclose(value, best, rtol=1e-10, atol=1e-10)
        if len(tied) == 1:
            n_checked += 1
        reported = res.agreement[0] if hard else res.log_likelihood[0]
        np.testing.assert_allclose(reported, value, rtol=1e-10, atol=1e-10)
        assert res.method == ("exact-dp",)
    assert n_checked >= 3  # some cases with a unique optimum (hard grids tie often)


def test_batched_contexts_with_padding_and_missing_items():
    rng = np.random.default_rng(13)
    P = np.full((3, 7, 7), np.nan)
    P[0] = _random_P(rng, 7)
    P[1, :4, :4] = _random_P(rng, 4)  # a context with 4 candidates, padded to 7
    P[2] = _random_P(rng, 7, p_missing=0.0)
    P[2, 5, :] = np.nan
    P[2, :, 5] = np.nan  # item 5 never compared in context 2
    res = ml_ranking(P)
    np.testing.assert_array_equal(res.n_present, [7, 4, 6])
    for c in range(3):
        best, tied = naive.naive_ml_brute(P[c])
        order = tuple(int(i) for i in res.order[c] if i >= 0)
        assert order in tied
        np.testing.assert_allclose(res.log_likelihood[c], best, rtol=1e-10)
    np.testing.assert_array_equal(res.order[1, 4:], [-1, -1, -1])
    assert np.isnan(res.ranks[1, 4:]).all() and np.isnan(res.ranks[2, 5])
    np.testing.assert_array_equal(np.sort(res.ranks[1, :4]), [1, 2, 3, 4])
    assert res.scores[1, res.order[1, 0]] == 3 and res.scores[1, res.order[1, 3]] == 0


def test_ties_are_broken_deterministically():
    P = np.full((5, 5), 0.5)
    np.testing.assert_array_equal(ml_ranking(P).order[0], [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(ml_ranking(P, tau=0.5).order[0], [0, 1, 2, 3, 4])
    # 3-cycle: the three rotations tie; the same one comes back every time
    P = np.full((3, 3), np.nan)
    P[0, 1] = P[1, 2] = P[2, 0] = 0.9
    first = ml_ranking(P).order[0].tolist()
    assert first in ([0, 1, 2], [1, 2, 0], [2, 0, 1])
    for _ in range(3):
        assert ml_ranking(P).order[0].tolist() == first


def test_clear_order_and_hard_threshold():
    true = np.array([0.5, 2.0, -1.0, 1.0])
    P = 1.0 / (1.0 + np.exp(-(true[:, None] - true[None, :])))
    res = ml_ranking(P)
    np.testing.assert_array_equal(res.order[0], [1, 3, 0, 2])
    np.testing.assert_array_equal(res.ranks[0], [3, 1, 4, 2])
    assert res.agreement[0] == 12  # every one of the 12 ordered comparisons agrees
    # a threshold above every p makes every first-shown candidate lose: all orders tie at 6
    res = ml_ranking(P, tau=0.99)
    assert res.agreement[0] == 6


def _insertion_optimal(P, order, n_items) -> float:
    """Assert that moving any one item of ``order`` (all ``n_items`` of P) to another place does
    not raise the ML objective; return the order's objective."""
    order = [int(i) for i in order]
    assert len(order) == n_items
    value = naive.naive_ml_terms(P)
    v0 = value(order)
    for a in range(n_items):
        for b in range(n_items):
            moved = order.copy()
            moved.insert(b, moved.pop(a))
            assert value(moved) <= v0 + 1e-9
    return v0


def test_heuristic_above_exact_max_n_is_a_local_optimum():
    rng = np.random.default_rng(17)
    P = _random_P(rng, 9, p_missing=0.1)
    res = ml_ranking(P, exact_max_n=4)
    assert res.method == ("heuristic",)
    v0 = _insertion_optimal(P, res.order[0], 9)  # no single-item move improves it
    exact = ml_ranking(P)
    assert exact.method == ("exact-dp",)
    np.testing.assert_allclose(res.log_likelihood[0], v0, rtol=1e-10)
    # with 9 items one block of the heuristic's exact re-ordering step covers the whole order
    np.testing.assert_allclose(res.log_likelihood[0], exact.log_likelihood[0], rtol=1e-12)


def test_heuristic_on_larger_context_is_insertion_optimal_and_below_exact():
    rng = np.random.default_rng(18)
    theta = rng.normal(size=18)
    logits = theta[:, None] - theta[None, :] + 1.5 * rng.normal(size=(18, 18))
    P = 1.0 / (1.0 + np.exp(-logits))
    heur = ml_ranking(P, exact_max_n=10)
    exact = ml_ranking(P)
    assert heur.method == ("heuristic",) and exact.method == ("exact-dp",)
    assert heur.log_likelihood[0] <= exact.log_likelihood[0] + 1e-9
    _insertion_optimal(P, heur.order[0], 18)


def test_exact_16_items_matches_insertion_optimum_bound():
    # exactness at the target size: no single move improves the DP order
    rng = np.random.default_rng(19)
    P = _random_P(rng, 16, p_missing=0.2)
    res = ml_ranking(P)
    v0 = _insertion_optimal(P, res.order[0], 16)
    np.testing.assert_allclose(res.log_likelihood[0], v0, rtol=1e-10)
    heur = ml_ranking(P, exact_max_n=0)
    assert heur.log_likelihood[0] <= res.log_likelihood[0] + 1e-9


def test_certain_probabilities_do_not_make_every_order_equal():
    # p = 1 against the chain 0 > 1 > 2 plus one contradicting certainty: clipping keeps
    # orders comparable, and the order breaking the fewest certainties wins
    P = np.full((3, 3), np.nan)
    P[0, 1] = P[1, 2] = P[0, 2] = 1.0
    P[2, 0] = 1.0
    res = ml_ranking(P)
    assert np.isfinite(res.log_likelihood[0])
    assert res.agreement[0] == 3  # one of the four certainties must be broken
    np.testing.assert_array_equal(res.order[0], [0, 1, 2])


@pytest.mark.parametrize(
    ("P", "kwargs", "match"),
    [
        (np.zeros((2, 3)), {}, "shape"),
        (np.full((2, 2), -0.1), {}, r"\[0, 1\]"),
        (np.full((1, 3, 3), np.nan), {}, "no comparison"),
        (np.zeros((1, 1)), {}, "N = 1"),
        (np.zeros((0, 2, 2)), {}, "no contexts"),
        (np.full((2, 2), 0.5), {"tau": 2.0}, "tau"),
        (np.full((2, 2), 0.5), {"exact_max_n": MAX_EXACT_N + 1}, "exact_max_n"),
        (np.full((2, 2), 0.5), {"exact_max_n": 2.5}, "exact_max_n"),
    ],
)
def test_bad_input_raises(P, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ml_ranking(P, **kwargs)


def test_equally_likely_orders_fall_to_the_win_ratio_order():
    # Two disjoint decided pairs (3 beats 0, 2 beats 1): every order keeping both is equally
    # likely. The tie must go to the evidence (both winners on top), not to the ids' order.
    P = np.full((4, 4), np.nan)
    P[3, 0] = 1.0
    P[2, 1] = 1.0
    res = ml_ranking(P)
    ranks = res.ranks[0]
    assert max(ranks[2], ranks[3]) < min(ranks[0], ranks[1])
    assert sorted(res.order[0].tolist()) == [0, 1, 2, 3]


# ---------------------------------------------------------------------------- holes and ties


def _mean_positions(tied, n):
    """Mean rank (1 = best) of every item over the orders ``tied``; NaN for absent items."""
    out = np.full(n, np.nan)
    for item in {i for order in tied for i in order}:
        out[item] = np.mean([order.index(item) + 1 for order in tied])
    return out


@pytest.mark.parametrize("hard", [False, True])
def test_ranks_are_the_mean_over_every_equally_likely_order(hard):
    # coarse values tie often (hard decisions almost always): the reported ranks are the
    # mean positions over every best order of the brute force, and n_orders counts them
    rng = np.random.default_rng(23 + hard)
    n_multi = 0
    for _ in range(25):
        n = int(rng.integers(2, 7))
        P = _random_P(rng, n, p_missing=0.5, grid=2)
        res, _, _, tied = _against_brute_force(P, hard)
        np.testing.assert_allclose(res.ranks[0], _mean_positions(tied, n), atol=1e-12)
        assert res.n_orders[0] == len(tied)
        n_multi += len(tied) > 1
    assert n_multi >= 5


@pytest.mark.parametrize("value", [0.5, 1.0])
@pytest.mark.parametrize("exact_max_n", [20, 3])
@pytest.mark.parametrize("hard", [False, True])
def test_uninformative_judge_ties_every_candidate(value, exact_max_n, hard):
    # every p = 0.5 (all ties) or "A" whatever the order (p_ij = p_ji = 1): every order is
    # equally likely, so no order may be invented
    n = 6
    P = np.full((2, n, n), value)
    P[1, 4:, :] = P[1, :, 4:] = np.nan  # a second context with 4 candidates, padded
    res = ml_ranking(P, tau=0.5 if hard else None, exact_max_n=exact_max_n)
    np.testing.assert_array_equal(res.ranks[0], np.full(n, 3.5))
    np.testing.assert_array_equal(res.ranks[1, :4], np.full(4, 2.5))
    assert np.isnan(res.ranks[1, 4:]).all()
    np.testing.assert_array_equal(res.n_orders, [720, 24])
    human = np.arange(float(n))
    assert np.isnan(spearman(res.scores, np.stack([human, human]))).all()


def test_tied_groups_keep_their_order_and_share_a_rank():
    # {0, 1} beat {2, 3} and {4} in every comparison; inside each group the judge is a coin
    # flip (p = 0.5 both ways): the best orders are every order of each group
    P = np.full((5, 5), 0.5)
    top, mid = [0, 1], [2, 3]
    for i in top:
        P[i, mid + [4]] = 0.9
        P[mid + [4], i] = 0.1
    for i in mid:
        P[i, 4] = 0.8
        P[4, i] = 0.2
    res = ml_ranking(P)
    np.testing.assert_array_equal(res.ranks[0], [1.5, 1.5, 3.5, 3.5, 5])
    np.testing.assert_array_equal(res.scores[0], [3.5, 3.5, 1.5, 1.5, 0])
    assert res.n_orders[0] == 4
    heur = ml_ranking(P, exact_max_n=2)  # the heuristic finds the same tied runs
    assert heur.method == ("heuristic",)
    np.testing.assert_array_equal(heur.ranks[0], res.ranks[0])


def test_three_cycle_ties_and_a_clear_order_does_not():
    P = np.full((3, 3), np.nan)
    P[0, 1] = P[1, 2] = P[2, 0] = 0.9
    res = ml_ranking(P)
    np.testing.assert_array_equal(res.ranks[0], [2, 2, 2])
    assert res.n_orders[0] == 3
    true = np.array([0.5, 2.0, -1.0, 1.0])
    clear = ml_ranking(1.0 / (1.0 + np.exp(-(true[:, None] - true[None, :]))))
    assert clear.n_orders[0] == 1


def test_all_ties_at_the_largest_exact_size_stay_exactly_tied():
    # 20! best orders: the counts exceed 2**53, yet no rounding may invent an order
    res = ml_ranking(np.full((20, 20), 0.5))
    assert np.unique(res.scores[0]).size == 1
    assert res.n_orders[0] == pytest.approx(math.factorial(20))


def test_context_without_any_comparison_gets_nan_not_an_exception():
    rng = np.random.default_rng(29)
    P = np.full((3, 5, 5), np.nan)
    P[0] = _random_P(rng, 5)
    P[2] = _random_P(rng, 5)
    res = ml_ranking(P)
    assert np.isnan(res.ranks[1]).all() and np.isnan(res.scores[1]).all()
    assert (res.order[1] == -1).all() and res.n_present[1] == 0
    assert res.log_likelihood[1] == 0.0
    for c in (0, 2):  # the other contexts are ranked as on their own
        alone = ml_ranking(P[c])
        np.testing.assert_array_equal(res.order[c], alone.order[0])
        np.testing.assert_array_equal(res.ranks[c], alone.ranks[0])


def test_per_context_tau_and_no_ignored_arguments():
    rng = np.random.default_rng(29)
    P = np.stack([_random_P(rng, 5, grid=4) for _ in range(3)])
    taus = np.array([0.5, 0.25, 0.75])
    res = ml_ranking(P, tau=taus)
    for c in range(3):
        alone = ml_ranking(P[c], tau=taus[c])
        np.testing.assert_array_equal(res.ranks[c], alone.ranks[0])
        assert res.agreement[c] == alone.agreement[0]
    # the heuristic starts from Bradley-Terry on the same per-context decisions
    heur = ml_ranking(P, tau=taus, exact_max_n=2)
    for c in range(3):
        assert heur.agreement[c] == ml_ranking(P[c], tau=taus[c], exact_max_n=2).agreement[0]
    with pytest.raises(TypeError, match="random_state"):
        ml_ranking(P, random_state=0)  # deterministic: the argument it ignored is gone
    with pytest.raises(TypeError, match="hard"):
        ml_ranking(P, hard=True)  # one way to ask for hard decisions: a tau

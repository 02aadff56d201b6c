"""Static comparison sets and the adaptive product-of-experts strategy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ranking import adaptive_rank, select_comparisons, win_ratio
from ranking.budget.selection import _adaptive_orders, _static_orders
from tests.ranking import naive


def simulate_judge(rng, n_items=16, bias=0.5, noise=1.0):
    """Bradley–Terry truth, noisy p with a first-position bias (logit scale)."""
    s = rng.normal(size=n_items)
    logit = s[:, None] - s[None, :] + bias + noise * rng.normal(size=(n_items, n_items))
    P = 1 / (1 + np.exp(-logit))
    np.fill_diagonal(P, np.nan)
    return s, P


def _scores_on(P, pairs):
    sub = np.full_like(P, np.nan)
    sub[pairs[:, 0], pairs[:, 1]] = P[pairs[:, 0], pairs[:, 1]]
    s = win_ratio(sub, tau=0.5)[0]
    return np.where(np.isnan(s), 0.5, s)  # never compared: ranked in the middle


@pytest.mark.parametrize("n", [2, 3, 6])
def test_static_strategies_properties(n):
    n_ord = n * (n - 1)
    allp = select_comparisons("all", n)
    assert len(allp) == n_ord and len({tuple(p) for p in allp}) == n_ord
    assert (allp[:, 0] != allp[:, 1]).all()
    for budget in range(1, n_ord + 1):
        r = select_comparisons("random", n, budget, random_state=budget)
        assert r.shape == (budget, 2) and len({tuple(p) for p in r}) == budget
        assert (r[:, 0] != r[:, 1]).all() and r.min() >= 0 and r.max() < n
        if budget <= n_ord // 2:
            nr = select_comparisons("no-repeat", n, budget, random_state=budget)
            assert len({frozenset(p) for p in nr}) == budget  # never both orders
        if budget % 2 == 0:
            sy = select_comparisons("symmetric", n, budget, random_state=budget)
            np.testing.assert_array_equal(sy[0::2], sy[1::2][:, ::-1])
            assert len({frozenset(p) for p in sy[0::2]}) == budget // 2


def test_no_repeat_orientation_is_random_and_seed_reproducible():
    a = select_comparisons("no-repeat", 10, 45, random_state=1)
    b = select_comparisons("no-repeat", 10, 45, random_state=1)
    np.testing.assert_array_equal(a, b)
    share_low_first = np.mean(a[:, 0] < a[:, 1])
    assert 0.2 < share_low_first < 0.8
    assert not np.array_equal(a, select_comparisons("no-repeat", 10, 45, random_state=2))


@pytest.mark.parametrize(
    "args, match",
    [
        (("sorted", 4, 3), "unknown comparison strategy"),
        (("poe-max-info", 4, 3), "adaptive"),
        (("random", 1, 1), "at least 2"),
        (("random", 4, 13), "larger than"),
        (("no-repeat", 4, 7), "never shows both orders"),
        (("symmetric", 4, 3), "even"),
        (("symmetric", 4, 14), "larger than"),
        (("random", 4, 0), "positive"),
        (("random", 4, None), "needs a budget"),
        (("all", 4, 5), "budget=None"),
        (("random", 4, 2.5), "positive integer"),
    ],
)
def test_select_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        select_comparisons(*args)


def test_static_orders_respect_present_pairs():
    rng = np.random.default_rng(0)
    n = 5
    present = rng.random((4, n, n)) < 0.7
    idx = np.arange(n)
    present[:, idx, idx] = False
    for code, strategy in enumerate(["random", "no-repeat", "symmetric"]):
        orders, n_avail = _static_orders(present, code, 6, np.random.default_rng(123))
        again, _ = _static_orders(present, code, 6, np.random.default_rng(123))
        np.testing.assert_array_equal(orders, again)
        for c in range(4):
            both = present[c] & present[c].T
            if strategy == "random":
                assert n_avail[c] == present[c].sum()
            elif strategy == "no-repeat":
                assert n_avail[c] == (present[c] | present[c].T).sum() // 2
            else:
                assert n_avail[c] == both.sum()
            for d in range(6):
                seq = orders[d, c, : n_avail[c]]
                i, j = seq // n, seq % n
                assert present[c, i, j].all()
                assert len(set(seq.tolist())) == len(seq)
                if strategy == "no-repeat":
                    assert len({frozenset(p) for p in zip(i, j, strict=True)}) == len(seq)
                if strategy == "symmetric":
                    np.testing.assert_array_equal(i[0::2], j[1::2])
                    np.testing.assert_array_equal(j[0::2], i[1::2])


@pytest.mark.parametrize("rule", ["poe-max-info", "uncertainty"])
@pytest.mark.parametrize("model_bias", [True, False])
def test_adaptive_matches_naive_posterior(rule, model_bias):
    rng = np.random.default_rng(5)
    for trial in range(3):
        _, P = simulate_judge(rng, n_items=6)
        P[0, 3] = np.nan  # not askable
        budget = 18
        res = adaptive_rank(P, budget, rule=rule, model_bias=model_bias, random_state=trial)
        priority = np.random.default_rng(trial).random((6, 6))
        pairs, mu, b = naive.naive_poe_run(P, budget, rule, 0.1, model_bias, priority)
        np.testing.assert_array_equal(res.pairs, pairs)
        np.testing.assert_allclose(res.scores, mu, atol=1e-8)
        assert res.position_bias_term == pytest.approx(b, abs=1e-8)
        np.testing.assert_array_equal(res.p, P[pairs[:, 0], pairs[:, 1]])
        assert not ((res.pairs[:, 0] == 0) & (res.pairs[:, 1] == 3)).any()


def test_adaptive_callable_oracle_equals_matrix_oracle():
    rng = np.random.default_rng(8)
    _, P = simulate_judge(rng, n_items=7)
    calls = []

    def oracle(i, j):
        calls.append((i, j))
        return P[i, j]

    for rule in ("poe-max-info", "uncertainty"):
        calls.clear()
        a = adaptive_rank(P, 20, rule=rule, random_state=3)
        b = adaptive_rank(oracle, 20, rule=rule, n_items=7, random_state=3)
        np.testing.assert_array_equal(a.pairs, b.pairs)
        np.testing.assert_allclose(a.scores, b.scores, atol=1e-12)
        np.testing.assert_allclose(a.score_sd, b.score_sd, atol=1e-12)
        assert calls == [tuple(p) for p in a.pairs.tolist()]


def test_adaptive_three_cycle_and_clear_order():
    P = np.full((3, 3), np.nan)
    P[0, 1] = P[1, 2] = P[2, 0] = 0.9
    P[1, 0] = P[2, 1] = P[0, 2] = 0.1
    res = adaptive_rank(P, 6, random_state=0)
    np.testing.assert_allclose(res.scores, res.scores[0], atol=1e-12)
    s = np.array([3.0, 1.0, 0.0, -1.0, -3.0])
    Pc = 1 / (1 + np.exp(-(s[:, None] - s[None, :])))
    res = adaptive_rank(Pc, 20, random_state=0)
    assert (np.diff(res.scores) < 0).all()


def test_adaptive_max_info_spreads_comparisons():
    _, P = simulate_judge(np.random.default_rng(1), n_items=10)
    res = adaptive_rank(P, 20, random_state=0)
    degree = np.bincount(res.pairs.ravel(), minlength=10)
    # every candidate compared about equally often (random no-repeat spreads far wider)
    assert degree.min() >= 3 and degree.max() <= 5
    firsts = np.bincount(res.pairs[:, 0], minlength=10)
    assert firsts.min() >= 1 and firsts.max() <= 3  # presentation orders balanced


def test_adaptive_beats_no_repeat_on_simulated_judges():
    """At equal budget, averaged over seeds: PoE max-info beats no-repeat."""
    n_items, budget, n_seeds = 16, 32, 40
    rho = {"no-repeat": [], "adaptive": [], "adaptive-design-win-ratio": []}
    for seed in range(n_seeds):
        rng = np.random.default_rng(seed)
        truth, P = simulate_judge(rng, n_items=n_items)
        nr = select_comparisons("no-repeat", n_items, budget, random_state=rng)
        rho["no-repeat"].append(stats.spearmanr(_scores_on(P, nr), truth)[0])
        res = adaptive_rank(P, budget, random_state=seed)
        rho["adaptive"].append(stats.spearmanr(res.scores, truth)[0])
        # the design alone, scored with the same win-ratio as no-repeat
        rho["adaptive-design-win-ratio"].append(stats.spearmanr(_scores_on(P, res.pairs), truth)[0])
    mean = {k: float(np.mean(v)) for k, v in rho.items()}
    assert mean["adaptive"] > mean["no-repeat"] + 0.08, mean
    assert mean["adaptive-design-win-ratio"] > mean["no-repeat"] + 0.02, mean
    wins = np.mean(np.array(rho["adaptive"]) > np.array(rho["no-repeat"]))
    assert wins > 0.7


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(oracle=np.full((3, 3), 0.5), budget=7), "larger than"),
        (dict(oracle=np.full((3, 3), 0.5), budget=2, rule="greedy"), "unknown adaptive rule"),
        (dict(oracle=np.full((3, 4), 0.5), budget=2), "shape"),
        (dict(oracle=np.full((3, 3), 1.5), budget=2), r"\[0, 1\]"),
        (dict(oracle=np.full((3, 3), np.nan), budget=2), "no askable"),
        (dict(oracle=np.full((1, 1), 0.5), budget=1), "at least 2"),
        (dict(oracle=lambda i, j: 0.5, budget=2), "n_items"),
        (dict(oracle=lambda i, j: 2.0, budget=2, n_items=3), "probability"),
        (dict(oracle=np.full((3, 3), 0.5), budget=0), "positive"),
        (dict(oracle=np.full((3, 3), 0.5), budget=2, prior_weight=0.0), "prior_weight"),
    ],
)
def test_adaptive_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        adaptive_rank(**kwargs)


def test_adaptive_orders_replay_adaptive_rank():
    rng = np.random.default_rng(2)
    P = np.stack([simulate_judge(rng, n_items=6)[1] for _ in range(3)])
    P[1, 5, :] = np.nan  # a padded context: 5 candidates
    P[1, :, 5] = np.nan
    n_present = np.isfinite(P).reshape(3, -1).sum(axis=1)
    orders = _adaptive_orders(P, n_present, 0, 0.1, True, 2, 30, np.random.default_rng(9))
    stream = np.random.default_rng(9)
    for d in range(2):
        for c in range(3):
            m = int(n_present[c])
            res = adaptive_rank(P[c], m, random_state=stream)
            np.testing.assert_array_equal(orders[d, c, :m], res.pairs[:, 0] * 6 + res.pairs[:, 1])
            assert (orders[d, c, m:] == -1).all()

"""ranking.subset_consistency: rankings of random candidate subsets (Liusie et al. Table 8).

Hand-checked cases: a perfect judge, the full set, a 4-candidate judge whose one direct
verdict contradicts its full ranking (expected accuracies worked out below), holes.
"""

from __future__ import annotations

import numpy as np
import pytest

import ranking as rk
from ranking import subset_consistency


def perfect_P(scores):
    """Hard verdicts that always prefer the higher score (both orders)."""
    s = np.asarray(scores, dtype=float)
    P = (s[..., :, None] > s[..., None, :]).astype(float)
    idx = np.arange(s.shape[-1])
    P[..., idx, idx] = np.nan
    return P


def test_perfect_judge_is_consistent_and_right_at_every_size():
    rng = np.random.default_rng(3)
    human = rng.permutation(16).astype(float)[None].repeat(5, axis=0)
    r = subset_consistency(perfect_P(human), human=human, n_draws=20, random_state=1)
    assert r.sizes.tolist() == [2, 3, 4, 6, 8, 12, 16]
    assert np.all(r.final == 1.0)
    assert np.all(r.gold == 1.0)
    assert r.n_contexts.tolist() == [5] * 7
    assert r.n_draws == 20
    assert r.reasons == ("",) * 7
    assert rk.subset_consistency is subset_consistency


def test_full_set_reproduces_the_full_ranking():
    rng = np.random.default_rng(0)
    P = rng.random((30, 9, 9))
    human = rng.integers(1, 6, (30, 9)).astype(float)
    for tau in (None, 0.5, 0.62):
        r = subset_consistency(P, sizes=[3, 9], human=human, n_draws=5, tau=tau, random_state=0)
        assert r.final[-1] == 1.0
        full = rk.win_ratio(P, tau=tau)
        gold = rk.pairwise_accuracy(rk.order_matrix(full), human)
        assert r.gold[-1] == pytest.approx(float(gold), abs=1e-12)
        assert r.final[0] < 1.0


# a beats c and d, b beats a directly but loses to c and d, c beats d (both orders each):
# win-ratios a 2/3, b 1/3, c 2/3, d 1/3.
A, B, C, D = range(4)
BEATS = [(B, A), (A, C), (A, D), (C, B), (D, B), (C, D)]
HUMAN = np.array([4.0, 3.0, 2.0, 1.0])  # a > b > c > d


def contradicting_P():
    P = np.full((4, 4), np.nan)
    for w, loser in BEATS:
        P[w, loser] = 1.0
        P[loser, w] = 0.0
    return P


def test_hand_checked_accuracies():
    P = contradicting_P()
    assert rk.win_ratio(P, tau=0.5)[0].tolist() == pytest.approx([2 / 3, 1 / 3, 2 / 3, 1 / 3])
    r = subset_consistency(P, sizes=[2, 4], human=HUMAN, n_draws=4000, tau=0.5, random_state=7)
    # n = 2: of the 4 pairs whose full win-ratios differ, (a, b) alone says b > a: 3/4 right.
    # Against the humans all 6 pairs count, and (a, b), (b, c), (b, d) come out wrong: 1/2.
    assert r.final[0] == pytest.approx(0.75, abs=0.03)
    assert r.gold[0] == pytest.approx(0.5, abs=0.03)
    # n = 4 is the full ranking: (a,b) right, (a,c) tied 1/2, (a,d) right, (b,c) wrong,
    # (b,d) tied 1/2, (c,d) right: 4/6.
    assert r.final[1] == 1.0
    assert r.gold[1] == pytest.approx(4 / 6, abs=1e-12)


def test_same_seed_same_numbers_other_seed_other_draws():
    rng = np.random.default_rng(5)
    P = rng.random((20, 8, 8))
    a = subset_consistency(P, sizes=[2, 3], n_draws=10, random_state=11)
    b = subset_consistency(P, sizes=[2, 3], n_draws=10, random_state=11)
    c = subset_consistency(P, sizes=[2, 3], n_draws=10, random_state=12)
    assert np.array_equal(a.final, b.final)
    assert not np.array_equal(a.final, c.final)
    gen = subset_consistency(P, sizes=[2, 3], n_draws=10, random_state=np.random.default_rng(11))
    assert np.array_equal(gen.final, a.final)


def test_holes_contexts_and_candidates_without_comparisons():
    human = np.array([[5.0, 4, 3, 2, 1, 0], [5.0, 4, 3, 2, 1, 0], [1.0, 2, 3, 4, 5, 6]])
    P = perfect_P(human)
    P[1, 4:, :] = np.nan  # context 1: candidates 4 and 5 never compared
    P[1, :, 4:] = np.nan
    P[2] = np.nan  # context 2: every answer unparsed
    human[0, 2] = np.nan  # a hole in the human scores
    r = subset_consistency(P, sizes=[2, 4, 5, 6, 7], human=human, n_draws=30, random_state=0)
    assert r.n_contexts.tolist() == [2, 2, 1, 1, 0]
    assert np.all(r.final[:4] == 1.0) and np.all(r.gold[:4] == 1.0)
    assert np.isnan(r.final[4]) and np.isnan(r.gold[4])
    assert "no context has 7 candidates" in r.reasons[4]


def test_sparse_comparisons_and_no_human_scores():
    # A chain of adjacent comparisons only (as SummEval's ChatGPT verdicts): most pairs of a
    # 2-subset were never compared, and those subsets count for nothing.
    P = np.full((6, 6), np.nan)
    for i in range(5):
        P[i + 1, i] = 1.0  # i + 1 beats i, in both orders
        P[i, i + 1] = 0.0
    r = subset_consistency(P, sizes=[2, 3, 6], n_draws=200, random_state=0)
    # Full win-ratios 0, .5, .5, .5, .5, 1: only pairs with 0 or 5 count for "final", and a
    # subset ranks them right whenever it holds their comparisons (else they are unranked).
    assert r.final.tolist() == [1.0, 1.0, 1.0]
    assert r.n_contexts.tolist() == [1, 1, 1]
    assert np.isnan(r.gold).all()
    assert all("gold: no human scores" in why for why in r.reasons)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(sizes=[1, 3]), "at least 2"),
        (dict(sizes=[2.5]), "whole"),
        (dict(sizes=[]), "non-empty"),
        (dict(n_draws=0), "n_draws"),
        (dict(human=np.zeros(3)), "human must have shape"),
        (dict(tau=1.5), "tau"),
        (dict(random_state=-1), "random_state"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        subset_consistency(perfect_P(np.arange(5.0)), **kwargs)

"""elo against its game-by-game twin, a published example, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import elo
from tests.ranking import naive


def test_one_game_between_equal_players_moves_k_over_two():
    res = elo([0], [1], [1.0], 2, k=30.0, initial=1500.0)
    np.testing.assert_allclose(res.scores, [1515.0, 1485.0])
    assert res.lower is None and res.upper is None and res.n_boot == 0
    tie = elo([0], [1], [0.5], 3)
    np.testing.assert_allclose(tie.scores, [1000.0, 1000.0, 1000.0])


def test_evalica_published_example():
    # evalica src/elo.rs unit test: r = 1500, k = 30, s = 400; won, tied, lost, won
    res = elo([3, 2, 1, 0], [0, 1, 2, 3], [1.0, 0.5, 0.0, 1.0], 4, k=30.0, initial=1500.0)
    assert np.all(np.abs(res.scores - [1501.0, 1485.0, 1515.0, 1498.0]) < 1.0)


@pytest.mark.parametrize("soft", [False, True])
def test_matches_naive_on_random_games(soft):
    rng = np.random.default_rng(21)
    n, m = 12, 500
    first = rng.integers(0, n, m)
    second = (first + rng.integers(1, n, m)) % n
    outcome = rng.random(m) if soft else rng.choice([0.0, 0.5, 1.0], m)
    for k, base, scale in ((4.0, 10.0, 400.0), (32.0, 10.0, 400.0), (0.1, np.e, 1.0)):
        res = elo(first, second, outcome, n, k=k, base=base, scale=scale, initial=1200.0)
        expected = naive.naive_elo(
            first, second, outcome, n, k=k, initial=1200.0, base=base, scale=scale
        )
        np.testing.assert_allclose(res.scores, expected, rtol=1e-12)
    # the sum of ratings is conserved (zero-sum updates)
    np.testing.assert_allclose(res.scores.sum(), 1200.0 * n)


def test_bootstrap_over_orderings_is_seeded():
    rng = np.random.default_rng(22)
    n, m = 6, 300
    first = rng.integers(0, n, m)
    second = (first + rng.integers(1, n, m)) % n
    outcome = (first < second).astype(float)  # lower index always wins
    a = elo(first, second, outcome, n, n_boot=50, random_state=3)
    b = elo(first, second, outcome, n, n_boot=50, random_state=3)
    c = elo(first, second, outcome, n, n_boot=50, random_state=4)
    np.testing.assert_array_equal(a.lower, b.lower)
    np.testing.assert_array_equal(a.upper, b.upper)
    assert not np.array_equal(a.lower, c.lower)
    assert (a.lower <= a.upper).all() and a.n_boot == 50
    # each replicate is Elo on a permutation of the games: check one against the twin
    perm = np.random.default_rng(0).permutation(m)
    one = naive.naive_elo(first[perm], second[perm], outcome[perm], n)
    assert np.argsort(-one).tolist() == list(range(n))
    assert np.argsort(-a.lower).tolist() == list(range(n))


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([], [], []), {}, "empty"),
        (([0, 1], [1], [1, 0]), {}, "same length"),
        (([0, 3], [1, 0], [1, 0], 3), {}, "out of range"),
        (([0, 1], [1, 0], [1, 1.5]), {}, r"\[0, 1\]"),
        (([0, 1], [1, 1], [1, 0]), {}, "itself"),
        (([0, 1], [1, 0], [1, 0]), {"base": 1.0}, "base"),
        (([0, 1], [1, 0], [1, 0]), {"scale": 0.0}, "scale"),
        (([0, 1], [1, 0], [1, 0]), {"n_boot": -1}, "n_boot"),
        (([0, 1], [1, 0], [1, 0]), {"n_boot": 5, "confidence": 0.0}, "confidence"),
        (([0, 1], [1, 0], [1, 0]), {"k": np.nan}, "k"),
    ],
)
def test_bad_input_raises(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        elo(*args, **kwargs)


def test_result_exposes_scores_and_the_band_follows_confidence():
    # every ranking result says .scores (Elo used to say .ratings)
    rng = np.random.default_rng(23)
    first = rng.integers(0, 5, 200)
    second = (first + rng.integers(1, 5, 200)) % 5
    outcome = rng.random(200)
    res = elo(first, second, outcome, 5, n_boot=40, confidence=0.5, random_state=1)
    assert not hasattr(res, "ratings")
    np.testing.assert_allclose(res.scores, naive.naive_elo(first, second, outcome, 5))
    wide = elo(first, second, outcome, 5, n_boot=40, confidence=0.95, random_state=1)
    assert ((wide.upper - wide.lower) >= (res.upper - res.lower)).all()
    assert ((wide.upper - wide.lower) > (res.upper - res.lower)).any()


def test_one_order_in_python_equals_the_compiled_kernel(monkeypatch):
    """Up to PYTHON_MAX_GAMES games the ratings without a band run the kernel's Python
    function (a page compiles nothing); above, the compiled kernel: the same ratings."""
    import importlib

    elo_module = importlib.import_module("ranking.leaderboard.elo")

    rng = np.random.default_rng(23)
    n, m = 30, 3000
    first = rng.integers(0, n, m)
    second = (first + rng.integers(1, n, m)) % n
    outcome = rng.choice([0.0, 0.5, 1.0], m)
    weights = rng.choice([1.0, 3.0], m)
    python = elo(first, second, outcome, n, weights=weights).scores
    monkeypatch.setattr(elo_module, "PYTHON_MAX_GAMES", 0)
    compiled = elo(first, second, outcome, n, weights=weights).scores
    np.testing.assert_allclose(python, compiled, rtol=1e-13, atol=0)

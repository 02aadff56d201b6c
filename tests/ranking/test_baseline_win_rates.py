"""ranking.baseline_win_rates: win rates against a baseline, Arena-Hard's way."""

import numpy as np
import pytest

from ranking import baseline_win_rates, bradley_terry, controlled_win_rates


def _arena_fit(seed=0, n_models=6, n_games=400, **options):
    """bradley_terry(..., **options) fitted on games of every model against baseline 0 only,
    outcomes drawn from a Bradley–Terry model."""
    rng = np.random.default_rng(seed)
    theta = np.concatenate([[0.0], rng.normal(size=n_models - 1)])
    model = rng.integers(1, n_models, n_games)
    base_first = rng.random(n_games) < 0.5
    first = np.where(base_first, 0, model)
    second = np.where(base_first, model, 0)
    p = 1 / (1 + np.exp(-(theta[first] - theta[second])))
    outcome = (rng.random(n_games) < p).astype(float)
    return bradley_terry(first=first, second=second, outcome=outcome, n_items=n_models, **options)


def test_rate_is_the_sigmoid_of_the_score_difference_and_fisher_matches_the_delta_method():
    bt = _arena_fit()
    n = len(bt.scores)
    wr = baseline_win_rates(bt, 2)
    want = 1 / (1 + np.exp(-(bt.scores - bt.scores[2])))
    np.testing.assert_allclose(wr.rate, want)
    assert wr.rate[2] == wr.lower[2] == wr.upper[2] == 0.5
    assert wr.method == "fisher"
    _, low, high = controlled_win_rates(bt, 2)
    keep = np.arange(n) != 2
    np.testing.assert_allclose(wr.lower[keep], low[keep])
    np.testing.assert_allclose(wr.upper[keep], high[keep])
    assert (wr.lower[keep] < wr.rate[keep]).all() and (wr.rate[keep] < wr.upper[keep]).all()


def test_bootstrap_interval_is_the_percentile_of_replicates_anchored_at_the_baseline():
    bt = _arena_fit(seed=1, intervals="bootstrap", n_boot=100, random_state=3)
    wr = baseline_win_rates(bt, 0)
    assert wr.method == "bootstrap" and wr.n_boot == 100
    # Arena-Hard (show_result.py v0.1): anchor each replicate at the baseline, take the 2.5
    # and 97.5 percentiles of each model's anchored score, then turn them into win rates
    anchored = bt.samples - bt.samples[:, [0]]
    lo = np.percentile(anchored, 2.5, axis=0)
    hi = np.percentile(anchored, 97.5, axis=0)
    np.testing.assert_allclose(wr.lower[1:], 1 / (1 + np.exp(-lo[1:])))
    np.testing.assert_allclose(wr.upper[1:], 1 / (1 + np.exp(-hi[1:])))
    assert wr.rate[0] == 0.5


def test_a_system_not_linked_to_the_baseline_has_no_win_rate():
    # items 0-1 compared with each other, items 2-3 with each other: two components
    first = np.array([0, 1, 0, 2, 3, 2])
    second = np.array([1, 0, 1, 3, 2, 3])
    outcome = np.array([1.0, 0.0, 0.5, 1.0, 0.0, 0.0])
    bt = bradley_terry(first=first, second=second, outcome=outcome, n_items=5)
    wr = baseline_win_rates(bt, 0)
    assert np.isfinite(wr.rate[:2]).all()
    assert np.isnan(wr.rate[2:]).all() and np.isnan(wr.lower[2:]).all()


def test_bad_input_is_refused():
    bt = _arena_fit()
    n = len(bt.scores)
    with pytest.raises(ValueError, match="baseline must be an item index"):
        baseline_win_rates(bt, n)
    P = np.full((1, 3, 3), np.nan)
    P[0, 0, 1] = 0.7
    with pytest.raises(ValueError, match="flat input"):
        baseline_win_rates(bradley_terry(P), 0)

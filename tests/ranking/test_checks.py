"""The shared input checks (check_random_state, check_tau) and the one decision rule."""

from __future__ import annotations

import numpy as np
import pytest

import ranking
from ranking import decide
from ranking._core import check_random_state, check_tau

# ------------------------------------------------------------------------- random_state


def test_check_random_state_from_none_int_and_generator():
    a, b = check_random_state(7), check_random_state(np.int64(7))
    assert isinstance(a, np.random.Generator)
    assert a.random() == b.random() == np.random.default_rng(7).random()
    rng = np.random.default_rng(3)
    assert check_random_state(rng) is rng  # shared as it is, the stream continues
    fresh = check_random_state(None)
    assert isinstance(fresh, np.random.Generator) and fresh is not check_random_state(None)


@pytest.mark.parametrize(
    "bad", [1.5, "0", True, -1, np.random.RandomState(0), np.random.SeedSequence(0)]
)
def test_check_random_state_refuses_anything_else(bad):
    with pytest.raises(ValueError, match="random_state"):
        check_random_state(bad)


def test_every_public_random_function_takes_a_generator_and_defaults_to_none():
    import inspect

    for name in ranking.__all__:
        obj = getattr(ranking, name)
        if callable(obj) and not inspect.isclass(obj):
            params = inspect.signature(obj).parameters
            if "random_state" in params:
                assert params["random_state"].default is None, name
    P = np.full((4, 4), np.nan)
    P[0, 1], P[1, 2], P[2, 3], P[3, 0], P[1, 0] = 0.9, 0.8, 0.7, 0.4, 0.3
    a = ranking.bradley_terry(
        P, intervals="bootstrap", n_boot=20, random_state=np.random.default_rng(5)
    )
    b = ranking.bradley_terry(P, intervals="bootstrap", n_boot=20, random_state=5)
    np.testing.assert_array_equal(a.lower, b.lower)
    with pytest.raises(ValueError, match="random_state"):
        ranking.select_comparisons("random", 4, 3, random_state=0.5)
    with pytest.raises(ValueError, match="random_state"):
        ranking.elo([0, 1], [1, 0], [1.0, 0.0], n_boot=3, random_state="seed")


# ----------------------------------------------------------------------------------- tau


def test_check_tau_scalar_per_context_none():
    assert check_tau(0.25) == 0.25 and isinstance(check_tau(np.float32(0.25)), float)
    np.testing.assert_array_equal(check_tau([0.2, 0.8], 2), [0.2, 0.8])
    np.testing.assert_array_equal(check_tau(0.3, 3, broadcast=True), [0.3, 0.3, 0.3])
    assert check_tau(None, 3, allow_none=True) is None
    with pytest.raises(ValueError, match="got None"):
        check_tau(None, 3)
    with pytest.raises(ValueError, match=r"one per context, shape \(3,\)"):
        check_tau([0.2, 0.8], 3)
    with pytest.raises(ValueError, match="scalar"):
        check_tau([0.2, 0.8])  # flat comparisons: no contexts
    for bad in (1.5, -0.1, np.nan):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            check_tau(bad)


# -------------------------------------------------------------------------------- decide


def test_decide_is_the_rule_and_keeps_nan():
    np.testing.assert_array_equal(decide([0.2, 0.5, 0.9, np.nan], 0.5), [0.0, 0.5, 1.0, np.nan])
    assert ranking.decide is decide
    # tau at the bounds: p == 0 or 1 is a tie there, everything else decided
    np.testing.assert_array_equal(decide([0.0, 0.3, 1.0], 0.0), [0.5, 1.0, 1.0])
    np.testing.assert_array_equal(decide([0.0, 0.3, 1.0], 1.0), [0.0, 0.0, 0.5])


def test_decide_with_one_tau_per_context():
    rng = np.random.default_rng(0)
    P = np.round(rng.random((3, 4, 4)) * 4) / 4
    P[rng.random(P.shape) < 0.3] = np.nan
    taus = np.array([0.25, 0.5, 0.75])
    got = decide(P, taus)
    for c in range(3):
        np.testing.assert_array_equal(got[c], decide(P[c], taus[c]))
        want = np.where(P[c] > taus[c], 1.0, np.where(P[c] < taus[c], 0.0, 0.5))
        np.testing.assert_array_equal(got[c], np.where(np.isnan(P[c]), np.nan, want))
    assert got.shape == P.shape and got.dtype == np.float64
    with pytest.raises(ValueError, match="one per context"):
        decide(P, taus[:2])
    with pytest.raises(ValueError, match="scalar"):
        decide([0.5, 0.6], [0.5, 0.5])  # a flat array has no contexts
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        decide(np.full((2, 2), 1.5), 0.5)


def test_every_function_decides_like_decide():
    # win-ratio, Bradley-Terry and maximum likelihood at tau equal the same functions on
    # decide(P, tau) with soft outcomes: one rule everywhere
    rng = np.random.default_rng(2)
    P = np.round(rng.random((3, 5, 5)) * 4) / 4
    idx = np.arange(5)
    P[:, idx, idx] = np.nan
    taus = np.array([0.25, 0.5, 0.75])
    D = decide(P, taus)
    np.testing.assert_array_equal(ranking.win_ratio(P, tau=taus), ranking.win_ratio(D))
    np.testing.assert_array_equal(
        ranking.bradley_terry(P, tau=taus).scores, ranking.bradley_terry(D).scores
    )
    ml = ranking.ml_ranking(P, tau=taus)
    np.testing.assert_array_equal(ml.agreement, ranking.ml_ranking(D, tau=0.5).agreement)
    assert ranking.position_bias(P, tau=taus) == ranking.position_bias(D)


def test_nan_tau_only_where_a_context_has_nothing_to_decide():
    # balanced_threshold per context is NaN for a context without comparisons; that tau can
    # be passed on as it is, but a NaN tau for a context with comparisons decides nothing
    P = np.full((3, 3, 3), np.nan)
    P[0, 0, 1], P[0, 1, 0], P[2, 1, 2], P[2, 2, 1] = 0.9, 0.3, 0.6, 0.5
    taus = ranking.balanced_threshold(P, per_context=True)
    assert np.isnan(taus[1]) and np.isfinite(taus[[0, 2]]).all()
    np.testing.assert_array_equal(check_tau(taus, P=P), taus)
    for stat in (ranking.position_bias, ranking.swap_consistency):
        assert stat(P, tau=taus).n_skipped == 1
    assert np.isnan(ranking.win_ratio(P, tau=taus)[1]).all()
    assert np.isnan(decide(P, taus)[1]).all()
    taus[0] = np.nan
    with pytest.raises(ValueError, match=r"tau\[0\] = nan"):
        ranking.win_ratio(P, tau=taus)
    with pytest.raises(ValueError, match=r"tau\[0\] = nan"):
        decide(P, taus)

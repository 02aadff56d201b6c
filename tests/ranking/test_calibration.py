"""ranking.bias.calibration: swap-invariant and human-label calibration of P, ECE, reliability."""

import math

import numpy as np
import pytest

from ranking import calibrate, ece, pairwise_labels, position_bias, reliability, win_ratio


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def kendall_distance(a, b):
    """Pairs ordered differently by a and b (a tie against an order counts 1/2)."""
    da = np.sign(a[:, None] - a[None])
    db = np.sign(b[:, None] - b[None])
    iu = np.triu_indices(len(a), 1)
    return float(np.sum(np.abs(da[iu] - db[iu])) / 2)


def judges(rng, *, n_contexts=40, n=6, bias=1.5, noise=0.0, antisymmetric=True, drop=0.0):
    """(biased P, bias-free P, latent qualities): the same noise, first-slot logit bonus."""
    q = rng.normal(size=(n_contexts, n))
    e = rng.normal(size=(n_contexts, n, n)) * noise
    if antisymmetric:  # one opinion per pair, whatever the order
        e = np.triu(e, 1) - np.swapaxes(np.triu(e, 1), 1, 2)
    d = q[:, :, None] - q[:, None, :] + e
    biased, free = sigmoid(d + bias), sigmoid(d)
    holes = rng.random(d.shape) < drop
    idx = np.arange(n)
    holes[:, idx, idx] = True
    biased[holes] = np.nan
    free[holes] = np.nan
    return biased, free, q


def test_swap_removes_a_pure_logit_shift():
    rng = np.random.default_rng(0)
    P, _, _ = judges(rng, drop=0.3)
    r = calibrate(P, "swap")
    assert r.method == "swap" and r.reason is None and r.coef is None
    assert r.disagreement_before > 0.3
    assert r.disagreement_after < 1e-9
    assert math.isnan(r.ece_before) and math.isnan(r.ece_after)
    both = np.isfinite(P) & np.isfinite(np.swapaxes(P, 1, 2))
    assert r.n_fit == int(both.sum())
    # every finite cell is mapped, pairs judged in one order only included; NaN stays NaN
    assert np.array_equal(np.isfinite(r.P), np.isfinite(P))
    one = np.isfinite(P) & ~both
    assert one.any()
    np.testing.assert_allclose(r.P[one], np.interp(P[one], r.x, r.y))
    np.testing.assert_allclose(r.apply(P), r.P, equal_nan=True)
    assert np.all(np.diff(r.y) >= 0)
    # the first slot no longer wins more than its share
    assert abs(float(position_bias(P)) - 0.5) > 0.2
    assert abs(float(position_bias(r.P)) - 0.5) < 0.05


def test_swap_reorders_no_context_more_than_the_bias_did():
    """Hard win-ratio per context: calibrated vs raw never further apart than raw vs the same
    judge without position bias (and with one opinion per pair, exactly the bias-free one)."""
    rng = np.random.default_rng(1)
    P, free, _ = judges(rng, noise=0.7, drop=0.25)
    cal = calibrate(P, "swap").P
    wr_raw, wr_cal, wr_free = (win_ratio(x, tau=0.5) for x in (P, cal, free))
    moved = 0
    for c in range(P.shape[0]):
        assert kendall_distance(wr_cal[c], wr_raw[c]) <= kendall_distance(wr_raw[c], wr_free[c])
        assert kendall_distance(wr_cal[c], wr_free[c]) == 0
        moved += kendall_distance(wr_raw[c], wr_free[c]) > 0
    assert moved > 10  # the bias did reorder candidates: the check above is not vacuous


@pytest.mark.parametrize("tau", [None, 0.5])
def test_swap_with_independent_noise_moves_rankings_towards_the_unbiased_judge(tau):
    rng = np.random.default_rng(2)
    P, free, _ = judges(rng, noise=0.7, antisymmetric=False, drop=0.2)
    r = calibrate(P, "swap")
    assert r.disagreement_after < 0.3 * r.disagreement_before
    wr_raw, wr_cal, wr_free = (win_ratio(x, tau=tau) for x in (P, r.P, free))
    before = sum(kendall_distance(wr_raw[c], wr_free[c]) for c in range(P.shape[0]))
    after = sum(kendall_distance(wr_cal[c], wr_free[c]) for c in range(P.shape[0]))
    assert after < 0.5 * before


def test_swap_on_hard_verdicts_has_three_levels():
    rng = np.random.default_rng(3)
    P, _, _ = judges(rng, bias=1.0)
    hard = np.where(np.isnan(P), np.nan, np.round(2 * P) / 2)  # 0, 0.5 or 1
    r = calibrate(hard, "swap")
    assert r.reason is None
    assert np.array_equal(r.x, [0.0, 0.5, 1.0])
    assert len(np.unique(r.P[np.isfinite(r.P)])) <= 3
    assert r.disagreement_after < r.disagreement_before
    # symmetric design: the map's targets are order averages, so p' = 0.5 stays balanced
    assert abs(float(position_bias(r.P)) - 0.5) < abs(float(position_bias(hard)) - 0.5)


def human_world(rng, *, n_contexts=60, n=6, sharpen=3.0):
    """Human scores q + Gumbel noise, so P(humans prefer i over j) = sigmoid(q_i - q_j); the
    judge reports sigmoid(sharpen * (q_i - q_j)) (overconfident for sharpen > 1)."""
    q = rng.normal(size=(n_contexts, n))
    scores = q + rng.gumbel(size=q.shape)
    P = sigmoid(sharpen * (q[:, :, None] - q[:, None, :]))
    idx = np.arange(n)
    P[:, idx, idx] = np.nan
    return P, scores


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_human_calibration_lowers_held_out_ece(method):
    P, scores = human_world(np.random.default_rng(4))
    r = calibrate(P, method, scores)
    assert r.reason is None and r.method == method
    assert r.ece_before > 0.08
    assert r.ece_after < 0.5 * r.ece_before
    labels = pairwise_labels(P, scores)
    cells = np.isfinite(P) & np.isfinite(labels)
    assert r.n_fit == int(cells.sum())
    assert r.ece_after == pytest.approx(ece(r.P[cells], labels[cells]))
    if method == "platt":
        a, b = r.coef
        assert a == pytest.approx(1 / 3, abs=0.08) and abs(b) < 0.1
        clipped = np.clip(P, 1e-4, 1 - 1e-4)
        expected = sigmoid(a * np.log(clipped / (1 - clipped)) + b)
        np.testing.assert_allclose(r.apply(P), expected, equal_nan=True)


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_human_calibration_keeps_a_calibrated_judge(method):
    P, scores = human_world(np.random.default_rng(5), sharpen=1.0)
    r = calibrate(P, method, scores)
    assert r.ece_after <= r.ece_before + 0.03


def test_cross_fitting_keeps_a_contexts_labels_out_of_its_own_map():
    P, scores = human_world(np.random.default_rng(6), n_contexts=20)
    a = calibrate(P, "isotonic", scores, n_folds=4, random_state=0)
    flipped = scores.copy()
    flipped[0] = -flipped[0]
    b = calibrate(P, "isotonic", flipped, n_folds=4, random_state=0)
    np.testing.assert_array_equal(a.P[0], b.P[0])
    assert not np.allclose(a.P[1:], b.P[1:])
    # reproducible with a seed (or a Generator seeded alike), other seeds give other folds
    np.testing.assert_array_equal(
        a.P, calibrate(P, "isotonic", scores, n_folds=4, random_state=0).P
    )
    g = np.random.default_rng(0)
    np.testing.assert_array_equal(
        a.P, calibrate(P, "isotonic", scores, n_folds=4, random_state=g).P
    )
    c = calibrate(P, "isotonic", scores, n_folds=4, random_state=1)
    assert not np.array_equal(a.P, c.P)


def test_nan_holes_and_empty_contexts():
    P, scores = human_world(np.random.default_rng(7), n_contexts=12)
    P[0] = np.nan
    P[1, 0, :] = np.nan
    scores[2, :3] = np.nan
    for method in ("swap", "isotonic", "platt"):
        r = calibrate(P, method, scores)
        assert r.reason is None
        assert np.array_equal(np.isfinite(r.P), np.isfinite(P))
        assert np.all((r.P[np.isfinite(r.P)] >= 0) & (r.P[np.isfinite(r.P)] <= 1))


def test_nothing_to_fit_leaves_P_unchanged_with_a_reason():
    P = np.full((2, 3, 3), np.nan)
    P[:, 0, 1] = 0.8
    P[:, 1, 2] = 0.3  # one order only
    r = calibrate(P, "swap")
    assert "both orders" in r.reason
    np.testing.assert_array_equal(r.P, P)
    assert math.isnan(r.disagreement_before) and r.n_fit == 0
    assert "human labels" in calibrate(P, "isotonic").reason
    tied = calibrate(P, "platt", np.ones((2, 3))).reason
    assert "no judged pair has a human label" in tied
    one_ctx = np.array([[1.0, 2.0, 3.0], [np.nan] * 3])
    assert "at least 2 contexts" in calibrate(P, "isotonic", one_ctx).reason
    np.testing.assert_array_equal(calibrate(P, "isotonic", one_ctx).apply(P), P)


def test_malformed_input_raises():
    P = np.full((2, 3, 3), 0.6)
    with pytest.raises(ValueError, match="unknown calibration method"):
        calibrate(P, "magic")
    with pytest.raises(ValueError, match="reference must have shape"):
        calibrate(P, "isotonic", np.ones((2, 4)))
    with pytest.raises(ValueError, match="n_folds"):
        calibrate(P, "isotonic", np.ones((2, 3)), n_folds=1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calibrate(P * 2, "swap")


def test_pairwise_labels_from_scores_and_from_a_preference_matrix():
    P = np.full((1, 3, 3), 0.5)
    y = pairwise_labels(P, np.array([[3.0, 1.0, 1.0]]))
    expected = np.array([[np.nan, 1, 1], [0, np.nan, np.nan], [0, np.nan, np.nan]])
    np.testing.assert_array_equal(y[0], expected)
    H = np.full((1, 3, 3), np.nan)
    H[0, 0, 1], H[0, 1, 0] = 1.0, 0.0  # humans prefer 0 in both orders
    H[0, 0, 2], H[0, 2, 0] = 1.0, 1.0  # order-dependent: 0.5 either way
    H[0, 1, 2] = 0.8  # one order only
    y = pairwise_labels(P, H)[0]
    assert y[0, 1] == 1.0 and y[1, 0] == 0.0
    assert y[0, 2] == 0.5 and y[2, 0] == 0.5
    assert y[1, 2] == pytest.approx(0.8) and y[2, 1] == pytest.approx(0.2)


def test_ece_and_reliability_by_hand():
    p = np.array([0.05, 0.15, 0.15, 0.95, 1.0, np.nan])
    y = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    r = reliability(p, y, n_bins=10)
    assert r.count.tolist() == [1, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    np.testing.assert_allclose(r.bin_mid, np.arange(10) / 10 + 0.05)
    assert r.mean_p[1] == pytest.approx(0.15) and r.mean_y[1] == 0.5
    assert math.isnan(r.mean_p[2]) and r.mean_y[9] == 1.0
    slow = (1 * 0.05 + 2 * abs(0.15 - 0.5) + 2 * abs(0.975 - 1.0)) / 5
    assert ece(p, y) == pytest.approx(slow)
    assert math.isnan(ece([np.nan], [1.0]))
    with pytest.raises(ValueError, match="same size"):
        ece([0.5, 0.5], [1.0])

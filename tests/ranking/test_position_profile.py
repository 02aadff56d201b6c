"""ranking.position_profile and ranking.repetition_stability (Shi et al. 2024, arXiv 2406.07791).

A slow pure-Python twin recounts every pair; hand cases pin the extremes; a simulated judge
whose first-slot bonus grows as the quality gap shrinks checks the profile's shape and the
coverage of its intervals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

import ranking as rk
from ranking import position_profile, repetition_stability

# ----------------------------------------------------------------------------- slow twin


def twin_choice(p, tau, band):
    if math.isnan(p):
        return None
    if p > tau + band:
        return "A"
    if p < tau - band:
        return "B"
    return "C"


PRIMACY = {("A", "A"), ("A", "C"), ("C", "A")}
RECENCY = {("B", "B"), ("B", "C"), ("C", "B")}
CONSISTENT = {("A", "B"), ("B", "A"), ("C", "C")}


def twin_stats(pairs):
    """pairs: list of (choice_ab, choice_ba), at least one not None."""
    both = [(x, y) for x, y in pairs if x is not None and y is not None]
    pcn = sum(1 for c in both if c in PRIMACY)
    rcn = sum(1 for c in both if c in RECENCY)
    ccn = sum(1 for c in both if c in CONSISTENT)
    assert pcn + rcn + ccn == len(both)
    n_both = len(both)
    if pcn + rcn:
        pr, rr = pcn / (pcn + rcn), rcn / (pcn + rcn)
    else:
        pr = rr = 0.0
    judged = [c for pair in pairs for c in pair if c is not None]
    first = sum({"A": 1.0, "C": 0.5, "B": 0.0}[c] for c in judged)
    ties = sum(1 for c in judged if c == "C")
    tied = [c for c in both if "C" in c]
    return dict(
        n_pairs=len(pairs),
        n_both=n_both,
        n_primacy=pcn,
        n_recency=rcn,
        n_consistent=ccn,
        consistency=ccn / n_both if n_both else math.nan,
        fairness=(rcn * rr - pcn * pr) / n_both if n_both else math.nan,
        n_judgements=len(judged),
        first_win_rate=first / len(judged) if judged else math.nan,
        tie_rate=ties / len(judged) if judged else math.nan,
        tie_symmetry=sum(1 for c in tied if c == ("C", "C")) / len(tied) if tied else math.nan,
    )


def twin_profile(p_ab, p_ba, gap, n_bins, tau, band):
    pairs, gaps = [], []
    for a, b, g in zip(p_ab, p_ba, gap, strict=True):
        x, y = twin_choice(a, tau, band), twin_choice(b, tau, band)
        if x is None and y is None:
            continue
        pairs.append((x, y))
        gaps.append(g)
    overall = twin_stats(pairs)
    finite = sorted(g for g in gaps if not math.isnan(g))
    edges = sorted(set(np.quantile(finite, np.linspace(0, 1, n_bins + 1)).tolist()))
    if len(edges) == 1:
        edges = edges * 2
    per_bin = []
    for k in range(len(edges) - 1):
        lo, hi = edges[k], edges[k + 1]
        members = [
            i
            for i, g in enumerate(gaps)
            if not math.isnan(g) and (lo < g <= hi or (k == 0 and g == lo))
        ]
        stats = twin_stats([pairs[i] for i in members]) if members else None
        per_bin.append((members, stats))
    return overall, edges, per_bin, gaps


def random_inputs(seed, n=300):
    rng = np.random.default_rng(seed)
    grid = np.array([0.0, 0.25, 0.4, 0.5, 0.6, 0.75, 1.0])
    p_ab = np.where(rng.random(n) < 0.5, rng.choice(grid, n), rng.random(n))
    p_ba = np.where(rng.random(n) < 0.5, rng.choice(grid, n), rng.random(n))
    p_ab[rng.random(n) < 0.2] = np.nan  # one order only, or neither
    p_ba[rng.random(n) < 0.2] = np.nan
    gap = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0, 3.0], n) + np.where(
        rng.random(n) < 0.3, rng.random(n), 0.0
    )
    gap[rng.random(n) < 0.1] = np.nan
    return p_ab, p_ba, gap


SCALARS = (
    "n_pairs",
    "n_both",
    "n_primacy",
    "n_recency",
    "n_consistent",
    "consistency",
    "fairness",
    "n_judgements",
    "first_win_rate",
    "tie_rate",
    "tie_symmetry",
)


@pytest.mark.parametrize(
    ("seed", "tau", "band", "n_bins"),
    [(0, 0.5, 0.0, 5), (1, 0.5, 0.1, 4), (2, 0.4, 0.0, 3), (3, 0.5, 0.25, 7), (4, 0.6, 0.1, 1)],
)
def test_matches_the_slow_twin(seed, tau, band, n_bins):
    p_ab, p_ba, gap = random_inputs(seed)
    r = position_profile(p_ab, p_ba, gap, n_bins=n_bins, tau=tau, tie_band=band, random_state=0)
    overall, edges, per_bin, gaps = twin_profile(p_ab, p_ba, gap, n_bins, tau, band)
    assert overall["n_both"] > 0 and 0 < overall["tie_rate"] < 1  # ties at tau occur
    for name in SCALARS:
        assert getattr(r, name) == pytest.approx(overall[name], abs=1e-12, nan_ok=True), name
    np.testing.assert_allclose(r.bin_edges, edges)
    assert r.bin_n.tolist() == [len(m) for m, _ in per_bin]
    assert r.bin_n.sum() == sum(1 for g in gaps if not math.isnan(g))
    for k, (members, stats) in enumerate(per_bin):
        assert r.bin_gap[k] == pytest.approx(float(np.median([gaps[i] for i in members])))
        assert r.bin_n_both[k] == stats["n_both"]
        for name in ("consistency", "fairness", "first_win_rate", "tie_rate"):
            got = getattr(r, f"bin_{name}")[k]
            assert got == pytest.approx(stats[name], abs=1e-12, nan_ok=True), (k, name)


def test_wilson_intervals_match_scipy():
    p_ab, p_ba, gap = random_inputs(7)
    r = position_profile(p_ab, p_ba, gap, confidence=0.9, random_state=0)
    ci = binomtest(r.n_consistent, r.n_both).proportion_ci(0.9, method="wilson")
    assert (r.consistency_low, r.consistency_high) == pytest.approx((ci.low, ci.high))
    ties = round(r.tie_rate * r.n_judgements)
    ci = binomtest(ties, r.n_judgements).proportion_ci(0.9, method="wilson")
    assert (r.tie_rate_low, r.tie_rate_high) == pytest.approx((ci.low, ci.high))
    # no ties: the effective first-win count is an integer
    hard = np.array([0.9, 0.1, 0.8, 0.7, 0.2, 0.9, 0.6])
    r = position_profile(hard, hard[::-1], n_boot=0)
    ci = binomtest(round(r.first_win_rate * 14), 14).proportion_ci(0.95, method="wilson")
    assert (r.first_win_rate_low, r.first_win_rate_high) == pytest.approx((ci.low, ci.high))


def test_fairness_bootstrap_equals_resampling_pairs():
    rng = np.random.default_rng(11)
    n = 120
    p_ab = (rng.random(n) < 0.7).astype(float)
    p_ba = (rng.random(n) < 0.55).astype(float)
    r = position_profile(p_ab, p_ba, n_boot=4000, random_state=3)
    x, y = p_ab, p_ba
    idx = rng.integers(0, n, size=(4000, n))
    s = x[idx] + y[idx]
    reps = ((s < 1).sum(axis=1) - (s > 1).sum(axis=1)) / n
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert r.fairness_low == pytest.approx(lo, abs=0.02)
    assert r.fairness_high == pytest.approx(hi, abs=0.02)
    assert r.fairness_low < r.fairness < r.fairness_high
    again = position_profile(p_ab, p_ba, n_boot=4000, random_state=np.random.default_rng(3))
    assert (again.fairness_low, again.fairness_high) == (r.fairness_low, r.fairness_high)


# ----------------------------------------------------------------------------- hand cases


def test_all_primacy_all_recency_all_consistent():
    first = position_profile([0.9, 0.8, 0.5], [0.7, 0.5, 0.6], n_boot=200, random_state=0)
    assert (first.n_primacy, first.consistency, first.fairness) == (3, 0.0, -1.0)
    assert (first.fairness_low, first.fairness_high) == (-1.0, -1.0)
    second = position_profile([0.1, 0.2, 0.5], [0.3, 0.5, 0.4], n_boot=200, random_state=0)
    assert (second.n_recency, second.consistency, second.fairness) == (3, 0.0, 1.0)
    fair = position_profile([0.9, 0.1, 0.5, 0.7], [0.2, 0.8, 0.5, np.nan], random_state=0)
    assert (fair.n_consistent, fair.n_both, fair.consistency, fair.fairness) == (3, 3, 1.0, 0.0)
    assert fair.first_win_rate == pytest.approx((1 + 0 + 0.5 + 0 + 1 + 0.5 + 1) / 7)
    assert fair.tie_rate == pytest.approx(2 / 7)
    assert fair.tie_symmetry == 1.0
    # 2 primacy, 1 recency, 1 consistent: pr = 2/3, rr = 1/3, PF = (1/3 - 4/3) / 4
    mixed = position_profile([0.9, 0.9, 0.1, 0.9], [0.9, 0.5, 0.1, 0.1], n_boot=0)
    assert mixed.fairness == pytest.approx(-0.25)
    assert mixed.tie_symmetry == 0.0
    assert rk.position_profile is position_profile


def test_missing_pieces_are_nan_with_reasons():
    one_order = position_profile([0.9, 0.3, np.nan], [np.nan, np.nan, np.nan], gap=[1, 2, 3])
    assert one_order.n_pairs == 2 and one_order.n_both == 0
    assert math.isnan(one_order.consistency) and math.isnan(one_order.fairness_low)
    assert one_order.reasons["consistency"] == "no pair judged in both orders"
    assert one_order.first_win_rate == 0.5
    assert "bin_consistency" in one_order.reasons
    empty = position_profile([], [])
    assert empty.n_pairs == 0 and math.isnan(empty.first_win_rate)
    assert empty.reasons["first_win_rate"] and empty.reasons["bin_edges"] == "no gap given"
    assert empty.bin_edges.shape == (0,) and empty.bin_n.dtype.kind == "i"
    no_gap = position_profile([0.9, 0.2], [0.1, 0.8], gap=[np.nan, np.nan])
    assert no_gap.reasons["bin_edges"] == "no finite gap" and no_gap.bin_consistency.size == 0
    same = position_profile([0.9, 0.2, 0.7], [0.1, 0.8, 0.6], gap=[1.0, 1.0, 1.0])
    assert same.bin_edges.tolist() == [1.0, 1.0] and same.bin_n.tolist() == [3]
    assert same.bin_consistency[0] == pytest.approx(2 / 3)


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="same length"):
        position_profile([0.5, 0.5], [0.5])
    with pytest.raises(ValueError, match=r"p_ba\[1\] = 1.5"):
        position_profile([0.5, 0.5], [0.5, 1.5])
    with pytest.raises(ValueError, match=r"p_ab\[0\] = -0.1"):
        position_profile([-0.1], [0.5])
    with pytest.raises(ValueError, match="infinite"):
        position_profile([np.inf], [0.5])
    with pytest.raises(ValueError, match="1-D"):
        position_profile([[0.5]], [[0.5]])
    with pytest.raises(ValueError, match="gap must have one entry per pair"):
        position_profile([0.5, 0.5], [0.5, 0.5], gap=[1.0])
    with pytest.raises(ValueError, match="tau"):
        position_profile([0.5], [0.5], tau=1.2)
    with pytest.raises(ValueError, match="n_bins"):
        position_profile([0.5], [0.5], n_bins=0)
    with pytest.raises(ValueError, match="confidence"):
        position_profile([0.5], [0.5], confidence=95)
    with pytest.raises(ValueError, match="tie_band"):
        position_profile([0.5], [0.5], tie_band=-0.1)


# ----------------------------------------------------------------------------- simulated judge


def simulate(seed, n=4000, b=1.2, c=1.5):
    """Verdicts of a judge whose first-slot bonus b exp(-c |d|) grows as the gap shrinks."""
    rng = np.random.default_rng(seed)
    d = rng.normal(0.0, 1.5, n)  # quality of a minus quality of b
    bonus = b * np.exp(-c * np.abs(d))
    p_first_ab = 1.0 / (1.0 + np.exp(-(d + bonus)))
    p_first_ba = 1.0 / (1.0 + np.exp(-(-d + bonus)))
    p_ab = (rng.random(n) < p_first_ab).astype(float)
    p_ba = (rng.random(n) < p_first_ba).astype(float)
    return p_ab, p_ba, np.abs(d), p_first_ab, p_first_ba


def test_bias_grows_as_the_gap_shrinks():
    p_ab, p_ba, gap, _, _ = simulate(0)
    r = position_profile(p_ab, p_ba, gap, n_bins=5, random_state=0)
    assert r.bin_edges.shape == (6,) and r.bin_n.sum() == 4000
    assert np.all(np.diff(r.bin_gap) > 0)
    assert np.all(np.diff(r.bin_consistency) > 0)
    assert np.all(np.diff(r.bin_first_win_rate) < 0)
    assert r.bin_first_win_rate[0] > 0.6 and abs(r.bin_first_win_rate[-1] - 0.5) < 0.04
    assert np.all(r.bin_fairness < 0) and r.bin_fairness_high[0] < r.bin_fairness[-1]
    assert r.fairness_low < r.fairness < r.fairness_high < 0
    # the unbiased judge: nothing to see
    p_ab, p_ba, gap, _, _ = simulate(0, b=0.0)
    flat = position_profile(p_ab, p_ba, gap, random_state=0)
    assert flat.first_win_rate_low < 0.5 < flat.first_win_rate_high


def test_first_win_rate_intervals_cover_the_truth():
    hits = total = 0
    for seed in range(50):
        p_ab, p_ba, gap, t_ab, t_ba = simulate(seed, n=600)
        r = position_profile(p_ab, p_ba, gap, n_bins=5, n_boot=0)
        edges = r.bin_edges
        index = np.searchsorted(edges[1:-1], gap, side="left")
        for k in range(edges.shape[0] - 1):
            truth = np.concatenate([t_ab[index == k], t_ba[index == k]]).mean()
            hits += r.bin_first_win_rate_low[k] <= truth <= r.bin_first_win_rate_high[k]
            total += 1
    assert total == 250
    assert 0.90 <= hits / total <= 1.0


def test_summeval_size_with_1000_replicates():
    """SummEval's size with 1,000 bootstrap replicates: every bin and interval is filled (the
    time is measured in benchmarks/bench_bias_lab.py, not asserted here)."""
    p_ab, p_ba, gap, _, _ = simulate(1, n=4400)
    r = position_profile(p_ab, p_ba, gap, n_boot=1000, random_state=0)
    assert (
        np.isfinite(r.bin_first_win_rate_low).all() and np.isfinite(r.bin_first_win_rate_high).all()
    )


# ----------------------------------------------------------------------------- repetition


def test_repetition_stability_hand_case():
    decisions = [1, 1, 0, 0.5, 0.5, np.nan, 1, 0, 0.5, 0, 0, 0, 0]
    groups = [0, 0, 0, 1, 1, 2, 4, 4, 4, 5, 5, 5, 5]
    r = repetition_stability(decisions, groups, n_boot=0)
    np.testing.assert_allclose(r.per_group, [2 / 3, 1.0, np.nan, np.nan, 1 / 3, 1.0])
    assert r.n_groups == 4
    assert r.value == pytest.approx((2 / 3 + 1 + 1 / 3 + 1) / 4)
    assert math.isnan(r.low) and r.reason.startswith("n_boot = 0")
    boot = repetition_stability(decisions, groups, random_state=0)
    assert boot.low <= boot.value <= boot.high and boot.reason == ""
    assert rk.repetition_stability is repetition_stability


def test_repetition_stability_bootstrap_equals_resampling_groups():
    rng = np.random.default_rng(5)
    decisions = rng.integers(0, 3, 3 * 400) / 2
    decisions[rng.random(decisions.shape[0]) < 0.1] = np.nan
    groups = np.repeat(np.arange(400), 3)
    r = repetition_stability(decisions, groups, n_boot=4000, random_state=1)
    v = r.per_group[np.isfinite(r.per_group)]
    reps = v[rng.integers(0, v.shape[0], size=(4000, v.shape[0]))].mean(axis=1)
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert r.low == pytest.approx(lo, abs=0.006) and r.high == pytest.approx(hi, abs=0.006)


def test_repetition_stability_without_repeats_and_bad_input():
    r = repetition_stability([1, 0, np.nan, 0.5], [0, 1, 2, 2])
    assert math.isnan(r.value) and r.n_groups == 0 and "two or more" in r.reason
    assert r.per_group.shape == (3,) and np.isnan(r.per_group).all()
    empty = repetition_stability([], [])
    assert math.isnan(empty.value) and empty.per_group.shape == (0,)
    with pytest.raises(ValueError, match="same length"):
        repetition_stability([1, 0], [0])
    with pytest.raises(ValueError, match=r"decisions\[1\] = 0.7"):
        repetition_stability([1, 0.7], [0, 0])
    with pytest.raises(ValueError, match="non-negative"):
        repetition_stability([1, 0], [0, -1])
    with pytest.raises(ValueError, match="integer ids"):
        repetition_stability([1, 0], [0, 0.5])


def test_empty_bins_between_repeated_gaps_are_nan_with_a_reason():
    r = position_profile([0.9, 0.2, 0.7, 0.4], [0.1, 0.8, 0.6, 0.3], gap=[0, 0, 1, 1], n_bins=5)
    # quantiles 0, 0, 0.2, 0.8, 1, 1 (linear interpolation): repeated edges merge, the middle
    # bin (0.2, 0.8] holds no gap
    np.testing.assert_allclose(r.bin_edges, [0, 0.2, 0.8, 1.0])
    assert r.bin_n.tolist() == [2, 0, 2] and r.bin_gap[[0, 2]].tolist() == [0.0, 1.0]
    assert r.bin_consistency[0] == 1.0 and r.bin_consistency[2] == 0.0
    assert np.isnan(r.bin_first_win_rate[1]) and np.isnan(r.bin_gap[1])
    assert r.reasons["bin_first_win_rate"].startswith("bin(s) 1: no pair")
    assert r.reasons["bin_consistency"].startswith("bin(s) 1:")

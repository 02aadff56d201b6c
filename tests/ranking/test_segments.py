"""The per-segment correlation kernels of ranking/agreement/segments.py against scipy and loop
twins."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ranking.agreement import KENDALL_VARIANTS, METHODS
from ranking.agreement import segments as sg
from tests.ranking.agreement_twins import kendall_counts_loop, scipy_corr, tied_data


@pytest.mark.parametrize("pairs_numpy", [sg._PAIRS_NUMPY, 0])
def test_kendall_segments_matches_loop_on_hand_and_random_cases(monkeypatch, pairs_numpy):
    # pairs_numpy 0: every segment longer than _KENDALL_LOOP_MAX takes the compiled count
    monkeypatch.setattr(sg, "_PAIRS_NUMPY", pairs_numpy)
    x = np.array([1.0, 2, 2, 3, 5, 5, 1, 4])
    y = np.array([2.0, 1, 1, 3, 4, 5, 2, 2])
    cmd, tx, ty = sg._kendall_segments(x, y, np.array([0, 3]), np.array([3, 8]))
    assert (cmd[0], tx[0], ty[0]) == kendall_counts_loop(x[:3], y[:3]) == (-2, 1, 1)
    assert (cmd[1], tx[1], ty[1]) == kendall_counts_loop(x[3:], y[3:])
    rng = np.random.default_rng(1)
    # Both paths: the pair loop (short segments) and the O(n log n) count (long ones).
    for n in (2, 7, 31, sg._KENDALL_LOOP_MAX + 1, 200):
        for levels in (3, 5, 1000):
            x, y = tied_data(rng, n, levels)
            if levels == 1000:
                x = x + rng.normal(0, 1e-3, n)  # no ties in x
            cmd, tx, ty = sg._kendall_segments(x, y, np.array([0]), np.array([n]))
            assert (cmd[0], tx[0], ty[0]) == kendall_counts_loop(x, y)
    cmd, tx, ty = sg._kendall_segments(np.ones(60), np.arange(60.0), np.array([0]), np.array([60]))
    assert (cmd[0], tx[0], ty[0]) == (0, 60 * 59 // 2, 0)


def test_segment_ranks_are_scipy_midranks_within_each_segment():
    # The rank core (ranking.agreement.metrics._avg_ranks) per segment: short segments take its pair
    # count, long ones its sort; segments need not be contiguous and may be empty.
    rng = np.random.default_rng(16)
    sizes = [1, 2, 5, 48, 49, 0, 300]
    seg = np.repeat(np.arange(len(sizes)), sizes)
    v = rng.integers(0, 7, seg.size).astype(float)
    perm = rng.permutation(seg.size)
    v, seg = v[perm], seg[perm]
    got = sg._segment_ranks(v, seg, len(sizes))
    for s in range(len(sizes)):
        np.testing.assert_array_equal(got[seg == s], stats.rankdata(v[seg == s]))
    counts = np.bincount(seg, minlength=len(sizes))
    starts = np.cumsum(counts) - counts
    order = np.argsort(seg, kind="stable")
    n_distinct = sg._distinct_by_segment(v[order], starts, np.cumsum(counts))
    assert n_distinct.tolist() == [np.unique(v[seg == s]).size for s in range(len(sizes))]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("variant", KENDALL_VARIANTS)
def test_segment_corr_matches_scipy_per_context(method, variant):
    rng = np.random.default_rng(3)
    sizes = [2, 3, 5, 11, 11, 16, 40, 120]
    seg = np.repeat(np.arange(len(sizes)), sizes)
    x, y = tied_data(rng, seg.size)
    perm = rng.permutation(seg.size)  # segments need not be contiguous
    x, y, seg = x[perm], y[perm], seg[perm]
    vals, status = sg._segment_corr(x, y, seg, len(sizes), method, variant)
    for s in range(len(sizes)):
        xs, ys = x[seg == s], y[seg == s]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            assert status[s] != 0 and np.isnan(vals[s])
        else:
            assert vals[s] == pytest.approx(scipy_corr(xs, ys, method, variant), abs=1e-12)


def test_segment_corr_flags_constant_and_small_contexts():
    x = np.array([1.0, 1, 1, 2, 3, 4, 5, 1, 2, 3])
    y = np.array([1.0, 2, 3, 2, 2, 2, 5, 4, 3, 2])
    seg = np.array([0, 0, 0, 1, 1, 1, 2, 3, 3, 3])
    vals, status = sg._segment_corr(x, y, seg, 5, "spearman")
    assert status.tolist() == [sg._CONST_JUDGE, sg._CONST_HUMAN, sg._TOO_FEW, sg._OK, sg._TOO_FEW]
    assert np.isnan(vals[:3]).all() and vals[3] == pytest.approx(-1.0)

"""The matrix-product bootstrap of ranking/agreement/bootstrap.py against literally resampled
data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ranking.agreement import bootstrap as bs
from tests.ranking.agreement_twins import (
    kendall_blocks_numpy,
    resample_twin,
    scipy_corr,
    tied_data,
)


def test_kendall_blocks_match_full_matrix_twin():
    rng = np.random.default_rng(2)
    x, y = tied_data(rng, 40)
    units = rng.integers(0, 6, 40)
    got = bs._kendall_blocks(x, y, units.astype(np.int64), 6)
    np.testing.assert_allclose(got, kendall_blocks_numpy(x, y, units, 6))
    # Hand-made: two units, one concordant pair across them, one tie inside unit 0.
    got = bs._kendall_blocks(
        np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), 2
    )
    np.testing.assert_allclose(got, [[0.0, 2.0], [2.0, 0.0]])


@pytest.mark.parametrize(
    ("method", "variant"),
    [("spearman", "b"), ("pearson", "b"), ("kendall", "b"), ("kendall", "c")],
)
def test_overall_bootstrap_replicates_equal_scipy_on_resampled_data(panel, method, variant):
    j, h, ctx, _ = panel
    ok = np.isfinite(j)
    x, y, units = j[ok], h[ok], ctx[ok]
    n_boot = 25
    W = bs._unit_weights(np.random.default_rng(7), n_boot, 24)
    reps = bs._boot_pooled(x, y, units, 24, method, variant, W)
    draws = np.random.default_rng(7).integers(0, 24, size=(n_boot, 24))
    for b in range(n_boot):
        xr, yr = resample_twin(x, y, units, draws[b])
        assert reps[b] == pytest.approx(scipy_corr(xr, yr, method, variant), abs=1e-10)


@pytest.mark.parametrize("kind", ["continuous", "many values", "few values"])
def test_kendall_bootstrap_tie_counting_paths(kind):
    # Continuous scores (no ties), many repeated values (more than units: block path) and
    # few repeated values (count path) must all equal scipy on the resampled data.
    rng = np.random.default_rng(15)
    units = np.repeat(np.arange(6), 10)
    x = rng.normal(0, 2, 60)
    x = {"continuous": x, "many values": np.round(x, 1), "few values": np.clip(np.round(x), -2, 2)}[
        kind
    ]
    y = np.round(x + rng.normal(0, 2, 60))
    W = bs._unit_weights(np.random.default_rng(2), 15, 6)
    reps = bs._boot_pooled(x, y, units, 6, "kendall", "b", W)
    draws = np.random.default_rng(2).integers(0, 6, size=(15, 6))
    for b in range(15):
        xr, yr = resample_twin(x, y, units, draws[b])
        assert reps[b] == pytest.approx(stats.kendalltau(xr, yr).statistic, abs=1e-10)
    block_path = bs._tie_terms(x, units, 6)[1] is None
    assert block_path == (kind == "many values")

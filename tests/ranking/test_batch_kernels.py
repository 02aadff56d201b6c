"""The prange kernels compiled twice (ranking._core.jit.BatchKernel, issue 11 item 11): the
serial and the parallel compilation give identical results, small batches run the serial
one (no parallel compilation on a page's first visit), big ones the parallel one, and the
two never share a cache entry."""

import numpy as np
import pytest

from ranking._core import jit as _numba
from ranking.bradley_terry.dense import fit_batch
from ranking.bradley_terry.intervals import fisher_dense
from ranking.budget.grid import _poe_grid, _pooled_taus, _winratio_grid
from ranking.comparative.max_likelihood import _ml_batch
from ranking.leaderboard.elo import _elo_boot

KERNELS = [fit_batch, fisher_dense, _ml_batch, _elo_boot, _pooled_taus, _winratio_grid, _poe_grid]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_twin_has_its_own_cache_name(kernel):
    assert isinstance(kernel, _numba.BatchKernel)
    assert kernel.serial.py_func.__qualname__ == kernel.__qualname__
    assert kernel.parallel.py_func.__qualname__ == kernel.__qualname__ + "__parallel"
    assert kernel.serial.targetoptions.get("parallel") in (None, False)
    assert kernel.parallel.targetoptions["parallel"] is True


def _weights(n_ctx, n, seed=0):
    rng = np.random.default_rng(seed)
    W = rng.random((n_ctx, n, n)) * 3
    W[:, np.arange(n), np.arange(n)] = 0.0
    W[0, 1, :] = 0.0  # one item that never wins: a non-finite MLE, ridge or NaN paths
    return W


def test_bt_serial_and_parallel_identical():
    W = _weights(7, 9)
    th_s, th_p = np.zeros((7, 9)), np.zeros((7, 9))
    res_s = fit_batch.serial(W, 0.0, 100, 1e-10, th_s, False)
    res_p = fit_batch.parallel(W, 0.0, 100, 1e-10, th_p, False)
    np.testing.assert_array_equal(th_s, th_p)
    for a, b in zip(res_s, res_p, strict=True):
        np.testing.assert_array_equal(a, b)
    se_s = fisher_dense.serial(W, th_s, res_s[6], res_s[3], res_s[4])
    se_p = fisher_dense.parallel(W, th_s, res_s[6], res_s[3], res_s[4])
    np.testing.assert_array_equal(se_s, se_p)


def test_ml_serial_and_parallel_identical():
    rng = np.random.default_rng(1)
    A = rng.random((5, 7, 7))
    present = np.ones((5, 7), bool)
    present[2, 3] = False
    start = np.tile(np.arange(7), (5, 1))
    for a, b in zip(
        _ml_batch.serial(A, present, 12, start),
        _ml_batch.parallel(A, present, 12, start),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)


def test_small_batches_run_serial_big_ones_parallel():
    small = _weights(3, 8)
    assert fit_batch.pick(small, 0.0, 10, 1e-8, np.zeros((3, 8)), False) is fit_batch.serial
    big = np.zeros((200, 40, 40))
    assert fit_batch.pick(big, 0.0, 10, 1e-8, np.zeros((200, 40)), False) is fit_batch.parallel
    A16 = np.zeros((100, 16, 16))
    assert _ml_batch.pick(A16, None, 16, None) is _ml_batch.parallel  # the ML benchmark's size
    assert _ml_batch.pick(np.zeros((4, 6, 6)), None, 16, None) is _ml_batch.serial

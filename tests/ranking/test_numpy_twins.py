"""The numpy paths that replaced compiled ones on a page's first visit (issue 26) against the
compiled code they replaced: the stack of dense Bradley–Terry problems and its Fisher errors
against ``dense.fit_batch`` / ``intervals.fisher_dense``, flat fits by component against the
sparse solver, the small exact maximum-likelihood search against ``_ml_batch``, and the cell
order of the folding that the seeded bootstrap draws follow."""

import numpy as np
import pytest

from ranking._core import check_flat
from ranking.bradley_terry import aggregate as agg
from ranking.bradley_terry import flat
from ranking.bradley_terry.dense import fit_batch, win_weights
from ranking.bradley_terry.intervals import fisher_dense
from ranking.bradley_terry.stacked import fisher_stack, fit_stack
from ranking.comparative.max_likelihood import NUMPY_MAX_N, _exact_numpy, _ml_batch, _pair_terms


def _edge_weights(seed=0):
    """Win weights of contexts with disconnected blocks, an item that never loses, an empty
    context, all ties, one pair, and a cycle next to an isolated item."""
    rng = np.random.default_rng(seed)
    P = np.full((7, 6, 6), np.nan)
    for blk in ([0, 1, 2], [3, 4, 5]):
        P[0][np.ix_(blk, blk)] = rng.random((3, 3))
    P[1] = rng.random((6, 6))
    P[1, 0, :], P[1, :, 0] = 1.0, 0.0
    P[3] = 0.5
    P[4, 0, 1] = 0.7
    P[5, 0, 1] = P[5, 1, 2] = P[5, 2, 0] = 0.9
    P[5, 3, 4], P[5, 4, 3], P[5, 0, 3] = 0.2, 0.6, 0.5
    P[6] = rng.random((6, 6))
    P[:, np.arange(6), np.arange(6)] = np.nan
    finite = np.isfinite(P)
    Om = finite * rng.choice([1.0, 2.0], P.shape)
    return np.ascontiguousarray(win_weights(np.where(finite, P, 0.0), Om))


@pytest.mark.parametrize("ridge", [0.0, 0.4])
@pytest.mark.parametrize("warm", [False, True])
def test_stack_equals_the_compiled_dense_fit(ridge, warm):
    W = _edge_weights()
    start = np.random.default_rng(1).normal(size=W.shape[:2])
    start[2, 3] = np.nan
    th_c, th_s = start.copy(), start.copy()
    compiled = fit_batch.serial(W, ridge, 10_000, 1e-10, th_c, warm)
    stacked = fit_stack(W, ridge, 10_000, 1e-10, th_s, warm)
    np.testing.assert_allclose(th_s, th_c, rtol=0, atol=1e-12)
    for i in (0, 1, 3, 4, 5, 6):  # converged, n_iter, components, finite MLE, ridge
        np.testing.assert_array_equal(stacked[i], compiled[i])
    se_c = fisher_dense.serial(W, th_c, compiled[6], compiled[3], compiled[4])
    se_s = fisher_stack(W, th_s, stacked[6], stacked[3])
    np.testing.assert_allclose(se_s, se_c, rtol=1e-10, atol=0)


def test_a_problem_does_not_depend_on_its_stack():
    W = _edge_weights(2)
    alone = np.zeros((1, 6))
    together = np.zeros((7, 6))
    fit_stack(W[6:7], 0.0, 10_000, 1e-8, alone, False)
    fit_stack(W, 0.0, 10_000, 1e-8, together, False)
    np.testing.assert_array_equal(together[6], alone[0])


def _flat_case(seed):
    rng = np.random.default_rng(seed)
    # two components of different sizes, an item that never loses, ties, an unused item
    a = np.r_[rng.integers(0, 5, 300), 5 + rng.integers(0, 9, 300), [14] * 20]
    b = np.r_[rng.integers(0, 5, 300), 5 + rng.integers(0, 9, 300), rng.integers(5, 14, 20)]
    keep = a != b
    a, b = a[keep], b[keep]
    y = (rng.random(a.size) < 0.6).astype(float)
    y[rng.random(a.size) < 0.2] = 0.5
    y[a == 14] = 1.0
    return check_flat(a, b, y, 16, rng.choice([1.0, 3.0], a.size))


@pytest.mark.parametrize("ridge", [0.0, 0.3])
def test_flat_stacks_equal_the_sparse_solver(monkeypatch, ridge):
    ei, ej, out, w, n = _flat_case(3)
    stacked = flat.fit_flat(ei, ej, w * out, w, n, ridge, 10_000, 1e-10)
    monkeypatch.setattr(flat, "STACK_MAX_ITEMS", 0)
    sparse = flat.fit_flat(ei, ej, w * out, w, n, ridge, 10_000, 1e-10)
    np.testing.assert_allclose(stacked[0], sparse[0], rtol=0, atol=1e-8)
    for i in (1, 4, 5, 6, 7):  # converged, components, finite MLE, ridge per item
        np.testing.assert_array_equal(stacked[i], sparse[i])
    assert np.isnan(stacked[0][15]) and stacked[5] == 2 and not stacked[6]  # 14 never loses


@pytest.mark.parametrize("seed", range(6))
def test_small_exact_search_in_numpy_equals_the_kernel(seed):
    rng = np.random.default_rng(seed)
    for m in range(1, NUMPY_MAX_N + 1):
        P = rng.random((4, m, m))
        if seed % 3 == 1:
            P = np.round(P * 2) / 2  # many equally likely orders
        if seed % 3 == 2:
            P[rng.random(P.shape) < 0.6] = np.nan
        P[:, np.arange(m), np.arange(m)] = np.nan
        A = _pair_terms(P, 0.5 if seed % 2 else None)
        start = np.zeros((4, m), np.int64)
        compiled = _ml_batch.serial(A, np.ones((4, m), bool), np.int64(20), start)
        for got, want in zip(_exact_numpy(A), compiled, strict=True):
            np.testing.assert_array_equal(got, want)


def _comparisons(m, seed):
    rng = np.random.default_rng(seed)
    first = rng.integers(0, 6, m)
    second = (first + rng.integers(1, 6, m)) % 6
    y = rng.choice([0.0, 0.5, 1.0], m)
    return check_flat(first, second, y, 6, rng.choice([1.0, 2.0], m))


def test_cells_keep_first_occurrence_order_then_key_order(monkeypatch):
    ei, ej, out, w, _ = _comparisons(3000, 4)
    cells = agg.aggregate(ei, ej, out, w)
    # first occurrence: comparison k opens the cell of its (pair, outcome, weight)
    lo, hi = np.minimum(ei, ej), np.maximum(ei, ej)
    yy = np.where(ei > ej, 1.0 - out, out)
    seen, firsts = set(), []
    for k in range(ei.size):
        key = (lo[k], hi[k], yy[k], w[k])
        if key not in seen:
            seen.add(key)
            firsts.append(key)
    assert list(zip(cells.a, cells.b, cells.wy / cells.w, cells.w, strict=True)) == [
        (a, b, y, ww) for a, b, y, ww in firsts
    ]
    # from _SPLIT_MIN comparisons on: the order of the keys (pair, outcome bits, weight bits)
    monkeypatch.setattr(agg, "_SPLIT_MIN", 1000)
    by_key = agg.aggregate(ei, ej, out, w)
    keys = sorted(
        (int(a) * 2**31 + int(b), np.float64(y).view(np.int64), np.float64(ww).view(np.int64))
        for a, b, y, ww in firsts
    )
    got = [
        (int(a) * 2**31 + int(b), np.float64(wy / ww).view(np.int64), np.float64(ww).view(np.int64))
        for a, b, wy, ww in zip(by_key.a, by_key.b, by_key.wy, by_key.w, strict=True)
    ]
    assert got == keys
    np.testing.assert_array_equal(np.sort(by_key.mult), np.sort(cells.mult))


@pytest.mark.parametrize("groups", [False, True])
def test_cells_without_integer_codes_are_the_same(monkeypatch, groups):
    ei, ej, out, w, _ = _comparisons(3000, 5)
    codes = np.random.default_rng(6).integers(0, 40, ei.size) if groups else None
    want = agg.aggregate(ei, ej, out, w, groups=codes)
    monkeypatch.setattr(agg, "_CODE_MAX", 1)  # every code "overflows": rows are numbered
    got = agg.aggregate(ei, ej, out, w, groups=codes)
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x, y)


def _large_weights(n=130, seed=7):
    """Two contexts of n items: one with two blocks and an item that never loses, one
    complete; large enough for the blocked factorisation and the scipy components."""
    rng = np.random.default_rng(seed)
    W = rng.poisson(3.0, (2, n, n)).astype(float)
    W[:, np.arange(n), np.arange(n)] = 0.0
    half = n // 2
    W[0, :half, half:] = W[0, half:, :half] = 0.0  # two components
    W[0, :, 3] = 0.0  # item 3 never loses
    W[0, n - 1, :] = W[0, :, n - 1] = 0.0  # item n - 1 never compared
    return W


@pytest.mark.parametrize("ridge", [0.0, 0.2])
def test_large_stacks_equal_the_compiled_dense_fit(ridge):
    W = _large_weights()
    th_c, th_s = np.zeros(W.shape[:2]), np.zeros(W.shape[:2])
    compiled = fit_batch.serial(W, ridge, 10_000, 1e-10, th_c, False)
    stacked = fit_stack(W, ridge, 10_000, 1e-10, th_s, False)
    np.testing.assert_allclose(th_s, th_c, rtol=0, atol=1e-9)
    for i in (0, 3, 4, 5, 6):  # converged, components, finite MLE, ridge
        np.testing.assert_array_equal(stacked[i], compiled[i])
    se_c = fisher_dense.serial(W, th_c, compiled[6], compiled[3], compiled[4])
    np.testing.assert_allclose(fisher_stack(W, th_s, stacked[6], stacked[3]), se_c, rtol=1e-8)


def test_components_by_scipy_equal_the_matrix_closure(monkeypatch):
    from ranking.bradley_terry import stacked

    W = _large_weights(40, seed=8)
    monkeypatch.setattr(stacked, "_CLOSURE_MAX_N", 10**9)
    want = stacked.structure(W, 0.0)
    monkeypatch.setattr(stacked, "_CLOSURE_MAX_N", 0)
    got = stacked.structure(W, 0.0)
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x, y)

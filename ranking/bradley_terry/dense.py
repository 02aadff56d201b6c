"""Bradley–Terry per context of P, compiled: damped Newton with a dense Hessian.

For every context the N x N win weights W (W[i, j]: weight of i beating j, both presentation
orders counted) are fitted on their own: connected components of the comparison graph, the
MLE-existence check of the beats graph per component, the ridge per item (the caller's, 0, or
``RIDGE_FALLBACK`` where the unpenalised MLE is at infinity), then Newton steps whose N x N
Hessian is solved by Cholesky, damped by the line search of ``ranking.bradley_terry.newton``.
See ``ranking.bradley_terry`` for the model and the documented behaviour.

``bradley_terry`` itself no longer runs this module's kernels: its fits are numpy
(``ranking.bradley_terry.stacked``, the same iteration over a stack of contexts), which
needs no compilation on a page's first visit and runs within about 3 times this kernel's
speed on the real sizes (100 contexts x 16 candidates: 16 ms against 5 ms; 20,000 bootstrap
contexts at once: 3.3 s against 1.0 s, and two threads gave the kernel nothing more on the
shared 2-core machine). What stays here is used compiled elsewhere: the components, the MLE
check, the log-likelihood (``DenseProblem``, ``_dense_F``) and the Cholesky helpers are the
building blocks of the budget loop (``ranking.budget.bt_newton``), and :func:`fit_batch` /
:func:`_fit_context` (with ``ranking.bradley_terry.intervals.fisher_dense``) are the compiled
twin that the numpy solver and the budget loop are tested against.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import prange

from ranking._core.jit import PARALLEL_MIN_WORK, batch_kernel, njit

from .newton import (
    RIDGE_FALLBACK,
    centre,
    centre_gauged,
    gauge,
    line_search,
    log_sigmoid,
    register,
    sigmoid,
    stop_step,
)

__all__ = ["DenseProblem", "fit_batch", "win_weights"]

#: What the line search evaluates for one context: win weights, comparisons, ridge per item.
DenseProblem = namedtuple("DenseProblem", "W Ntot ridge_vec")


@njit
def _components_dense(Ntot):
    """Connected components of the graph Ntot > 0; -1 for isolated (never compared) items."""
    n = Ntot.shape[0]
    comp = np.full(n, -1, np.int64)
    stack = np.empty(n, np.int64)
    n_comp = 0
    for r in range(n):
        if comp[r] != -1:
            continue
        has = False
        for j in range(n):
            if Ntot[r, j] > 0.0:
                has = True
                break
        if not has:
            continue
        comp[r] = n_comp
        stack[0] = r
        top = 1
        while top > 0:
            top -= 1
            i = stack[top]
            for j in range(n):
                if Ntot[i, j] > 0.0 and comp[j] == -1:
                    comp[j] = n_comp
                    stack[top] = j
                    top += 1
        n_comp += 1
    return comp, n_comp


@njit
def _finite_mle_dense(W, comp, n_comp):
    """Per component: is the beats graph (W[i, j] > 0: i -> j) strongly connected?

    Strong connectivity of a connected component is checked by reaching every member from
    one root both along and against the arrows.
    """
    n = W.shape[0]
    ok = np.ones(n_comp, np.bool_)
    seen = np.zeros(n, np.bool_)
    stack = np.empty(n, np.int64)
    for c in range(n_comp):
        root = -1
        size = 0
        for i in range(n):
            if comp[i] == c:
                size += 1
                if root == -1:
                    root = i
        for direction in range(2):
            for i in range(n):
                seen[i] = False
            seen[root] = True
            stack[0] = root
            top = 1
            reached = 1
            while top > 0:
                top -= 1
                i = stack[top]
                for j in range(n):
                    w = W[i, j] if direction == 0 else W[j, i]
                    if w > 0.0 and not seen[j]:
                        seen[j] = True
                        stack[top] = j
                        top += 1
                        reached += 1
            if reached < size:
                ok[c] = False
    return ok


@njit
def _dense_eval(W, Ntot, theta, ridge_vec, g, H):
    """Penalised log-likelihood; fills the gradient g and the negative Hessian H."""
    n = W.shape[0]
    F = 0.0
    for i in range(n):
        g[i] = -ridge_vec[i] * theta[i]
        F -= 0.5 * ridge_vec[i] * theta[i] * theta[i]
        for j in range(n):
            H[i, j] = 0.0
        H[i, i] = ridge_vec[i]
    for i in range(n):
        for j in range(i + 1, n):
            nij = Ntot[i, j]
            if nij <= 0.0:
                continue
            d = theta[i] - theta[j]
            ls = log_sigmoid(d)
            F += W[i, j] * ls + W[j, i] * (ls - d)
            s = sigmoid(d)
            r = W[i, j] - nij * s
            g[i] += r
            g[j] -= r
            h = nij * s * (1.0 - s)
            H[i, i] += h
            H[j, j] += h
            H[i, j] -= h
            H[j, i] -= h
    return F


@njit
def _dense_F(W, Ntot, theta, ridge_vec):
    n = W.shape[0]
    F = 0.0
    for i in range(n):
        F -= 0.5 * ridge_vec[i] * theta[i] * theta[i]
    for i in range(n):
        for j in range(i + 1, n):
            if Ntot[i, j] <= 0.0:
                continue
            d = theta[i] - theta[j]
            ls = log_sigmoid(d)
            F += W[i, j] * ls + W[j, i] * (ls - d)
    return F


@njit
def _cholesky(A, L):
    """Cholesky factor of A into L (lower); False if A is not numerically positive definite."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        ljj = np.sqrt(s)
        L[j, j] = ljj
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / ljj
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit
def _cholesky_solve(L, b, x):
    n = L.shape[0]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


@njit
def _add_gauge(H, comp, comp_size, gauged):
    # Adds 1/|C| 1_C 1_C^T for components without a ridge: removes the shift invariance
    # without changing the Newton step on the mean-zero subspace (the step keeps mean 0).
    n = H.shape[0]
    for i in range(n):
        ci = comp[i]
        if ci < 0:
            H[i, i] = 1.0  # isolated item: decoupled, gradient 0, step 0
            continue
        if not gauged[ci]:
            continue
        for j in range(n):
            if comp[j] == ci:
                H[i, j] += 1.0 / comp_size[ci]


@njit
def _solve_gauged(H, comp, comp_size, gauged, g, L, x):
    _add_gauge(H, comp, comp_size, gauged)
    if _cholesky(H, L):
        _cholesky_solve(L, g, x)
        return True
    # rounding can make a nearly flat direction slightly indefinite: add a tiny jitter
    n = H.shape[0]
    big = 0.0
    for i in range(n):
        big = max(big, H[i, i])
    for i in range(n):
        H[i, i] += 1e-12 * big + 1e-300
    if _cholesky(H, L):
        _cholesky_solve(L, g, x)
        return True
    return False


def _dense_objective(problem, x):
    return _dense_F(problem.W, problem.Ntot, x, problem.ridge_vec)


def _dense_accept_early(problem, trial, step):
    return False  # no cheap test: the objective is as cheap as the gradient here


register(DenseProblem, _dense_objective, _dense_accept_early)


@njit
def _newton_dense(W, Ntot, comp, n_comp, ridge_vec, theta, max_iter, tol):
    """Damped Newton on one context; theta is updated in place."""
    n = W.shape[0]
    comp_size, gauged = gauge(comp, n_comp, ridge_vec)
    problem = DenseProblem(W, Ntot, ridge_vec)
    g = np.empty(n)
    H = np.empty((n, n))
    L = np.zeros((n, n))
    step = np.zeros(n)
    trial = np.empty(n)
    converged = False
    max_change = np.inf
    n_iter = 0
    F = _dense_eval(W, Ntot, theta, ridge_vec, g, H)
    for it in range(max_iter):
        n_iter = it + 1
        if not _solve_gauged(H, comp, comp_size, gauged, g, L, step):
            break
        max_change, slope, converged = stop_step(g, step, theta, tol)
        if converged:
            break
        line_search(problem, theta, step, slope, F, True, trial)
        for i in range(n):
            theta[i] = trial[i]
        # the MLE is shift invariant there: pin the mean at 0 against drift
        centre_gauged(theta, comp, n_comp, gauged)
        F = _dense_eval(W, Ntot, theta, ridge_vec, g, H)
    return converged, n_iter, max_change


@njit
def _fit_context(W, ridge, max_iter, tol, theta, warm):
    """Full fit of one context: components, MLE existence, ridge per item, Newton."""
    n = W.shape[0]
    Ntot = W + W.T
    comp, n_comp = _components_dense(Ntot)
    ok = _finite_mle_dense(W, comp, n_comp)
    finite = True
    for c in range(n_comp):
        finite = finite and ok[c]
    ridge_vec = np.zeros(n)
    for i in range(n):
        c = comp[i]
        if c < 0:
            ridge_vec[i] = 0.0
        elif ridge > 0.0:
            ridge_vec[i] = ridge
        elif not ok[c]:
            ridge_vec[i] = RIDGE_FALLBACK
    if not warm:
        for i in range(n):
            theta[i] = 0.0
    else:
        for i in range(n):
            if comp[i] < 0 or not np.isfinite(theta[i]):
                theta[i] = 0.0
    converged, n_iter, max_change = _newton_dense(
        W, Ntot, comp, n_comp, ridge_vec, theta, max_iter, tol
    )
    centre(theta, comp, n_comp)
    for i in range(n):
        if comp[i] < 0:
            theta[i] = np.nan
    return converged, n_iter, max_change, comp, n_comp, finite, ridge_vec


# a few Newton steps of an N x N Cholesky per context (the compiled twin: see the module doc)
@batch_kernel(work=lambda W, *rest: 10 * W.shape[0] * W.shape[1] ** 3, min_work=PARALLEL_MIN_WORK)
def fit_batch(W, ridge, max_iter, tol, theta, warm):
    """Fits every context of W (n_contexts, N, N); theta (n_contexts, N) in/out."""
    n_ctx, n, _ = W.shape
    converged = np.zeros(n_ctx, np.bool_)
    n_iter = np.zeros(n_ctx, np.int64)
    max_change = np.zeros(n_ctx)
    comp = np.empty((n_ctx, n), np.int64)
    n_comp = np.zeros(n_ctx, np.int64)
    finite = np.zeros(n_ctx, np.bool_)
    ridge_used = np.zeros((n_ctx, n))
    for c in prange(n_ctx):
        th = theta[c]
        res = _fit_context(W[c], ridge, max_iter, tol, th, warm)
        converged[c] = res[0]
        n_iter[c] = res[1]
        max_change[c] = res[2]
        comp[c] = res[3]
        n_comp[c] = res[4]
        finite[c] = res[5]
        ridge_used[c] = res[6]
    return converged, n_iter, max_change, comp, n_comp, finite, ridge_used


def win_weights(Y, Om):
    """W[c, i, j] = win weight of i over j from ordered comparisons (both orientations).

    ``Y`` holds the outcomes (NaN-free where ``Om`` > 0) and ``Om`` the weight of every ordered
    comparison (0 where absent), both of shape (n_contexts, N, N).
    """
    Yz = np.where(Om > 0, Y, 0.0)
    return Om * Yz + np.swapaxes(Om * (1.0 - Yz), 1, 2)

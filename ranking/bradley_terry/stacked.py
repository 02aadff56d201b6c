"""Bradley–Terry on a stack of dense N x N problems in numpy: the per-context fits of P, and a
flat item set folded into one problem per connected component.

Every problem b of the stack has its win weights W[b] (W[b, i, j]: weight of i beating j, both
presentation orders counted) and is fitted on its own, exactly as
``ranking.bradley_terry.dense`` does it one context at a time: connected components of the
comparison graph, the MLE-existence check of the beats graph per component, the ridge per item
(the caller's, 0, or ``RIDGE_FALLBACK`` where the unpenalised MLE is at infinity), then damped
Newton steps whose N x N Hessian (plus the gauge of every shift-invariant component) is solved
by Cholesky, damped by backtracking on the log-likelihood with Armijo's test (the rule of
``ranking.bradley_terry.newton.line_search``), stopped by a full step with max |delta theta|
< tol. Here the steps of all problems still iterating are taken together, as array
operations over the stack (numpy's batched Cholesky and solves), so nothing is compiled: a
page's fits start at once. Scores equal the compiled solver's to rounding (about 1e-14).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from .newton import _ARMIJO, _MAX_HALVINGS, RIDGE_FALLBACK

__all__ = ["fit_stack", "structure"]


def _closure(adj):
    """Reflexive-transitive closure of a stack of boolean adjacency matrices (B, n, n)."""
    n = adj.shape[-1]
    reach = adj | np.eye(n, dtype=bool)
    steps = max(1, int(np.ceil(np.log2(max(n, 2)))))
    for _ in range(steps):  # path lengths double every step
        f = reach.astype(np.float32)
        more = np.matmul(f, f) > 0.0
        if np.array_equal(more, reach):
            break
        reach = more
    return reach


# up to this N the components come from boolean matrix products (a few float32 matmuls of
# N x N per problem: cheap for stacks of many small problems, while larger products run on
# OpenBLAS threads), above from scipy.sparse.csgraph, problem by problem (about 1 ms each)
_CLOSURE_MAX_N = 64


def _components_scipy(adj, beats, present):
    """The smallest item of every item's component, and the items whose component's beats
    graph does not connect them both ways with that item (scipy, problem by problem)."""
    B, n, _ = adj.shape
    rep = np.empty((B, n), np.int64)
    fail = np.zeros((B, n), bool)
    for b in range(B):
        _, weak = connected_components(csr_matrix(adj[b]), directed=True, connection="weak")
        _, smallest = np.unique(weak, return_index=True)  # labels appear smallest item first
        rep[b] = smallest[weak]
        _, strong = connected_components(csr_matrix(beats[b]), directed=True, connection="strong")
        fail[b] = present[b] & (strong != strong[rep[b]])
    return rep, fail


def structure(W, ridge):
    """Components, MLE existence and the ridge per item of every problem of W (B, n, n).

    Returns (Ntot, comp, n_comp, finite, ridge_vec, present, gauged_item, G): comparisons
    W + W^T, component labels (-1 for items never compared; components numbered by their
    smallest item, as ``ranking.bradley_terry.dense._components_dense`` does), their number,
    whether every component's beats graph is strongly connected, the ridge per item, which
    items are compared, which items lie in a shift-invariant component (no ridge), and the
    gauge G added to the Hessian (1/|C| on shift-invariant components, 1 on the diagonal of
    items never compared).
    """
    B, n, _ = W.shape
    ar = np.arange(n)
    Ntot = W + np.swapaxes(W, 1, 2)
    adj = Ntot > 0.0
    adj[:, ar, ar] = False
    present = adj.any(axis=2)
    beats = W > 0.0
    beats[:, ar, ar] = False
    if n <= _CLOSURE_MAX_N:
        rep = np.argmax(_closure(adj), axis=2)  # the smallest item of each item's component
        # strongly connected within its component: the root reaches the item and back
        reach = _closure(beats)
        rows = np.arange(B)[:, None]
        fail = present & ~(reach[rows, rep, ar] & reach[rows, ar, rep])
    else:
        rep, fail = _components_scipy(adj, beats, present)
    is_root = present & (rep == ar)
    comp = np.where(present, np.take_along_axis(np.cumsum(is_root, axis=1) - 1, rep, 1), -1)
    n_comp = is_root.sum(axis=1).astype(np.int64)
    label = np.maximum(comp, 0)
    onehot = (comp[:, :, None] == ar) & present[:, :, None]  # (B, item, label)
    comp_fail = (onehot & fail[:, :, None]).any(axis=1)
    finite = ~comp_fail.any(axis=1)
    if ridge > 0.0:
        ridge_vec = np.where(present, float(ridge), 0.0)
    else:
        bad = present & np.take_along_axis(comp_fail, label, 1)
        ridge_vec = np.where(bad, RIDGE_FALLBACK, 0.0)
    gauged_item, G = gauge(comp, ridge_vec)
    return Ntot, comp, n_comp, finite, ridge_vec, present, gauged_item, G


def gauge(comp, ridge_vec):
    """Which items lie in a shift-invariant component (no ridge on its items), and the gauge
    added to the Hessian: 1/|C| on every such component C (removes the shift invariance
    without changing the Newton step on the mean-zero subspace), 1 on the diagonal of items
    never compared (decoupled: gradient 0, step 0)."""
    n = comp.shape[1]
    present = comp >= 0
    label = np.maximum(comp, 0)
    onehot = (comp[:, :, None] == np.arange(n)) & present[:, :, None]
    size = onehot.sum(axis=1).astype(np.float64)
    gauged = (onehot & (ridge_vec == 0.0)[:, :, None]).any(axis=1)
    gauged_item = present & np.take_along_axis(gauged, label, 1)
    size_item = np.take_along_axis(size, label, 1)
    same = (comp[:, :, None] == comp[:, None, :]) & gauged_item[:, :, None]
    G = np.where(same, 1.0 / np.maximum(size_item, 1.0)[:, :, None], 0.0)
    G[:, np.arange(n), np.arange(n)] += ~present
    return gauged_item, G


class _Problems:
    """The pairs i < j of the problems still iterating, and their objective.

    ``wij``, ``wji``: win weights of i over j and of j over i; ``nij`` their sum (pairs
    never compared have 0 and add nothing); ``iu``, ``ju``: the items of every pair.
    """

    def __init__(self, W, Ntot, ridge_vec):
        n = W.shape[1]
        self.iu, self.ju = np.triu_indices(n, 1)
        self.wij = W[:, self.iu, self.ju]
        self.wji = W[:, self.ju, self.iu]
        self.nij = Ntot[:, self.iu, self.ju]
        self.ridge_vec = ridge_vec

    def take(self, idx):
        new = object.__new__(_Problems)
        new.__dict__.update(vars(self))
        for key in ("wij", "wji", "nij", "ridge_vec"):
            new.__dict__[key] = getattr(self, key)[idx]
        return new

    def evaluate(self, theta, derivatives=True):
        """Penalised log-likelihood per problem; with ``derivatives`` also the gradient and
        the negative Hessian (without the gauge)."""
        d = theta[:, self.iu] - theta[:, self.ju]
        e = np.exp(-np.abs(d))
        log_s = np.minimum(d, 0.0) - np.log1p(e)  # log sigmoid(d), no overflow
        terms = np.where(self.nij > 0.0, self.wij * log_s + self.wji * (log_s - d), 0.0)
        F = terms.sum(axis=1) - 0.5 * (self.ridge_vec * theta * theta).sum(axis=1)
        if not derivatives:
            return F
        s = np.where(d >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))
        B, n = theta.shape
        # row sums of full n x n matrices (not a matrix product), so that a problem's numbers
        # do not depend on which others share the stack
        M = np.zeros((B, n, n))
        r = self.wij - self.nij * s
        M[:, self.iu, self.ju] = r
        M[:, self.ju, self.iu] = -r
        g = M.sum(axis=2) - self.ridge_vec * theta
        h = self.nij * s * (1.0 - s)
        H = np.zeros((B, n, n))
        H[:, self.iu, self.ju] = -h
        H[:, self.ju, self.iu] = -h
        ar = np.arange(n)
        H[:, ar, ar] = self.ridge_vec - H.sum(axis=2)
        return F, g, H


#: Up to this N the factorisations and solves are LAPACK's (numpy's batched ``linalg``); above
#: it elementwise numpy: OpenBLAS runs its factorisations and solves of N x N matrices with
#: N * N >= 10,000 on several threads, and those stall by a hundredfold when the cores are
#: busy (a page's background warm-up, another user): a 100 x 100 solve took 40 to 300 ms
#: instead of 0.2 ms on the shared 2-core machine, a 96 x 96 one stayed at 0.1-0.4 ms.
LAPACK_MAX_N = 96


# blocks of the larger factorisations: LAPACK on 32 x 32 diagonal blocks, einsum elsewhere
_BLOCK = 32


def _lapack_cholesky(M):
    """np.linalg.cholesky of every matrix of the stack (N <= ``LAPACK_MAX_N``), and which
    factors exist."""
    ok = np.ones(M.shape[0], bool)
    try:
        return np.linalg.cholesky(M), ok
    except np.linalg.LinAlgError:
        L = np.zeros_like(M)
        for b in range(M.shape[0]):
            try:
                L[b] = np.linalg.cholesky(M[b])
            except np.linalg.LinAlgError:
                ok[b] = False
        return L, ok


def _small_solve(A, R):
    """solve(A, R) for small A (B, k, k) and R (B, k, r): LAPACK with fewer than 10,000
    entries k * r per call (one thread)."""
    step = max(1, 9_999 // A.shape[1])
    if R.shape[2] <= step:
        return np.linalg.solve(A, R)
    return np.concatenate(
        [np.linalg.solve(A, R[:, :, c : c + step]) for c in range(0, R.shape[2], step)], axis=2
    )


def cholesky(M):
    """Lower Cholesky factors L of a stack M (B, n, n), and whether each exists (every pivot
    positive; a failed factor is unusable). See ``LAPACK_MAX_N`` for how: above it by
    blocks, LAPACK on the diagonal blocks and the trailing updates by ``np.einsum``."""
    B, n, _ = M.shape
    if n <= LAPACK_MAX_N:
        return _lapack_cholesky(M)
    A = np.array(M, dtype=np.float64)
    L = np.zeros_like(A)
    ok = np.ones(B, bool)
    for k0 in range(0, n, _BLOCK):
        k1 = min(n, k0 + _BLOCK)
        L11, good = _lapack_cholesky(A[:, k0:k1, k0:k1])
        ok &= good
        L11[~good] = np.eye(k1 - k0)  # unusable: keeps the rest finite
        L[:, k0:k1, k0:k1] = L11
        if k1 < n:  # L21 = A21 L11^-T, then the trailing matrix A22 - L21 L21^T
            L21 = np.swapaxes(_small_solve(L11, np.swapaxes(A[:, k1:, k0:k1], 1, 2)), 1, 2)
            L[:, k1:, k0:k1] = L21
            A[:, k1:, k1:] -= np.einsum("bik,bjk->bij", L21, L21)
    return L, ok


def cho_solve(L, g):
    """x with L L^T x = g for every problem (g (B, n)); L from :func:`cholesky` with every
    factor usable."""
    n = L.shape[1]
    if n <= LAPACK_MAX_N:
        y = np.linalg.solve(L, g[:, :, None])
        return np.linalg.solve(np.swapaxes(L, 1, 2), y)[:, :, 0]
    x = np.array(g, dtype=np.float64)
    blocks = [(k0, min(n, k0 + _BLOCK)) for k0 in range(0, n, _BLOCK)]
    for k0, k1 in blocks:  # L y = g
        x[:, k0:k1] = np.linalg.solve(L[:, k0:k1, k0:k1], x[:, k0:k1, None])[:, :, 0]
        x[:, k1:] -= np.einsum("bik,bk->bi", L[:, k1:, k0:k1], x[:, k0:k1])
    for k0, k1 in reversed(blocks):  # L^T x = y
        x[:, k0:k1] -= np.einsum("bki,bk->bi", L[:, k1:, k0:k1], x[:, k1:])
        Lt = np.swapaxes(L[:, k0:k1, k0:k1], 1, 2)
        x[:, k0:k1] = np.linalg.solve(Lt, x[:, k0:k1, None])[:, :, 0]
    return x


def _cholesky_solve(M, g):
    """Solve M x = g for every problem by Cholesky; where a factor fails, a tiny jitter is
    added to the diagonal and tried once more (rounding can make a nearly flat direction
    slightly indefinite), else ``ok`` is False for that problem."""
    L, ok = cholesky(M)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        Mb = M[bad].copy()
        diag = np.arange(M.shape[1])
        Mb[:, diag, diag] += (1e-12 * Mb[:, diag, diag].max(axis=1) + 1e-300)[:, None]
        L[bad], ok[bad] = cholesky(Mb)
        L[~ok] = np.eye(M.shape[1])
    return cho_solve(L, g), ok


def _centre(theta, comp, only):
    """theta shifted to mean 0 within every component, for the items where ``only``."""
    n = theta.shape[1]
    onehot = (comp[:, :, None] == np.arange(n)) & only[:, :, None]
    cnt = onehot.sum(axis=1)
    mean = (onehot * theta[:, :, None]).sum(axis=1) / np.maximum(cnt, 1)
    shift = np.take_along_axis(mean, np.maximum(comp, 0), 1)
    return np.where(only, theta - shift, theta)


def _line_search(probs, theta, step, slope, F0):
    """Backtracking from theta along step for every problem: t = 1, 1/2, ... until Armijo's
    test holds (with slack for rounding near the optimum), at most ``_MAX_HALVINGS`` tries;
    the last point tried otherwise. Returns the accepted points."""
    t = np.ones(theta.shape[0])
    trial = theta + step
    todo = np.arange(theta.shape[0])
    for _ in range(_MAX_HALVINGS):
        trial[todo] = theta[todo] + t[todo, None] * step[todo]
        F1 = probs.take(todo).evaluate(trial[todo], derivatives=False)
        f0 = F0[todo]
        accept = F1 >= f0 + _ARMIJO * t[todo] * slope[todo] - 1e-13 * (1.0 + np.abs(f0))
        todo = todo[~accept]
        if todo.size == 0:
            break
        t[todo] *= 0.5
    return trial


def fit_stack(W, ridge, max_iter, tol, theta, warm):
    """Fits every problem of W (B, N, N); theta (B, N) in/out (NaN for items never compared).

    Returns (converged, n_iter, max_change, component, n_components, finite_mle, ridge used)
    per problem, as ``ranking.bradley_terry.dense.fit_batch`` does.
    """
    W = np.asarray(W, dtype=np.float64)
    B = W.shape[0]
    Ntot, comp, n_comp, finite, ridge_vec, present, gauged_item, G = structure(W, ridge)
    ok_start = present & np.isfinite(theta) if warm else np.zeros_like(present)
    theta[:] = np.where(ok_start, theta, 0.0)
    converged = np.zeros(B, bool)
    n_iter = np.zeros(B, np.int64)
    max_change = np.full(B, np.inf)
    active = np.arange(B)
    probs = _Problems(W, Ntot, ridge_vec)
    F, g, H = probs.evaluate(theta)
    for it in range(max_iter):
        n_iter[active] = it + 1
        step, ok = _cholesky_solve(H + G[active], g)
        change = np.abs(step).max(axis=1)
        slope = (g * step).sum(axis=1)
        max_change[active[ok]] = change[ok]
        # a full Newton step this small is within ~tol^2 of the optimum: take it and stop
        done = ok & (change < tol)
        theta[active[done]] += step[done]
        converged[active[done]] = True
        go = np.flatnonzero(ok & ~done)
        if go.size == 0:
            break
        if go.size < active.size:
            active, probs = active[go], probs.take(go)
            step, slope, F = step[go], slope[go], F[go]
        trial = _line_search(probs, theta[active], step, slope, F)
        # the MLE is shift invariant there: pin the mean at 0 against drift
        theta[active] = _centre(trial, comp[active], gauged_item[active])
        F, g, H = probs.evaluate(theta[active])
    theta[:] = _centre(theta, comp, present)
    theta[~present] = np.nan
    return converged, n_iter, max_change, comp, n_comp, finite, ridge_vec


def fisher_stack(W, theta, ridge_used, comp):
    """Standard errors sqrt(diag(H^+)) per problem, H the negative Hessian at theta (the
    pseudo-inverse under the centring: (H + G)^-1 minus the gauge G); NaN for items never
    compared and for a whole problem whose H + G is not numerically positive definite."""
    W = np.asarray(W, dtype=np.float64)
    th = np.where(np.isfinite(theta), theta, 0.0)
    _, _, H = _Problems(W, W + np.swapaxes(W, 1, 2), ridge_used).evaluate(th)
    gauged_item, G = gauge(comp, ridge_used)
    M = H + G
    B, n = theta.shape
    L, ok = cholesky(M)
    L[~ok] = np.eye(n)
    # (H + G)^-1 = L^-T L^-1: its diagonal is the column sums of (L^-1)^2
    Linv = _lower_inverse(L)
    v = np.einsum("bki,bki->bi", Linv, Linv)
    # (H + J)^-1 = H^+ + J for J = 1_C 1_C^T / |C| on the null space of H
    v = np.where(gauged_item, v - G.diagonal(axis1=1, axis2=2), v)
    se = np.sqrt(np.maximum(v, 0.0))
    return np.where((comp >= 0) & ok[:, None], se, np.nan)


def _lower_inverse(L):
    """L^-1 of a stack of lower triangular factors (by blocks above ``LAPACK_MAX_N``)."""
    B, n, _ = L.shape
    X = np.array(np.broadcast_to(np.eye(n), L.shape))
    if n <= LAPACK_MAX_N:
        return np.linalg.solve(L, X)
    for k0 in range(0, n, _BLOCK):  # L X = I, block row by block row
        k1 = min(n, k0 + _BLOCK)
        X[:, k0:k1] = _small_solve(L[:, k0:k1, k0:k1], X[:, k0:k1])
        X[:, k1:] -= np.einsum("bik,bkc->bic", L[:, k1:, k0:k1], X[:, k0:k1])
    return X

"""Bradley–Terry maximum likelihood from pairwise comparisons (hard or soft outcomes).

Model: P(i beats j) = sigmoid(theta_i - theta_j). Every ordered comparison (i shown first,
j second) is one Bernoulli observation of "i beats j" with outcome y in [0, 1] (1: i wins,
0: j wins, 0.5: a tie, or a soft probability); the presentation order is ignored by the
model. The log-likelihood is sum_c w_c [y_c log s(d_c) + (1 - y_c) log s(-d_c)],
d_c = theta_first - theta_second, minus (alpha / 2) * ||theta||^2 when alpha > 0.

Solvers (both exact Newton methods, converged on max |delta theta| < tol):

* P input (n_contexts, N, N): per context a damped Newton iteration whose N x N Hessian is
  solved by Cholesky; the numba kernel loops over contexts in parallel.
* flat input (one large item set): a few passes of Newman's (2023) iteration to get close,
  then a damped inexact Newton iteration whose Hessian (a weighted graph Laplacian) is solved
  by Jacobi-preconditioned conjugate gradient. Every step is a pass over the edge list; no
  dense n_items x n_items matrix is formed.

Documented behaviour where the plain MLE does not exist or is not unique:

* Scores are log-strengths, centred to mean 0 within every connected component of the
  comparison graph. Scores of different components are not comparable (the likelihood says
  nothing about them); ``n_components`` > 1 flags this.
* With ``alpha = 0`` the MLE is finite exactly when, inside each component, the "beats" graph
  (i -> j when i has positive win weight against j) is strongly connected. When it is not
  (an item or group never loses, or never wins, against the rest of its component) the
  affected components are fitted with a weak Gaussian prior ``ALPHA_FALLBACK`` (prior sd about
  31.6 logits) instead; those scores are large but finite (typically 5 to 15 logits away from
  the rest) and ``finite_mle`` is False for that context (or the flat set). Components whose MLE
  exists keep the exact, unpenalised MLE.
* With ``alpha > 0`` the result is the MAP estimate under theta_i ~ N(0, 1 / alpha): always
  finite and unique, and each component's mean is 0 at the optimum.
* Items with no comparison at all get score NaN (never a made-up number) and component -1;
  so does every item of a context without any comparison (an all-NaN block of P, e.g. every
  answer about that item unparsed): that context has ``n_components`` 0 and a note says so.
"""

from __future__ import annotations

import dataclasses
import statistics
import warnings
from dataclasses import dataclass

import numpy as np
from numba import prange

from ._checks import as_P
from ._numba import njit

__all__ = ["ALPHA_FALLBACK", "BTResult", "bradley_terry"]

#: Ridge used (only) in components whose unpenalised MLE is at infinity when alpha == 0.
ALPHA_FALLBACK = 1e-3
#: Above this many items the Fisher option would need a dense n x n inverse; use the bootstrap.
MAX_FISHER_ITEMS = 4000
# Flat input: Newton iterations tried before the MLE-existence check of the beats graph.
_EXISTENCE_CHECK_AFTER = 30
# Flat input: Newman warm-up passes at most, and the max |delta theta| where Newton takes over.
_WARMUP_PASSES = 30
_WARMUP_SWITCH = 1e-6
# Armijo constant and the most halvings of one Newton step.
_ARMIJO = 1e-4
_MAX_HALVINGS = 40


@dataclass(frozen=True)
class BTResult:
    """Result of :func:`bradley_terry`.

    For P input every per-context field has a leading ``n_contexts`` axis (scores have shape
    (n_contexts, N)); for flat input they are scalars and scores have shape (n_items,).

    Attributes
    ----------
    scores : ndarray
        Log-strengths theta, centred to mean 0 per connected component; NaN for items with no
        comparison.
    converged : ndarray of bool or bool
        Whether the last full Newton step was smaller than ``tol`` (max |delta theta|).
    n_iter : ndarray of int or int
        Newton iterations used.
    max_change : ndarray of float or float
        max |delta theta| of the last Newton step.
    lower, upper : ndarray or None
        Interval bounds for ``scores`` at ``level`` (None when ``intervals`` is None).
    finite_mle : ndarray of bool or bool
        False where, with alpha == 0, some component had no finite MLE and was fitted with
        ``ALPHA_FALLBACK`` (with alpha > 0 it still reports whether the plain MLE exists).
    component : ndarray of int
        Connected-component label of each item (-1: never compared).
    n_components : ndarray of int or int
        Number of connected components (> 1: scores of different components not comparable).
    alpha : ndarray of float
        Ridge actually used per item (alpha, 0, or ``ALPHA_FALLBACK``); same shape as scores.
    method : str
        Solver and interval method used.
    notes : tuple of str
        Human-readable flags (fallback prior used, several components, no convergence).
    """

    scores: np.ndarray
    converged: np.ndarray | bool
    n_iter: np.ndarray | int
    max_change: np.ndarray | float
    lower: np.ndarray | None
    upper: np.ndarray | None
    finite_mle: np.ndarray | bool
    component: np.ndarray
    n_components: np.ndarray | int
    alpha: np.ndarray
    method: str
    notes: tuple[str, ...]


# ----------------------------------------------------------------------------------------------
# shared scalar helpers
# ----------------------------------------------------------------------------------------------


@njit
def _log_sigmoid(d):
    # log(1 / (1 + exp(-d))) without overflow for large |d|
    if d >= 0.0:
        return -np.log1p(np.exp(-d))
    return d - np.log1p(np.exp(d))


@njit
def _sigmoid(d):
    if d >= 0.0:
        return 1.0 / (1.0 + np.exp(-d))
    e = np.exp(d)
    return e / (1.0 + e)


# ----------------------------------------------------------------------------------------------
# dense per-context kernels (P input)
# ----------------------------------------------------------------------------------------------


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
def _dense_eval(W, Ntot, theta, alpha_vec, g, H):
    """Penalised log-likelihood; fills the gradient g and the negative Hessian H."""
    n = W.shape[0]
    F = 0.0
    for i in range(n):
        g[i] = -alpha_vec[i] * theta[i]
        F -= 0.5 * alpha_vec[i] * theta[i] * theta[i]
        for j in range(n):
            H[i, j] = 0.0
        H[i, i] = alpha_vec[i]
    for i in range(n):
        for j in range(i + 1, n):
            nij = Ntot[i, j]
            if nij <= 0.0:
                continue
            d = theta[i] - theta[j]
            ls = _log_sigmoid(d)
            F += W[i, j] * ls + W[j, i] * (ls - d)
            s = _sigmoid(d)
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
def _dense_F(W, Ntot, theta, alpha_vec):
    n = W.shape[0]
    F = 0.0
    for i in range(n):
        F -= 0.5 * alpha_vec[i] * theta[i] * theta[i]
    for i in range(n):
        for j in range(i + 1, n):
            if Ntot[i, j] <= 0.0:
                continue
            d = theta[i] - theta[j]
            ls = _log_sigmoid(d)
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
def _add_gauge(H, comp, comp_size, gauge):
    # Adds 1/|C| 1_C 1_C^T for components without a ridge: removes the shift invariance
    # without changing the Newton step on the mean-zero subspace (the step keeps mean 0).
    n = H.shape[0]
    for i in range(n):
        ci = comp[i]
        if ci < 0:
            H[i, i] = 1.0  # isolated item: decoupled, gradient 0, step 0
            continue
        if not gauge[ci]:
            continue
        for j in range(n):
            if comp[j] == ci:
                H[i, j] += 1.0 / comp_size[ci]


@njit
def _centre(theta, comp, n_comp):
    n = theta.shape[0]
    sums = np.zeros(n_comp)
    cnt = np.zeros(n_comp)
    for i in range(n):
        if comp[i] >= 0:
            sums[comp[i]] += theta[i]
            cnt[comp[i]] += 1.0
    for i in range(n):
        if comp[i] >= 0:
            theta[i] -= sums[comp[i]] / cnt[comp[i]]


@njit
def _solve_gauged(H, comp, comp_size, gauge, g, L, x):
    _add_gauge(H, comp, comp_size, gauge)
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


@njit
def _newton_dense(W, Ntot, comp, n_comp, alpha_vec, theta, max_iter, tol):
    """Damped Newton on one context; theta is updated in place."""
    n = W.shape[0]
    comp_size = np.zeros(n_comp)
    gauge = np.zeros(n_comp, np.bool_)
    for i in range(n):
        if comp[i] >= 0:
            comp_size[comp[i]] += 1.0
            if alpha_vec[i] == 0.0:
                gauge[comp[i]] = True
    g = np.empty(n)
    H = np.empty((n, n))
    L = np.zeros((n, n))
    step = np.zeros(n)
    trial = np.empty(n)
    converged = False
    max_change = np.inf
    n_iter = 0
    F = _dense_eval(W, Ntot, theta, alpha_vec, g, H)
    for it in range(max_iter):
        n_iter = it + 1
        if not _solve_gauged(H, comp, comp_size, gauge, g, L, step):
            break
        max_change = 0.0
        slope = 0.0
        for i in range(n):
            max_change = max(max_change, abs(step[i]))
            slope += g[i] * step[i]
        if max_change < tol:
            # a full Newton step this small is within ~tol^2 of the optimum: take it and stop
            for i in range(n):
                theta[i] += step[i]
            converged = True
            break
        t = 1.0
        for _ in range(_MAX_HALVINGS):
            for i in range(n):
                trial[i] = theta[i] + t * step[i]
            F_new = _dense_F(W, Ntot, trial, alpha_vec)
            # Armijo, with slack for rounding near the optimum
            if F_new >= F + _ARMIJO * t * slope - 1e-13 * (1.0 + abs(F)):
                break
            t *= 0.5
        for i in range(n):
            theta[i] = trial[i]
        # the MLE is shift invariant there: pin the mean at 0 against drift
        _centre_gauged(theta, comp, n_comp, gauge)
        F = _dense_eval(W, Ntot, theta, alpha_vec, g, H)
    return converged, n_iter, max_change


@njit
def _centre_gauged(theta, comp, n_comp, gauge):
    n = theta.shape[0]
    sums = np.zeros(n_comp)
    cnt = np.zeros(n_comp)
    for i in range(n):
        c = comp[i]
        if c >= 0 and gauge[c]:
            sums[c] += theta[i]
            cnt[c] += 1.0
    for i in range(n):
        c = comp[i]
        if c >= 0 and gauge[c]:
            theta[i] -= sums[c] / cnt[c]


@njit
def _fit_context(W, alpha, max_iter, tol, theta, warm):
    """Full fit of one context: components, MLE existence, ridge per item, Newton."""
    n = W.shape[0]
    Ntot = W + W.T
    comp, n_comp = _components_dense(Ntot)
    ok = _finite_mle_dense(W, comp, n_comp)
    finite = True
    for c in range(n_comp):
        finite = finite and ok[c]
    alpha_vec = np.zeros(n)
    for i in range(n):
        c = comp[i]
        if c < 0:
            alpha_vec[i] = 0.0
        elif alpha > 0.0:
            alpha_vec[i] = alpha
        elif not ok[c]:
            alpha_vec[i] = ALPHA_FALLBACK
    if not warm:
        for i in range(n):
            theta[i] = 0.0
    else:
        for i in range(n):
            if comp[i] < 0 or not np.isfinite(theta[i]):
                theta[i] = 0.0
    converged, n_iter, max_change = _newton_dense(
        W, Ntot, comp, n_comp, alpha_vec, theta, max_iter, tol
    )
    _centre(theta, comp, n_comp)
    for i in range(n):
        if comp[i] < 0:
            theta[i] = np.nan
    return converged, n_iter, max_change, comp, n_comp, finite, alpha_vec


@njit(parallel=True)
def _fit_batch(W, alpha, max_iter, tol, theta, warm):
    """Fits every context of W (n_contexts, N, N); theta (n_contexts, N) in/out."""
    n_ctx, n, _ = W.shape
    converged = np.zeros(n_ctx, np.bool_)
    n_iter = np.zeros(n_ctx, np.int64)
    max_change = np.zeros(n_ctx)
    comp = np.empty((n_ctx, n), np.int64)
    n_comp = np.zeros(n_ctx, np.int64)
    finite = np.zeros(n_ctx, np.bool_)
    alpha_used = np.zeros((n_ctx, n))
    for c in prange(n_ctx):
        th = theta[c]
        res = _fit_context(W[c], alpha, max_iter, tol, th, warm)
        converged[c] = res[0]
        n_iter[c] = res[1]
        max_change[c] = res[2]
        comp[c] = res[3]
        n_comp[c] = res[4]
        finite[c] = res[5]
        alpha_used[c] = res[6]
    return converged, n_iter, max_change, comp, n_comp, finite, alpha_used


@njit(parallel=True)
def _fisher_batch(W, theta, alpha_used, comp, n_comp):
    """Standard errors sqrt(diag(H^+)) per context (pseudo-inverse under the centring)."""
    n_ctx, n, _ = W.shape
    se = np.full((n_ctx, n), np.nan)
    for c in prange(n_ctx):
        Wc = W[c]
        Ntot = Wc + Wc.T
        th = theta[c].copy()
        for i in range(n):
            if not np.isfinite(th[i]):
                th[i] = 0.0
        g = np.empty(n)
        H = np.empty((n, n))
        _dense_eval(Wc, Ntot, th, alpha_used[c], g, H)
        k = n_comp[c]
        comp_size = np.zeros(k)
        gauge = np.zeros(k, np.bool_)
        for i in range(n):
            if comp[c, i] >= 0:
                comp_size[comp[c, i]] += 1.0
                if alpha_used[c, i] == 0.0:
                    gauge[comp[c, i]] = True
        _add_gauge(H, comp[c], comp_size, gauge)
        L = np.zeros((n, n))
        if not _cholesky(H, L):
            continue
        e = np.zeros(n)
        x = np.empty(n)
        for i in range(n):
            ci = comp[c, i]
            if ci < 0:
                continue
            e[i] = 1.0
            _cholesky_solve(L, e, x)
            e[i] = 0.0
            v = x[i]
            if gauge[ci]:
                # (H + J)^-1 = H^+ + J for J = 1_C 1_C^T / |C| on the null space of H
                v -= 1.0 / comp_size[ci]
            se[c, i] = np.sqrt(max(v, 0.0))
    return se


# ----------------------------------------------------------------------------------------------
# sparse kernels (flat input: one large item set)
# ----------------------------------------------------------------------------------------------


@njit
def _components_flat(ei, ej, w, n):
    """Union-find over edges with positive weight; labels 0..k-1, -1 for isolated items."""
    parent = np.arange(n)
    for e in range(ei.shape[0]):
        if w[e] <= 0.0:
            continue
        a = ei[e]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        b = ej[e]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
    present = np.zeros(n, np.bool_)
    for e in range(ei.shape[0]):
        if w[e] > 0.0:
            present[ei[e]] = True
            present[ej[e]] = True
    label = np.full(n, -1, np.int64)
    comp = np.full(n, -1, np.int64)
    k = 0
    for i in range(n):
        if not present[i]:
            continue
        r = i
        while parent[r] != r:
            r = parent[r]
        if label[r] == -1:
            label[r] = k
            k += 1
        comp[i] = label[r]
    return comp, k


@njit
def _finite_mle_flat(ei, ej, wy, w, n, comp, n_comp):
    """Per component: strong connectivity of the beats graph, by forward/backward reach."""
    m = ei.shape[0]
    # CSR of arrows src -> dst (src has positive win weight over dst), and the reverse
    out_deg = np.zeros(n + 1, np.int64)
    in_deg = np.zeros(n + 1, np.int64)
    for e in range(m):
        if wy[e] > 0.0:
            out_deg[ei[e] + 1] += 1
            in_deg[ej[e] + 1] += 1
        if w[e] - wy[e] > 0.0:
            out_deg[ej[e] + 1] += 1
            in_deg[ei[e] + 1] += 1
    for i in range(n):
        out_deg[i + 1] += out_deg[i]
        in_deg[i + 1] += in_deg[i]
    out_adj = np.empty(out_deg[n], np.int32)
    in_adj = np.empty(in_deg[n], np.int32)
    po = out_deg[:-1].copy()
    pi = in_deg[:-1].copy()
    for e in range(m):
        a = ei[e]
        b = ej[e]
        if wy[e] > 0.0:
            out_adj[po[a]] = b
            po[a] += 1
            in_adj[pi[b]] = a
            pi[b] += 1
        if w[e] - wy[e] > 0.0:
            out_adj[po[b]] = a
            po[b] += 1
            in_adj[pi[a]] = b
            pi[a] += 1
    size = np.zeros(n_comp, np.int64)
    root = np.full(n_comp, -1, np.int64)
    for i in range(n):
        c = comp[i]
        if c >= 0:
            size[c] += 1
            if root[c] == -1:
                root[c] = i
    ok = np.ones(n_comp, np.bool_)
    seen = np.zeros(n, np.bool_)
    stack = np.empty(n, np.int64)
    for direction in range(2):
        ptr = out_deg if direction == 0 else in_deg
        adj = out_adj if direction == 0 else in_adj
        seen[:] = False
        for c in range(n_comp):
            r = root[c]
            seen[r] = True
            stack[0] = r
            top = 1
            reached = 1
            while top > 0:
                top -= 1
                i = stack[top]
                for q in range(ptr[i], ptr[i + 1]):
                    j = adj[q]
                    if not seen[j]:
                        seen[j] = True
                        stack[top] = j
                        top += 1
                        reached += 1
            if reached < size[c]:
                ok[c] = False
    return ok


# The flat kernels are serial on purpose: single passes over the edge list are memory bound,
# two threads gained only ~20 % on an idle 2-core machine and lost badly when the cores were
# shared (threads waiting at every barrier).


@njit(error_model="numpy")
def _flat_eval(ei, ej, wy, w, theta, alpha_vec, h, g, D, pi):
    """Gradient g, per-edge curvature h and Hessian diagonal D of the penalised log-lik.

    sigmoid(theta_a - theta_b) = pi_a / (pi_a + pi_b) with pi = exp(theta - max theta): one
    exp per item instead of one per edge. The log-likelihood itself is not computed here (a log per
    edge); the line search asks for it only when neither cheap acceptance test passes.
    """
    n = theta.shape[0]
    top = -np.inf
    for i in range(n):
        top = max(top, theta[i])
    for i in range(n):
        # floor at e^-600 so that pi never underflows to 0 (only reachable mid-divergence)
        pi[i] = np.exp(max(theta[i] - top, -600.0))
        g[i] = -alpha_vec[i] * theta[i]
        D[i] = alpha_vec[i]
    for e in range(ei.shape[0]):
        a = ei[e]
        b = ej[e]
        inv = 1.0 / (pi[a] + pi[b])
        s = pi[a] * inv
        we = w[e]
        he = we * s * (pi[b] * inv)
        h[e] = he
        r = wy[e] - we * s
        g[a] += r
        g[b] -= r
        D[a] += he
        D[b] += he


@njit(error_model="numpy")
def _flat_F(ei, ej, wy, w, theta, alpha_vec):
    F = 0.0
    for e in range(ei.shape[0]):
        d = theta[ei[e]] - theta[ej[e]]
        ls = _log_sigmoid(d)
        F += wy[e] * ls + (w[e] - wy[e]) * (ls - d)
    for i in range(theta.shape[0]):
        F -= 0.5 * alpha_vec[i] * theta[i] * theta[i]
    return F


@njit(error_model="numpy")
def _flat_matvec(ei, ej, h, alpha_vec, comp, comp_size, gauge, v, out, csum):
    """out = (H + alpha + gauge) v for the Laplacian H with edge weights h."""
    n = v.shape[0]
    csum[:] = 0.0
    for i in range(n):
        out[i] = alpha_vec[i] * v[i]
        ci = comp[i]
        if ci >= 0 and gauge[ci]:
            csum[ci] += v[i]
    for e in range(ei.shape[0]):
        x = ei[e]
        y = ej[e]
        t = h[e] * (v[x] - v[y])
        out[x] += t
        out[y] -= t
    for i in range(n):
        ci = comp[i]
        if ci >= 0 and gauge[ci]:
            out[i] += csum[ci] / comp_size[ci]


@njit(error_model="numpy")
def _pcg(ei, ej, h, alpha_vec, comp, comp_size, gauge, D, g, x, rtol, max_cg, csum):
    """Jacobi-preconditioned CG for (H + alpha + gauge) x = g from x = 0."""
    n = g.shape[0]
    r = g.copy()
    z = np.empty(n)
    p = np.empty(n)
    Ap = np.empty(n)
    for i in range(n):
        x[i] = 0.0
        z[i] = r[i] / D[i]
        p[i] = z[i]
    rz = 0.0
    r0 = 0.0
    for i in range(n):
        rz += r[i] * z[i]
        r0 += r[i] * r[i]
    r0 = np.sqrt(r0)
    if r0 == 0.0:
        return 0
    k = 0
    for k in range(1, max_cg + 1):  # noqa: B007 (k is the iteration count returned)
        _flat_matvec(ei, ej, h, alpha_vec, comp, comp_size, gauge, p, Ap, csum)
        pAp = 0.0
        for i in range(n):
            pAp += p[i] * Ap[i]
        if not pAp > 0.0:
            break
        a = rz / pAp
        rr = 0.0
        for i in range(n):
            x[i] += a * p[i]
            r[i] -= a * Ap[i]
            rr += r[i] * r[i]
        if np.sqrt(rr) <= rtol * r0:
            break
        rz_new = 0.0
        for i in range(n):
            z[i] = r[i] / D[i]
            rz_new += r[i] * z[i]
        beta = rz_new / rz
        rz = rz_new
        for i in range(n):
            p[i] = z[i] + beta * p[i]
    return k


@njit(error_model="numpy")
def _newman_warmup(ei, ej, wy, w, comp, n_comp, theta, max_passes, switch):
    """Newman (2023) iteration for the unpenalised MLE, used to start Newton close by.

    pi_i <- sum_j w_ij pi_j / (pi_i + pi_j) / sum_j w_ji / (pi_i + pi_j), one pass over the
    edges per iteration and no exp. It converges linearly (fast on well-mixed graphs, slowly on
    sparse chains), so it stops once max |delta theta| < switch, when progress stalls, or after
    max_passes; Newton then converges quadratically from there. Returns the passes used, or
    -1 (theta untouched) if a strength left (0, inf), e.g. an item without wins.
    """
    n = theta.shape[0]
    m = ei.shape[0]
    pi = np.empty(n)
    num = np.empty(n)
    den = np.empty(n)
    new = np.empty(n)
    for i in range(n):
        pi[i] = np.exp(theta[i]) if comp[i] >= 0 else 1.0
    prev_change = np.inf
    for it in range(max_passes):
        num[:] = 0.0
        den[:] = 0.0
        for e in range(m):
            a = ei[e]
            b = ej[e]
            inv = 1.0 / (pi[a] + pi[b])
            wa = wy[e]
            wb = w[e] - wa
            num[a] += wa * pi[b] * inv
            den[a] += wb * inv
            num[b] += wb * pi[a] * inv
            den[b] += wa * inv
        for i in range(n):
            if comp[i] < 0:
                new[i] = 0.0
                continue
            v = num[i] / den[i]
            if not (v > 0.0 and v < np.inf):
                return -1
            new[i] = np.log(v)
        _centre(new, comp, n_comp)
        change = 0.0
        for i in range(n):
            if comp[i] >= 0:
                change = max(change, abs(new[i] - theta[i]))
                theta[i] = new[i]
                pi[i] = np.exp(new[i])
        if change < switch or (it >= 4 and change > 0.7 * prev_change):
            return it + 1
        prev_change = change
    return max_passes


@njit(error_model="numpy")
def _newton_flat(ei, ej, wy, w, comp, n_comp, alpha_vec, theta, max_iter, tol):
    """Damped inexact Newton (CG inner solves) for one large item set; theta in/out."""
    n = theta.shape[0]
    m = ei.shape[0]
    comp_size = np.zeros(n_comp)
    gauge = np.zeros(n_comp, np.bool_)
    for i in range(n):
        if comp[i] >= 0:
            comp_size[comp[i]] += 1.0
            if alpha_vec[i] == 0.0:
                gauge[comp[i]] = True
    csum = np.zeros(max(n_comp, 1))
    h = np.empty(m)
    h2 = np.empty(m)
    g = np.empty(n)
    g2 = np.empty(n)
    D = np.empty(n)
    D2 = np.empty(n)
    step = np.zeros(n)
    trial = np.empty(n)
    pi = np.empty(n)
    _flat_eval(ei, ej, wy, w, theta, alpha_vec, h, g, D, pi)
    g0 = 0.0
    for i in range(n):
        g0 = max(g0, abs(g[i]))
    converged = False
    max_change = np.inf
    n_iter = 0
    n_cg = 0
    max_cg = n + 50
    for it in range(max_iter):
        n_iter = it + 1
        for i in range(n):
            ci = comp[i]
            if ci < 0:
                D[i] = 1.0
            elif gauge[ci]:
                D[i] += 1.0 / comp_size[ci]
            if not D[i] > 0.0:
                D[i] = 1.0
        gmax = 0.0
        for i in range(n):
            gmax = max(gmax, abs(g[i]))
        # inexact Newton forcing term: loose solves far away, tight ones near the optimum
        rtol = min(0.1, np.sqrt(gmax / max(g0, 1e-300)))
        rtol = max(rtol, 1e-10)
        n_cg += _pcg(ei, ej, h, alpha_vec, comp, comp_size, gauge, D, g, step, rtol, max_cg, csum)
        max_change = 0.0
        slope = 0.0
        for i in range(n):
            max_change = max(max_change, abs(step[i]))
            slope += g[i] * step[i]
        if max_change < tol:
            # a full Newton step this small is within ~tol^2 of the optimum: take it and stop
            for i in range(n):
                theta[i] += step[i]
            converged = True
            break
        t = 1.0
        have_F0 = False
        F0 = 0.0
        for _ in range(_MAX_HALVINGS):
            for i in range(n):
                trial[i] = theta[i] + t * step[i]
            _flat_eval(ei, ej, wy, w, trial, alpha_vec, h2, g2, D2, pi)
            dphi = 0.0
            gg_old = 0.0
            gg_new = 0.0
            for i in range(n):
                dphi += g2[i] * step[i]
                gg_old += g[i] * g[i]
                gg_new += g2[i] * g2[i]
            if dphi >= 0.0:
                # the objective is concave, so it still rises along the whole step
                break
            if gg_new <= 0.25 * gg_old:
                # the gradient norm halved: the fast (quadratic) phase, where a full step that
                # slightly overshoots along the line is still the right step
                break
            if not have_F0:
                F0 = _flat_F(ei, ej, wy, w, theta, alpha_vec)
                have_F0 = True
            F1 = _flat_F(ei, ej, wy, w, trial, alpha_vec)
            # Armijo, with slack for rounding in the sum over edges near the optimum
            if F1 >= F0 + _ARMIJO * t * slope - 1e-13 * (1.0 + abs(F0)):
                break
            t *= 0.5
        for i in range(n):
            theta[i] = trial[i]
        h, h2 = h2, h
        g, g2 = g2, g
        D, D2 = D2, D
        # shifts within shift-invariant components leave g, h and D unchanged
        _centre_gauged(theta, comp, n_comp, gauge)
    return converged, n_iter, max_change, n_cg


def _fit_flat(ei, ej, wy, w, n_items, alpha, max_iter, tol, theta0=None):
    comp, n_comp = _components_flat(ei, ej, w, n_items)
    present = comp >= 0
    alpha_vec = np.zeros(n_items)

    def start():
        if theta0 is None:
            return np.zeros(n_items)
        return np.where(np.isfinite(theta0), theta0, 0.0)

    theta = start()

    def newton(n_max):
        return _newton_flat(ei, ej, wy, w, comp, n_comp, alpha_vec, theta, n_max, tol)

    if alpha > 0:
        ok = _finite_mle_flat(ei, ej, wy, w, n_items, comp, n_comp)
        alpha_vec[present] = alpha
        converged, n_iter, max_change, _ = newton(max_iter)
    else:
        if _newman_warmup(ei, ej, wy, w, comp, n_comp, theta, _WARMUP_PASSES, _WARMUP_SWITCH) < 0:
            theta[:] = start()
        # A converged unpenalised Newton run proves that the MLE exists (a stationary point
        # of a concave function); where it does not exist Newton keeps taking O(1) steps.
        # So the costlier graph check runs only when the first iterations do not converge.
        converged, n_iter, max_change, _ = newton(min(max_iter, _EXISTENCE_CHECK_AFTER))
        ok = np.ones(n_comp, bool)
        if not converged:
            ok = _finite_mle_flat(ei, ej, wy, w, n_items, comp, n_comp)
            if not ok.all():
                bad = np.zeros(n_items, bool)
                bad[present] = ~ok[comp[present]]
                alpha_vec[bad] = ALPHA_FALLBACK
                theta[:] = start()
            more = max_iter - n_iter
            if more > 0:
                converged, n_more, max_change, _ = newton(more)
                n_iter += n_more
    _centre(theta, comp, n_comp)
    theta[~present] = np.nan
    return (
        theta,
        bool(converged),
        int(n_iter),
        float(max_change),
        comp,
        int(n_comp),
        bool(ok.all()),
        alpha_vec,
    )


def _fisher_flat(ei, ej, w, n_items, theta, alpha_vec, comp, n_comp):
    if n_items > MAX_FISHER_ITEMS:
        raise ValueError(
            f"intervals='fisher' needs a dense {n_items} x {n_items} inverse; it is limited to "
            f"n_items <= {MAX_FISHER_ITEMS}. Use intervals='bootstrap' for larger item sets."
        )
    th = np.where(np.isfinite(theta), theta, 0.0)
    s = 1.0 / (1.0 + np.exp(-(th[ei] - th[ej])))
    he = w * s * (1.0 - s)
    H = np.zeros((n_items, n_items))
    np.add.at(H, (ei, ej), -he)
    np.add.at(H, (ej, ei), -he)
    H[np.diag_indices(n_items)] = -H.sum(axis=1) + alpha_vec
    J = np.zeros_like(H)
    for c in range(n_comp):
        idx = np.flatnonzero(comp == c)
        if np.all(alpha_vec[idx] == 0.0):
            J[np.ix_(idx, idx)] = 1.0 / idx.size
    absent = comp < 0
    H[absent, absent] = 1.0
    cov = np.linalg.inv(H + J) - J
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    se[absent] = np.nan
    return se


# ----------------------------------------------------------------------------------------------
# public wrapper
# ----------------------------------------------------------------------------------------------


def _decide(p, soft, tau):
    """Outcome in [0, 1] from probabilities: soft keeps p, hard gives 1 / 0 / 0.5 at tau."""
    if soft:
        return p
    return np.where(p > tau, 1.0, np.where(p < tau, 0.0, 0.5))


def _check_common(tau, alpha, max_iter, tol, intervals, n_boot, level):
    if not (np.isfinite(tau) and 0.0 <= tau <= 1.0):
        raise ValueError(f"tau must lie in [0, 1]; got {tau!r}")
    if not (np.isfinite(alpha) and alpha >= 0.0):
        raise ValueError(f"alpha must be a finite number >= 0; got {alpha!r}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1; got {max_iter!r}")
    if not (np.isfinite(tol) and tol > 0.0):
        raise ValueError(f"tol must be > 0; got {tol!r}")
    if intervals not in (None, "bootstrap", "fisher"):
        raise ValueError(f"intervals must be None, 'bootstrap' or 'fisher'; got {intervals!r}")
    if intervals == "bootstrap" and int(n_boot) < 2:
        raise ValueError(f"n_boot must be >= 2 for bootstrap intervals; got {n_boot!r}")
    if intervals is not None and not (0.0 < level < 1.0):
        raise ValueError(f"level must lie strictly between 0 and 1; got {level!r}")


@njit
def _scan_flat(first, second, outcome, weights, n_items):
    """One pass over flat comparisons: (problem code, first offending position) or (0, -1).

    Codes: 1 first out of range, 2 second out of range, 3 self-comparison, 4 outcome not in
    [0, 1], 5 weight negative or not finite, 6 all weights zero.
    """
    has_w = weights.shape[0] > 0
    any_positive = not has_w
    for k in range(first.shape[0]):
        a = first[k]
        b = second[k]
        if a < 0 or a >= n_items:
            return 1, k
        if b < 0 or b >= n_items:
            return 2, k
        if a == b:
            return 3, k
        y = outcome[k]
        if not (y >= 0.0 and y <= 1.0):
            return 4, k
        if has_w:
            wk = weights[k]
            if not (wk >= 0.0 and wk < np.inf):
                return 5, k
            if wk > 0.0:
                any_positive = True
    if not any_positive:
        return 6, -1
    return 0, -1


def check_flat(first, second, outcome, n_items, weights=None, *, name="comparisons"):
    """Validate flat comparison arrays; returns (first, second, outcome, weights, n_items).

    ``first`` and ``second`` are integer item indices, ``outcome`` floats in [0, 1],
    ``weights`` non-negative floats (default 1). Raises ValueError naming the problem.
    """
    if first is None or second is None or outcome is None:
        raise ValueError(f"{name}: first, second and outcome are all required")
    first = np.asarray(first)
    second = np.asarray(second)
    outcome = np.asarray(outcome, dtype=np.float64)
    for label, arr in (("first", first), ("second", second), ("outcome", outcome)):
        if arr.ndim != 1:
            raise ValueError(f"{name}: {label} must be 1-D; got shape {arr.shape}")
    if not (len(first) == len(second) == len(outcome)):
        raise ValueError(
            f"{name}: first, second and outcome must have the same length; got "
            f"{len(first)}, {len(second)}, {len(outcome)}"
        )
    if len(first) == 0:
        raise ValueError(f"{name}: no comparisons (empty arrays)")
    for label, arr in (("first", first), ("second", second)):
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(
                f"{name}: {label} must hold integer item indices; got dtype {arr.dtype}"
            )
    if n_items is None:
        n_items = int(max(first.max(), second.max())) + 1
    if int(n_items) != n_items or n_items < 2:
        raise ValueError(f"{name}: n_items must be an integer >= 2; got {n_items!r}")
    n_items = int(n_items)
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != outcome.shape:
            raise ValueError(
                f"{name}: weights must have the same length as outcome; got shape "
                f"{weights.shape} for {len(outcome)} comparisons"
            )
    code, k = _scan_flat(
        first, second, outcome, np.empty(0) if weights is None else weights, n_items
    )
    if code == 1 or code == 2:
        label, arr = ("first", first) if code == 1 else ("second", second)
        raise ValueError(
            f"{name}: {label}[{k}] = {int(arr[k])} is out of range for n_items = {n_items}"
        )
    if code == 3:
        raise ValueError(f"{name}: comparison {k} compares item {int(first[k])} with itself")
    if code == 4:
        n_bad = int((~np.isfinite(outcome) | (outcome < 0.0) | (outcome > 1.0)).sum())
        raise ValueError(
            f"{name}: outcome must be finite and lie in [0, 1]; outcome[{k}] = {outcome[k]!r} "
            f"({n_bad} bad value(s)); drop unparsed comparisons before ranking"
        )
    if code == 5:
        raise ValueError(f"{name}: weights must be finite and >= 0; weights[{k}] = {weights[k]!r}")
    if weights is None:
        weights = np.ones(len(first))
    elif code == 6:
        raise ValueError(f"{name}: all weights are 0, nothing to fit")
    idx_dtype = np.int32 if n_items < 2**31 - 1 else np.int64
    return (
        np.ascontiguousarray(first, dtype=idx_dtype),
        np.ascontiguousarray(second, dtype=idx_dtype),
        np.ascontiguousarray(outcome),
        np.ascontiguousarray(weights),
        n_items,
    )


def _percentile_bounds(samples, level):
    q = 100.0 * (1.0 - level) / 2.0
    with warnings.catch_warnings():
        # items absent from every replicate give all-NaN slices: NaN bounds are intended
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.nanpercentile(samples, q, axis=0)
        hi = np.nanpercentile(samples, 100.0 - q, axis=0)
    return lo, hi


def _result(theta, fitted, *, alpha, per_context, method, intervals, level, n_boot, se, replicates):
    """The BTResult of a fit, with Fisher or bootstrap intervals when asked.

    ``fitted`` is (converged, n_iter, max_change, component, n_components, finite_mle,
    alpha used); ``se()`` gives the Fisher standard errors and ``replicates()`` the
    (n_boot, ...) refitted scores, each called only for its kind of interval.
    """
    converged, n_iter, max_change, comp, n_comp, fin, alpha_used = fitted
    lower = upper = None
    if intervals == "fisher":
        z = statistics.NormalDist().inv_cdf(0.5 + level / 2.0)
        half = z * se()
        lower, upper = theta - half, theta + half
        method += f"; fisher intervals (level {level})"
    elif intervals == "bootstrap":
        lower, upper = _percentile_bounds(replicates(), level)
        method += f"; bootstrap intervals ({n_boot} replicates, level {level})"
    return BTResult(
        scores=theta,
        converged=converged,
        n_iter=n_iter,
        max_change=max_change,
        lower=lower,
        upper=upper,
        finite_mle=fin,
        component=comp,
        n_components=n_comp,
        alpha=alpha_used,
        method=method,
        notes=_notes(n_comp, fin, converged, alpha, per_context),
    )


def bradley_terry(
    P=None,
    *,
    first=None,
    second=None,
    outcome=None,
    n_items=None,
    weights=None,
    soft=True,
    tau=0.5,
    alpha=0.0,
    max_iter=10_000,
    tol=1e-8,
    intervals=None,
    n_boot=200,
    level=0.95,
    random_state=None,
) -> BTResult:
    """Bradley–Terry maximum-likelihood scores, per context of P or for one large item set.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N), optional
        P[c, i, j] = probability that i (shown first) beats j (shown second); NaN where not
        compared. Each finite off-diagonal entry is one comparison of i with j.
    first, second : array_like of int, optional
        Flat input instead of P: item indices of the first- and second-shown candidate.
    outcome : array_like of float, optional
        Flat input: 1 = first wins, 0 = second wins, 0.5 = tie, or a soft probability.
    n_items : int, optional
        Flat input: number of items (default: largest index + 1).
    weights : array_like of float, optional
        Non-negative weight per comparison (flat: shape of outcome; P: shape of P).
    soft : bool, default True
        True: fractional outcomes y = p. False: hard decisions y = 1[p > tau], p == tau
        counts as a tie (half a win each).
    tau : float, default 0.5
        Decision threshold for ``soft=False``.
    alpha : float, default 0.0
        Gaussian prior precision (ridge): maximises log-lik - alpha/2 ||theta||^2. With 0 the
        exact MLE; see the module docstring for components without a finite MLE.
    max_iter : int, default 10_000
        Most Newton iterations (convergence normally takes 5-15).
    tol : float, default 1e-8
        Stop when the Newton step has max |delta theta| < tol.
    intervals : {None, "bootstrap", "fisher"}, default None
        "bootstrap": percentile intervals from ``n_boot`` refits on comparisons resampled with
        replacement (per context for P), seeded by ``random_state``. "fisher": theta +/- z * se
        with se from the inverse Fisher information under the centring constraint
        (Moore-Penrose inverse of the Hessian); flat input limited to
        ``MAX_FISHER_ITEMS`` items.
    n_boot : int, default 200
        Bootstrap replicates.
    level : float, default 0.95
        Interval coverage.
    random_state : None, int or numpy Generator
        Seed for the bootstrap.

    Returns
    -------
    BTResult
        Scores (log-strengths, mean 0 per connected component), convergence and flags.

    Raises
    ------
    ValueError
        Bad shapes, values outside [0, 1], N < 2, empty or mismatched flat arrays,
        out-of-range indices, bad options. (A context of P without any comparison is not an
        error: its scores are NaN.)
    """
    _check_common(tau, alpha, max_iter, tol, intervals, n_boot, level)
    flat_given = any(x is not None for x in (first, second, outcome))
    if P is not None and flat_given:
        raise ValueError("give either P or the flat arrays (first, second, outcome), not both")
    if P is None and not flat_given:
        raise ValueError("no comparisons given: pass P or first/second/outcome")
    if P is not None:
        return _bt_P(
            P,
            weights,
            soft,
            tau,
            alpha,
            int(max_iter),
            float(tol),
            intervals,
            int(n_boot),
            level,
            random_state,
        )
    return _bt_flat(
        first,
        second,
        outcome,
        n_items,
        weights,
        soft,
        tau,
        alpha,
        int(max_iter),
        float(tol),
        intervals,
        int(n_boot),
        level,
        random_state,
    )


def _win_weights(Y, Om):
    """W[c, i, j] = win weight of i over j from ordered comparisons (both orientations)."""
    Yz = np.where(Om > 0, Y, 0.0)
    return Om * Yz + np.swapaxes(Om * (1.0 - Yz), 1, 2)


def _notes(n_components, finite, converged, alpha, per_context):
    notes = []

    def where(idx):
        return f"context(s) {idx[:10].tolist()}" if per_context else "the item set"

    multi = np.flatnonzero(np.atleast_1d(n_components) > 1)
    if multi.size:
        notes.append(
            f"{where(multi)}: comparison graph has several connected components; scores are "
            "centred per component and not comparable across components"
        )
    nf = np.flatnonzero(~np.atleast_1d(finite))
    if nf.size and alpha == 0:
        notes.append(
            f"{where(nf)}: no finite MLE (some items never lose or never win within their "
            f"component); those components were fitted with alpha = {ALPHA_FALLBACK}"
        )
    nc = np.flatnonzero(~np.atleast_1d(converged))
    if nc.size:
        notes.append(f"{where(nc)}: Newton iteration did not converge within max_iter")
    return tuple(notes)


def _bt_P(P, weights, soft, tau, alpha, max_iter, tol, intervals, n_boot, level, random_state):
    arr = as_P(P)
    n_ctx, n, _ = arr.shape
    finite = np.isfinite(arr)
    if weights is None:
        Om = finite.astype(np.float64)
    else:
        Om = np.asarray(weights, dtype=np.float64)
        if Om.ndim == 2:
            Om = Om[None]
        if Om.shape != arr.shape:
            raise ValueError(
                f"weights for P must have P's shape {arr.shape}; got {np.shape(weights)}"
            )
        bad = finite & (~np.isfinite(Om) | (Om < 0))
        if bad.any():
            c, i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"weights must be finite and >= 0; weights[{c}, {i}, {j}] = {Om[c, i, j]!r}"
            )
        Om = np.where(finite, Om, 0.0)
    Y = np.where(finite, _decide(np.where(finite, arr, 0.5), soft, tau), 0.0)
    W = np.ascontiguousarray(_win_weights(Y, Om))
    theta = np.zeros((n_ctx, n))
    fitted = _fit_batch(W, float(alpha), max_iter, tol, theta, False)
    converged, _, _, comp, n_comp, _, alpha_used = fitted
    if not converged.all():
        warnings.warn(
            f"bradley_terry: context(s) {np.flatnonzero(~converged)[:10].tolist()} did not "
            f"converge in {max_iter} iterations",
            RuntimeWarning,
            stacklevel=3,
        )

    def replicates():
        rng = np.random.default_rng(random_state)
        # resample each context's present comparisons with replacement, as multinomial
        # counts on the cells (ordered pairs) of P
        flat_cells = [np.flatnonzero(Om[c] > 0) for c in range(n_ctx)]
        sizes = np.array([cells.size for cells in flat_cells])
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        all_cells = np.concatenate([cells + c * n * n for c, cells in enumerate(flat_cells)])
        cell_w = np.concatenate([Om[c].ravel()[cells] for c, cells in enumerate(flat_cells)])
        ctx_of = np.repeat(np.arange(n_ctx), sizes)
        samples = np.empty((n_boot, n_ctx, n))
        for b in range(n_boot):
            pick = offsets[ctx_of] + np.floor(rng.random(ctx_of.size) * sizes[ctx_of]).astype(
                np.int64
            )
            counts = np.bincount(pick, minlength=all_cells.size).astype(np.float64)
            Om_b = np.zeros(n_ctx * n * n)
            Om_b[all_cells] = counts * cell_w
            W_b = np.ascontiguousarray(_win_weights(Y, Om_b.reshape(n_ctx, n, n)))
            th_b = theta.copy()
            _fit_batch(W_b, float(alpha), max_iter, tol, th_b, True)
            samples[b] = th_b
        return samples

    res = _result(
        theta,
        fitted,
        alpha=alpha,
        per_context=True,
        method="newton-cholesky per context",
        intervals=intervals,
        level=level,
        n_boot=n_boot,
        se=lambda: _fisher_batch(W, theta, alpha_used, comp, n_comp),
        replicates=replicates,
    )
    empty = np.flatnonzero(~(Om > 0).any(axis=(1, 2)))
    if empty.size:
        note = f"context(s) {empty[:10].tolist()}: no comparison at all, so their scores are NaN"
        res = dataclasses.replace(res, notes=(*res.notes, note))
    return res


def _bt_flat(
    first,
    second,
    outcome,
    n_items,
    weights,
    soft,
    tau,
    alpha,
    max_iter,
    tol,
    intervals,
    n_boot,
    level,
    random_state,
):
    ei, ej, out, w, n_items = check_flat(first, second, outcome, n_items, weights)
    y = _decide(out, soft, tau)
    wy = w * y
    theta, *fitted = _fit_flat(ei, ej, wy, w, n_items, float(alpha), max_iter, tol)
    converged, _, _, comp, n_comp, _, alpha_vec = fitted
    if not converged:
        warnings.warn(
            f"bradley_terry: did not converge in {max_iter} iterations",
            RuntimeWarning,
            stacklevel=3,
        )

    def replicates():
        rng = np.random.default_rng(random_state)
        m = ei.size
        samples = np.empty((n_boot, n_items))
        for b in range(n_boot):
            counts = np.bincount(rng.integers(0, m, m), minlength=m).astype(np.float64)
            samples[b] = _fit_flat(
                ei, ej, wy * counts, w * counts, n_items, float(alpha), max_iter, tol, theta0=theta
            )[0]
        return samples

    return _result(
        theta,
        fitted,
        alpha=alpha,
        per_context=False,
        method="newman warm-up + newton-cg (jacobi-preconditioned conjugate gradient)",
        intervals=intervals,
        level=level,
        n_boot=n_boot,
        se=lambda: _fisher_flat(ei, ej, w, n_items, theta, alpha_vec, comp, n_comp),
        replicates=replicates,
    )

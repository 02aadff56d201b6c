"""Bradley–Terry for one large item set given as flat comparisons: sparse inexact Newton.

No dense n_items x n_items matrix is formed; every step is a pass over the edge list. A few
passes of Newman's (2023) iteration get close to the MLE, then a damped inexact Newton
iteration takes over whose Hessian (a weighted graph Laplacian) is solved by
Jacobi-preconditioned conjugate gradient, damped by the line search of
``ranking.bradley_terry.newton``. Components, the MLE-existence check of the beats graph and the
fallback ridge follow the same rules as the dense solver (see ``ranking.bradley_terry``).

The kernels are serial on purpose: single passes over the edge list are memory bound, two
threads gained only ~20 % on an idle 2-core machine and lost badly when the cores were shared
(threads waiting at every barrier).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ranking._core.jit import njit

from .newton import (
    RIDGE_FALLBACK,
    centre,
    centre_gauged,
    gauge,
    line_search,
    log_sigmoid,
    register,
    step_size,
)

__all__ = ["FlatProblem", "fit_flat"]

# Newton iterations tried before the MLE-existence check of the beats graph.
_EXISTENCE_CHECK_AFTER = 30
# Newman warm-up passes at most, and the max |delta theta| where Newton takes over.
_WARMUP_PASSES = 30
_WARMUP_SWITCH = 1e-6

#: What the line search evaluates: the edges (first, second, win weight, weight), the ridge
#: per item, the gradient g at the current point, and buffers for the curvature h, gradient g
#: and Hessian diagonal D at the trial point (kept for the next step when it is accepted) and
#: for the strengths pi.
FlatProblem = namedtuple("FlatProblem", "ei ej wy w ridge_vec g h_trial g_trial D_trial pi")


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


@njit(error_model="numpy")
def _flat_eval(ei, ej, wy, w, theta, ridge_vec, h, g, D, pi):
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
        g[i] = -ridge_vec[i] * theta[i]
        D[i] = ridge_vec[i]
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
def _flat_F(ei, ej, wy, w, theta, ridge_vec):
    F = 0.0
    for e in range(ei.shape[0]):
        d = theta[ei[e]] - theta[ej[e]]
        ls = log_sigmoid(d)
        F += wy[e] * ls + (w[e] - wy[e]) * (ls - d)
    for i in range(theta.shape[0]):
        F -= 0.5 * ridge_vec[i] * theta[i] * theta[i]
    return F


@njit(error_model="numpy")
def _flat_matvec(ei, ej, h, ridge_vec, comp, comp_size, gauged, v, out, csum):
    """out = (H + ridge + gauge) v for the Laplacian H with edge weights h."""
    n = v.shape[0]
    csum[:] = 0.0
    for i in range(n):
        out[i] = ridge_vec[i] * v[i]
        ci = comp[i]
        if ci >= 0 and gauged[ci]:
            csum[ci] += v[i]
    for e in range(ei.shape[0]):
        x = ei[e]
        y = ej[e]
        t = h[e] * (v[x] - v[y])
        out[x] += t
        out[y] -= t
    for i in range(n):
        ci = comp[i]
        if ci >= 0 and gauged[ci]:
            out[i] += csum[ci] / comp_size[ci]


@njit(error_model="numpy")
def _pcg(ei, ej, h, ridge_vec, comp, comp_size, gauged, D, g, x, rtol, max_cg, csum):
    """Jacobi-preconditioned CG for (H + ridge + gauge) x = g from x = 0."""
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
        _flat_matvec(ei, ej, h, ridge_vec, comp, comp_size, gauged, p, Ap, csum)
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
        centre(new, comp, n_comp)
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


def _flat_objective(problem, x):
    return _flat_F(problem.ei, problem.ej, problem.wy, problem.w, x, problem.ridge_vec)


def _flat_accept_early(problem, trial, step):
    """Accept on the gradient at the trial point (kept in the problem's trial buffers).

    The objective is concave, so it still rises along the whole step when the directional
    derivative there is >= 0; and once the gradient norm has halved the iteration is in its
    fast (quadratic) phase, where a full step that slightly overshoots along the line is
    still the right step. Only otherwise is the log-likelihood (a log per edge) computed.
    """
    g_new = problem.g_trial
    _flat_eval(
        problem.ei,
        problem.ej,
        problem.wy,
        problem.w,
        trial,
        problem.ridge_vec,
        problem.h_trial,
        g_new,
        problem.D_trial,
        problem.pi,
    )
    g = problem.g
    dphi = 0.0
    gg_old = 0.0
    gg_new = 0.0
    for i in range(g.shape[0]):
        dphi += g_new[i] * step[i]
        gg_old += g[i] * g[i]
        gg_new += g_new[i] * g_new[i]
    return dphi >= 0.0 or gg_new <= 0.25 * gg_old


register(FlatProblem, _flat_objective, _flat_accept_early)


@njit(error_model="numpy")
def _newton_flat(ei, ej, wy, w, comp, n_comp, ridge_vec, theta, max_iter, tol):
    """Damped inexact Newton (CG inner solves) for one large item set; theta in/out."""
    n = theta.shape[0]
    m = ei.shape[0]
    comp_size, gauged = gauge(comp, n_comp, ridge_vec)
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
    _flat_eval(ei, ej, wy, w, theta, ridge_vec, h, g, D, pi)
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
            elif gauged[ci]:
                D[i] += 1.0 / comp_size[ci]
            if not D[i] > 0.0:
                D[i] = 1.0
        gmax = 0.0
        for i in range(n):
            gmax = max(gmax, abs(g[i]))
        # inexact Newton forcing term: loose solves far away, tight ones near the optimum
        rtol = min(0.1, np.sqrt(gmax / max(g0, 1e-300)))
        rtol = max(rtol, 1e-10)
        n_cg += _pcg(ei, ej, h, ridge_vec, comp, comp_size, gauged, D, g, step, rtol, max_cg, csum)
        max_change, slope = step_size(g, step)
        if max_change < tol:
            # a full Newton step this small is within ~tol^2 of the optimum: take it and stop
            for i in range(n):
                theta[i] += step[i]
            converged = True
            break
        problem = FlatProblem(ei, ej, wy, w, ridge_vec, g, h2, g2, D2, pi)
        line_search(problem, theta, step, slope, 0.0, False, trial)
        for i in range(n):
            theta[i] = trial[i]
        # the trial point's curvature, gradient and diagonal are the new point's
        h, h2 = h2, h
        g, g2 = g2, g
        D, D2 = D2, D
        # shifts within shift-invariant components leave g, h and D unchanged
        centre_gauged(theta, comp, n_comp, gauged)
    return converged, n_iter, max_change, n_cg


def fit_flat(ei, ej, wy, w, n_items, ridge, max_iter, tol, theta0=None):
    """Fit one item set from checked flat arrays; optionally warm-started from ``theta0``.

    ``wy`` is the win weight of the first item of every comparison and ``w`` its weight.
    Returns (theta, converged, n_iter, max_change, component, n_components, finite_mle,
    ridge per item).
    """
    comp, n_comp = _components_flat(ei, ej, w, n_items)
    present = comp >= 0
    ridge_vec = np.zeros(n_items)

    def start():
        if theta0 is None:
            return np.zeros(n_items)
        return np.where(np.isfinite(theta0), theta0, 0.0)

    theta = start()

    def newton(n_max):
        return _newton_flat(ei, ej, wy, w, comp, n_comp, ridge_vec, theta, n_max, tol)

    if ridge > 0:
        ok = _finite_mle_flat(ei, ej, wy, w, n_items, comp, n_comp)
        ridge_vec[present] = ridge
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
                ridge_vec[bad] = RIDGE_FALLBACK
                theta[:] = start()
            more = max_iter - n_iter
            if more > 0:
                converged, n_more, max_change, _ = newton(more)
                n_iter += n_more
    centre(theta, comp, n_comp)
    theta[~present] = np.nan
    return (
        theta,
        bool(converged),
        int(n_iter),
        float(max_change),
        comp,
        int(n_comp),
        bool(ok.all()),
        ridge_vec,
    )

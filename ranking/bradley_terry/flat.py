"""Bradley–Terry for one item set given as flat comparisons.

The connected components of the comparison graph (``ranking.bradley_terry.graph``) are
independent problems. When none has more than ``STACK_MAX_ITEMS`` items, every component is
one dense problem of a stack fitted in numpy (``ranking.bradley_terry.stacked``), components
of similar size together. Otherwise the item set takes the compiled sparse solver of this
module: no dense n_items x n_items matrix is formed and every step is a pass over the edge
list. A few passes of Newman's (2023) iteration get close to the MLE, then a damped inexact
Newton iteration takes over whose Hessian (a weighted graph Laplacian) is solved by
Jacobi-preconditioned conjugate gradient, damped by the line search of
``ranking.bradley_terry.newton``. Components, the MLE-existence check of the beats graph and the
fallback ridge follow the same rules either way (see ``ranking.bradley_terry``).

The compiled solver is kept for large components: on 2,000 and 20,000 items (one component)
a numpy Newton-CG took 3 to 5 times as long, seconds at the larger size; it is compiled only
when such an item set comes (no bundled benchmark's page has one). Its kernels are serial on
purpose: single passes over the edge list are memory bound, two threads gained only ~20 % on
an idle 2-core machine and lost badly when the cores were shared (threads waiting at every
barrier).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ranking._core.jit import njit

from .graph import centred, components, finite_mle
from .newton import (
    RIDGE_FALLBACK,
    centre,
    centre_gauged,
    gauge,
    line_search,
    log_sigmoid,
    register,
    stop_step,
)
from .stacked import fit_stack

__all__ = ["FlatProblem", "STACK_MAX_ITEMS", "fit_flat"]

#: Components up to this many items are fitted as dense problems in numpy; an item set with a
#: larger one takes the compiled sparse solver.
STACK_MAX_ITEMS = 256
# Newton iterations of the sparse solver tried before the MLE-existence check.
_EXISTENCE_CHECK_AFTER = 30
# Newman warm-up passes at most, and the max |delta theta| where Newton takes over.
_WARMUP_PASSES = 30
_WARMUP_SWITCH = 1e-6

#: What the line search evaluates: the edges (first, second, win weight, weight), the ridge
#: per item, the gradient g at the current point, and buffers for the curvature h, gradient g
#: and Hessian diagonal D at the trial point (kept for the next step when it is accepted) and
#: for the strengths pi.
FlatProblem = namedtuple("FlatProblem", "ei ej wy w ridge_vec g h_trial g_trial D_trial pi")


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
        max_change, slope, converged = stop_step(g, step, theta, tol)
        if converged:
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

    The components of the comparison graph are independent problems. When none has more than
    ``STACK_MAX_ITEMS`` items (the systems of a leaderboard, an arena folded into its pairs,
    the candidates of many contexts) each component becomes one dense problem of a stack
    fitted in numpy (``ranking.bradley_terry.stacked``): nothing to compile. Larger components
    take the compiled sparse Newton-CG of this module. ``converged`` and ``finite_mle`` hold
    for every component; ``n_iter`` and ``max_change`` are the largest over them.
    """
    ei = np.asarray(ei)
    ej = np.asarray(ej)
    comp, n_comp = components(ei, ej, w, n_items)
    present = comp >= 0
    theta = np.zeros(n_items) if theta0 is None else np.where(np.isfinite(theta0), theta0, 0.0)
    if n_comp == 0:
        theta[:] = np.nan
        return theta, True, 0, 0.0, comp, 0, True, np.zeros(n_items)
    size = np.bincount(comp[present], minlength=n_comp)
    if size.max() <= STACK_MAX_ITEMS:
        fitted = _fit_stacked(ei, ej, wy, w, comp, n_comp, size, ridge, max_iter, tol, theta,
                              theta0 is not None)  # fmt: skip
    else:
        fitted = _fit_sparse(ei, ej, wy, w, comp, n_comp, ridge, max_iter, tol, theta)
    converged, n_iter, max_change, ok, ridge_vec = fitted
    theta = centred(theta, comp, n_comp)
    theta[~present] = np.nan
    return (
        theta,
        bool(converged),
        int(n_iter),
        float(max_change),
        comp,
        int(n_comp),
        bool(ok),
        ridge_vec,
    )


def solver(comp):
    """What :func:`fit_flat` ran for these components (the ``method`` of a result)."""
    size = np.bincount(comp[comp >= 0])
    if size.size and size.max() > STACK_MAX_ITEMS:
        return "newman warm-up + newton-cg (jacobi-preconditioned conjugate gradient)"
    return "newton-cholesky per component"


def _fit_stacked(ei, ej, wy, w, comp, n_comp, size, ridge, max_iter, tol, theta, warm):
    """Every component as one dense problem, components of similar size stacked together
    (padded to a common width); theta in/out."""
    fitted = fit_rows(ei, ej, wy[None], w[None], comp, n_comp, size, ridge, max_iter, tol,
                      theta[None], warm)  # fmt: skip
    theta[:] = fitted[0][0]
    return (*fitted[1:5], fitted[5][0])


def fit_rows(ei, ej, wy, w, comp, n_comp, size, ridge, max_iter, tol, theta, warm):
    """Fits of the same edges under R sets of weights (a bootstrap's replicates): ``wy`` and
    ``w`` (R, m), ``theta`` (R, n_items) the starting points.

    ``comp`` are the components of the edges (with any weight): every (row, component) is one
    dense problem of a stack (``ranking.bradley_terry.stacked``), which finds the row's own
    components inside it (a row's graph is a subgraph). Returns (theta (R, n_items) centred
    per component of each row, NaN where an item has no comparison in the row; converged
    and finite MLE of every problem; the largest n_iter and max_change; ridge per item
    (R, n_items)).
    """
    R, n_items = theta.shape
    items = np.flatnonzero(comp >= 0)
    items = items[np.argsort(comp[items], kind="stable")]
    # position of every item inside its component, in item order
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    pos = np.full(n_items, -1, np.int64)
    pos[items] = np.arange(items.size) - start[comp[items]]
    # stacked with components of similar size: widths 2, 4, ..., 32, then multiples of 16
    width = np.maximum(2, 1 << np.ceil(np.log2(np.maximum(size, 1))).astype(np.int64))
    width = np.where(size > 32, -(-size // 16) * 16, width)
    out = np.full((R, n_items), np.nan)
    ridge_vec = np.zeros((R, n_items))
    converged, n_iter, max_change, ok = True, 0, 0.0, True
    for S in np.unique(width):
        group = np.flatnonzero(width == S)  # the components of this size class
        G = group.size
        slot = np.full(n_comp, -1, np.int64)
        slot[group] = np.arange(G)
        e = np.flatnonzero((comp[ei] >= 0) & (slot[np.maximum(comp[ei], 0)] >= 0))
        every = e.size == ei.size
        ab = slot[comp[ei[e]]] * S * S + pos[ei[e]] * S + pos[ej[e]]
        member = items[slot[comp[items]] >= 0]
        at = slot[comp[member]], pos[member]
        # rows per stack: about 2**20 matrix entries
        chunk = max(1, (1 << 20) // (G * S * S))
        for r0 in range(0, R, chunk):
            rows = slice(r0, min(R, r0 + chunk))
            n_rows = rows.stop - rows.start
            cells = n_rows * G * S * S
            index = ((np.arange(n_rows) * (G * S * S))[:, None] + ab).ravel()
            wins = wy[rows] if every else wy[rows][:, e]
            both = w[rows] if every else w[rows][:, e]
            W = np.bincount(index, wins.ravel(), cells).reshape(-1, S, S)
            losses = np.bincount(index, (both - wins).ravel(), cells).reshape(-1, S, S)
            W += np.swapaxes(losses, 1, 2)  # the losses of i to j are wins of j over i
            th = np.zeros((n_rows, G, S))
            th[:, at[0], at[1]] = theta[rows][:, member]
            th = th.reshape(-1, S)
            res = fit_stack(W, ridge, max_iter, tol, th, warm)
            out[rows, member] = th.reshape(n_rows, G, S)[:, at[0], at[1]]
            rv = res[6].reshape(n_rows, G, S)
            ridge_vec[rows, member] = rv[:, at[0], at[1]]
            converged = converged and bool(res[0].all())
            n_iter = max(n_iter, int(res[1].max()))
            max_change = max(max_change, float(res[2].max()))
            ok = ok and bool(res[5].all())
    return out, converged, n_iter, max_change, ok, ridge_vec


def _fit_sparse(ei, ej, wy, w, comp, n_comp, ridge, max_iter, tol, theta):
    """The compiled sparse Newton-CG on the edges (one array type: int64, float64)."""
    ei = np.ascontiguousarray(ei, dtype=np.int64)
    ej = np.ascontiguousarray(ej, dtype=np.int64)
    wy = np.ascontiguousarray(wy, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    n_items = theta.size
    present = comp >= 0
    ridge_vec = np.zeros(n_items)
    start = theta.copy()

    def newton(n_max):
        return _newton_flat(ei, ej, wy, w, comp, n_comp, ridge_vec, theta, n_max, tol)

    if ridge > 0:
        ok = finite_mle(ei, ej, wy, w, n_items, comp, n_comp)
        ridge_vec[present] = ridge
        converged, n_iter, max_change, _ = newton(max_iter)
    else:
        if _newman_warmup(ei, ej, wy, w, comp, n_comp, theta, _WARMUP_PASSES, _WARMUP_SWITCH) < 0:
            theta[:] = start
        # A converged unpenalised Newton run proves that the MLE exists (a stationary point
        # of a concave function); where it does not exist Newton keeps taking O(1) steps.
        # So the graph check runs only when the first iterations do not converge.
        converged, n_iter, max_change, _ = newton(min(max_iter, _EXISTENCE_CHECK_AFTER))
        ok = np.ones(n_comp, bool)
        if not converged:
            ok = finite_mle(ei, ej, wy, w, n_items, comp, n_comp)
            if not ok.all():
                bad = np.zeros(n_items, bool)
                bad[present] = ~ok[comp[present]]
                ridge_vec[bad] = RIDGE_FALLBACK
                theta[:] = start
            more = max_iter - n_iter
            if more > 0:
                converged, n_more, max_change, _ = newton(more)
                n_iter += n_more
    return converged, n_iter, max_change, bool(ok.all()), ridge_vec

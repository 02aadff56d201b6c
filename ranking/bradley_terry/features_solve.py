"""The joint sparse Newton solver behind ``ranking.bradley_terry.features`` (Bradley–Terry with
covariates).

Model: logit P(first beats second) = theta_first - theta_second + x @ beta, where x is the
comparison's row of covariates. The penalised log-likelihood

    F(theta, beta) = sum_c w_c [y_c log s(d_c) + (1 - y_c) log s(-d_c)]
                     - 1/2 sum_i ridge_i theta_i^2 - 1/2 ridge_beta ||beta||^2

is concave; :func:`_newton` maximises it by damped Newton steps on (theta, beta) jointly,
damped by the shared line search of ``ranking.bradley_terry.newton``. The negative Hessian is

    [[L + diag(ridge), B], [B^T, C]],  L = A^T diag(h) A,  B = A^T diag(h) X,  C = X^T diag(h) X,

with A the (comparisons x items) incidence matrix (+1 first, -1 second) and h = w s (1 - s).
L is a sparse weighted graph Laplacian (block diagonal over components: one per context when
the items are (context, candidate) pairs), so every step solves it (:class:`_System`) with one
sparse LU (``scipy.sparse.linalg.splu``; dense for small item sets) on the k + 1 right-hand
sides [g_theta, B], then the k x k Schur complement S = C - B^T L^-1 B for the covariates. The
gauge of every shift-invariant component (no ridge on its items) is fixed by grounding one
item (its row and column replaced by the identity): the solution differs from the
pseudo-inverse one by a constant per component, removed by centring.
:func:`_identifiable` says which covariates can be estimated next to the item scores.

Private to ``ranking.bradley_terry.features`` (the fit, covariance and bootstrap live there).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from .graph import gauge
from .newton import backtrack

# Item sets up to this size solve the theta block densely (scipy.sparse costs more there).
_DENSE_MAX = 200
# Relative pivot below which a covariate counts as not identifiable.
_IDENT_TOL = 1e-9


def _feat_eval(ei, ej, wy, w, X, x, ridge_vec, ridge_beta, h=None, r=None):
    """F at x = (theta, beta); with the buffers ``h`` and ``r`` also the per-edge curvature
    h = w s (1 - s) and residual r = wy - w s, written into them."""
    n = ridge_vec.shape[0]
    d = x[ei] - x[ej] + X @ x[n:]
    e = np.exp(-np.abs(d))
    log_s = np.minimum(d, 0.0) - np.log1p(e)  # log sigmoid(d), no overflow
    F = (wy * log_s + (w - wy) * (log_s - d)).sum()
    F -= 0.5 * (ridge_vec * x[:n] * x[:n]).sum() + 0.5 * ridge_beta * (x[n:] * x[n:]).sum()
    if h is not None:
        s = np.where(d >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))
        h[:] = w * s * (1.0 - s)
        r[:] = wy - w * s
    return float(F)


class _System:
    """The fixed structure of the Newton systems: incidence, Laplacian pattern, grounding."""

    def __init__(self, ei, ej, n, comp, n_comp, ridge_vec):
        m = ei.size
        self.n = n
        self.AT = scipy.sparse.csr_matrix(
            (np.r_[np.ones(m), -np.ones(m)], (np.r_[ei, ej], np.r_[np.arange(m), np.arange(m)])),
            shape=(n, m),
        )
        comp_size, gauged = gauge(comp, n_comp, ridge_vec)
        self.comp_size, self.gauged = comp_size, gauged
        # one grounded item per shift-invariant component; items never compared are fixed too
        fixed = comp < 0
        order = np.flatnonzero(comp >= 0)
        labels, first_of = np.unique(comp[order], return_index=True)
        fixed[order[first_of[gauged[labels]]]] = True
        self.fixed = fixed
        self.diag = np.where(fixed, 1.0, ridge_vec)
        rows = np.r_[ei, ej, ei, ej]
        cols = np.r_[ej, ei, ei, ej]
        keep = ~(fixed[rows] | fixed[cols])
        self.sign = np.r_[-np.ones(2 * m), np.ones(2 * m)] * keep
        self.dense = n <= _DENSE_MAX
        if self.dense:
            self.slot = rows * n + cols
            self.dslot = np.arange(n) * (n + 1)
        else:
            key = np.r_[rows * n + cols, np.arange(n) * (n + 1)]
            uniq, inv = np.unique(key, return_inverse=True)
            self.slot, self.dslot = inv[: 4 * m], inv[4 * m :]
            r = uniq // n
            self.indptr = np.searchsorted(r, np.arange(n + 1))
            self.indices = (uniq % n).astype(np.int32)
            self.nnz = uniq.size

    def solve(self, h, rhs):
        """Solve (L(h) + diag) Z = rhs (rows of fixed items: identity, rhs zeroed)."""
        n = self.n
        vals = np.tile(h, 4) * self.sign
        rhs = np.where(self.fixed[:, None], 0.0, rhs)
        if self.dense:
            Lm = np.bincount(self.slot, vals, minlength=n * n)
            Lm[self.dslot] += self.diag
            return scipy.linalg.solve(
                Lm.reshape(n, n), rhs, assume_a="pos", check_finite=False, overwrite_a=True
            )
        data = np.bincount(self.slot, vals, minlength=self.nnz)
        data[self.dslot] += self.diag
        # symmetric, so CSR read as CSC is the same matrix
        Lm = scipy.sparse.csc_matrix((data, self.indices, self.indptr), shape=(n, n))
        lu = scipy.sparse.linalg.splu(Lm, permc_spec="COLAMD", options={"SymmetricMode": True})
        return lu.solve(rhs)


def _newton(ei, ej, wy, w, X, x, system, ridge_vec, ridge_beta, max_iter, tol):
    """Damped joint Newton from x = (theta, beta) (in/out); (converged, n_iter, max_change)."""
    n, k = system.n, X.shape[1]
    m = ei.size
    h = np.empty(m)
    r = np.empty(m)
    F = _feat_eval(ei, ej, wy, w, X, x, ridge_vec, ridge_beta, h, r)
    max_change, n_iter = np.inf, 0
    S = np.zeros((k, k))
    for it in range(max_iter):
        n_iter = it + 1
        g = np.empty(n + k)
        g[:n] = system.AT @ r - ridge_vec * x[:n]
        g[n:] = X.T @ r - ridge_beta * x[n:]
        hX = X * h[:, None]
        B = system.AT @ hX
        try:
            with warnings.catch_warnings():
                # near-singular only while diverging (no finite MLE): non-convergence below
                warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
                Z = system.solve(h, np.column_stack([g[:n], B]))
                z0, Zb = Z[:, 0], Z[:, 1:]
                S = X.T @ hX - B.T @ Zb + ridge_beta * np.eye(k)
                db = np.empty(0)
                if k:
                    db = scipy.linalg.solve(S, g[n:] - B.T @ z0, assume_a="pos")
        except (np.linalg.LinAlgError, RuntimeError):
            # curvature lost along a direction to infinity (no finite MLE): not converged
            return False, n_iter, max_change, S
        if not np.all(np.isfinite(db)) or not np.all(np.isfinite(z0)):
            return False, n_iter, max_change, S
        step = np.r_[z0 - Zb @ db, db]
        step[:n][system.fixed] = 0.0
        max_change, slope = float(np.abs(step).max(initial=0.0)), float(g @ step)
        if max_change < tol:
            x += step
            return True, n_iter, max_change, S
        x[:] = backtrack(
            lambda v: _feat_eval(ei, ej, wy, w, X, v, ridge_vec, ridge_beta), x, step, slope, F
        )
        F = _feat_eval(ei, ej, wy, w, X, x, ridge_vec, ridge_beta, h, r)
    return False, n_iter, max_change, S


def _identifiable(ei, ej, w, X, system):
    """Which covariates are identifiable next to the item scores (pivoted on the Schur
    complement at s = 1/2; identifiability does not depend on where it is evaluated)."""
    k = X.shape[1]
    h = 0.25 * w
    hX = X * h[:, None]
    B = system.AT @ hX
    S = X.T @ hX - B.T @ system.solve(h, B) if k else np.zeros((0, 0))
    active = np.zeros(k, bool)
    chosen = []
    for j in range(k):
        scale = (X[:, j] ** 2 * h).sum()
        if not scale > 0:
            continue
        idx = [*chosen, j]
        sub = S[np.ix_(idx, idx)]
        # the pivot of column j after the chosen ones: the residual variance
        try:
            piv = sub[-1, -1] - sub[-1, :-1] @ np.linalg.solve(sub[:-1, :-1], sub[:-1, -1])
        except np.linalg.LinAlgError:
            continue
        if piv > _IDENT_TOL * scale:
            active[j] = True
            chosen.append(j)
    return active

"""Bradley–Terry with covariates (the Chatbot Arena style control): a joint sparse Newton solver.

Model: logit P(first beats second) = theta_first - theta_second + x @ beta, where x is the
comparison's row of covariates (a constant 1 for the first-slot effect, differences of text
features of the two candidates, ...). The penalised log-likelihood

    F(theta, beta) = sum_c w_c [y_c log s(d_c) + (1 - y_c) log s(-d_c)]
                     - 1/2 sum_i ridge_i theta_i^2 - 1/2 ridge_beta ||beta||^2

is concave; it is maximised by damped Newton steps on (theta, beta) jointly, damped by the
shared line search of ``ranking.bradley_terry.newton`` (the solver lives in
``ranking.bradley_terry.features_solve``; this module checks the input, runs the fit with its
fallbacks, and gives the covariance and the bootstrap). The negative Hessian is

    [[L + diag(ridge), B], [B^T, C]],  L = A^T diag(h) A,  B = A^T diag(h) X,  C = X^T diag(h) X,

with A the (comparisons x items) incidence matrix (+1 first, -1 second) and h = w s (1 - s).
L is a sparse weighted graph Laplacian (block diagonal over components: one per context when
the items are (context, candidate) pairs), so every step solves it with one sparse LU
(``scipy.sparse.linalg.splu``; dense for small item sets) on the k + 1 right-hand sides
[g_theta, B], then the k x k Schur complement S = C - B^T L^-1 B for the covariates. The
gauge of every shift-invariant component (no ridge on its items) is fixed by grounding one
item (its row and column replaced by the identity): the solution differs from the
pseudo-inverse one by a constant per component, removed by centring. ``ridge_beta`` is 0
unless the covariates separate the outcomes (see :func:`fit_features`).

Covariance (Fisher): the inverse of the joint negative Hessian under the centring
constraint, H^+ = (H + J)^-1 - J with J = 1_C 1_C^T / |C| on the theta block of every
shift-invariant component; coefficient standard errors need only S^-1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .features_solve import _identifiable, _newton, _System
from .graph import centred, components, finite_mle, gauge
from .newton import RIDGE_FALLBACK

__all__ = [
    "FeatureFit",
    "bootstrap_features",
    "check_features",
    "coef_covariance",
    "fit_features",
    "joint_covariance",
    "plain_fit",
]

# Newton iterations tried before the existence checks (a converged run proves the MLE exists).
_EXISTENCE_CHECK_AFTER = 30


@dataclass(frozen=True)
class FeatureFit:
    """A fitted covariate BT model and its data (kept for the covariance and win rates).

    ``theta`` has NaN for items never compared; ``beta`` NaN for covariates that are not
    identifiable (``active`` False). ``ridge_vec`` is the ridge per item, ``ridge_beta`` the
    one on the covariates (0 unless they separate the outcomes).
    """

    ei: np.ndarray
    ej: np.ndarray
    w: np.ndarray
    X: np.ndarray
    theta: np.ndarray
    beta: np.ndarray
    active: np.ndarray
    comp: np.ndarray
    n_comp: int
    ridge_vec: np.ndarray
    ridge_beta: float
    converged: bool
    n_iter: int
    max_change: float
    finite_mle: bool
    graph_ok: bool
    notes: tuple
    coef_cov: np.ndarray


def check_features(first, second, outcome, n_items, weights, features):
    """Covariates as a float (m, k) array and the rows to keep (finite outcome and features).

    Returns (first, second, outcome, weights, n_items, X, n_dropped) restricted to the kept
    rows (unchecked otherwise: ``ranking._core.checks.check_flat`` follows). Raises ValueError
    for a wrong shape or an infinite value (naming the row and column).
    """
    arrays = [np.asarray(a) for a in (first, second, outcome)]
    m = arrays[2].shape[0] if arrays[2].ndim == 1 else -1
    if any(a.ndim != 1 or a.shape[0] != m for a in arrays):
        return (*arrays, n_items, weights, None, 0)  # check_flat names the problem
    X = np.asarray(features, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] != m:
        raise ValueError(
            f"features must have one row per comparison, shape ({m}, k); got shape "
            f"{np.shape(features)}"
        )
    if X.shape[1] == 0:
        raise ValueError("features has no columns; pass features=None for plain Bradley–Terry")
    if np.isinf(X).any():
        r, c = np.argwhere(np.isinf(X))[0]
        raise ValueError(
            f"features[{r}, {c}] = {X[r, c]!r}: covariates must be finite (NaN drops the row)"
        )
    y = arrays[2].astype(np.float64)
    keep = np.isfinite(y) & np.isfinite(X).all(axis=1)
    if not keep.any():
        raise ValueError(
            f"all {m} comparisons have NaN in their outcome or features; nothing to fit"
        )
    if n_items is None and m and all(np.issubdtype(a.dtype, np.integer) for a in arrays[:2]):
        n_items = int(max(arrays[0].max(), arrays[1].max())) + 1
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape == y.shape:
            weights = weights[keep]
    return (
        arrays[0][keep], arrays[1][keep], y[keep], n_items, weights,
        np.ascontiguousarray(X[keep]), int(m - keep.sum()),
    )  # fmt: skip


def fit_features(ei, ej, wy, w, X, n_items, ridge, max_iter, tol, x0=None):
    """Fit theta and beta from checked flat arrays; returns a :class:`FeatureFit`.

    Where the MLE does not exist: components whose beats graph is not strongly connected
    get ``RIDGE_FALLBACK`` on their items (as without covariates); if Newton still does not
    converge the covariates separate the outcomes, and they get ``RIDGE_FALLBACK`` too.
    Covariates that are not identifiable (all zero on the comparisons, or a combination of
    the item scores and earlier covariates) are left out: NaN coefficient and a note.
    """
    comp, n_comp = components(ei, ej, w, n_items)
    present = comp >= 0
    ridge_vec = np.where(present, float(ridge), 0.0)
    notes = []
    system = _System(ei, ej, n_items, comp, n_comp, ridge_vec)
    active = _identifiable(ei, ej, w, X, system)
    if not active.all():
        notes.append(
            f"covariate column(s) {np.flatnonzero(~active).tolist()} are not identifiable "
            "(zero on every comparison, or a combination of the item scores and the other "
            "columns): left out, their coefficients are NaN"
        )
    Xa = np.ascontiguousarray(X[:, active])
    k = Xa.shape[1]

    def start():
        if x0 is None:
            return np.zeros(n_items + k)
        x = np.r_[x0[:n_items], x0[n_items:][active]]
        return np.where(np.isfinite(x), x, 0.0)

    x = start()
    ridge_beta = 0.0
    first = min(max_iter, _EXISTENCE_CHECK_AFTER)
    converged, n_iter, max_change, S = _newton(
        ei, ej, wy, w, Xa, x, system, ridge_vec, ridge_beta, first, tol
    )
    ok = np.ones(n_comp, bool)
    if not converged and n_iter < max_iter:
        ok = finite_mle(ei, ej, wy, w, n_items, comp, n_comp)
        if ridge == 0 and not ok.all():
            ridge_vec[present & ~ok[np.maximum(comp, 0)]] = RIDGE_FALLBACK
            system = _System(ei, ej, n_items, comp, n_comp, ridge_vec)
            x = start()
        converged, more, max_change, S = _newton(
            ei, ej, wy, w, Xa, x, system, ridge_vec, ridge_beta,
            min(max_iter - n_iter, _EXISTENCE_CHECK_AFTER), tol,
        )  # fmt: skip
        n_iter += more
        if not converged and n_iter < max_iter and k:
            ridge_beta = RIDGE_FALLBACK
            notes.append(
                "the covariates separate the outcomes (no finite MLE): their coefficients "
                f"were fitted with ridge = {RIDGE_FALLBACK} and are large and unreliable"
            )
            x = start()
            converged, more, max_change, S = _newton(
                ei, ej, wy, w, Xa, x, system, ridge_vec, ridge_beta, max_iter - n_iter, tol
            )
            n_iter += more
    theta = centred(x[:n_items], comp, n_comp)
    theta[~present] = np.nan
    beta = np.full(X.shape[1], np.nan)
    beta[active] = x[n_items:]
    coef_cov = np.full((X.shape[1],) * 2, np.nan)
    if k:
        # the Schur complement at the last Newton point (within tol of the optimum)
        coef_cov[np.ix_(active, active)] = np.linalg.inv(S)
    return FeatureFit(
        ei=ei, ej=ej, w=w, X=X, theta=theta, beta=beta, active=active, comp=comp,
        n_comp=int(n_comp), ridge_vec=ridge_vec, ridge_beta=ridge_beta,
        converged=bool(converged), n_iter=int(n_iter), max_change=float(max_change),
        finite_mle=bool(ok.all()) and ridge_beta == 0.0, graph_ok=bool(ok.all()),
        notes=tuple(notes), coef_cov=coef_cov,
    )  # fmt: skip


def plain_fit(ei, ej, w, theta, comp, n_comp, ridge_vec):
    """The :class:`FeatureFit` of a fit without covariates (for the covariance)."""
    return FeatureFit(
        ei=ei, ej=ej, w=w, X=np.zeros((ei.size, 0)), theta=theta, beta=np.zeros(0),
        active=np.zeros(0, bool), comp=comp, n_comp=int(n_comp), ridge_vec=ridge_vec,
        ridge_beta=0.0, converged=True, n_iter=0, max_change=0.0, finite_mle=True,
        graph_ok=True, notes=(), coef_cov=np.zeros((0, 0)),
    )  # fmt: skip


def coef_covariance(fit):
    """Fisher covariance (k x k, NaN rows/columns for inactive covariates) of beta."""
    return fit.coef_cov


def joint_covariance(fit, max_items):
    """Dense Fisher covariance of (theta, active beta) under the centring constraint.

    Returns (cov_theta (n x n), cov_beta (k_all x k_all)); NaN rows and columns for items
    never compared and for inactive covariates. Needs n_items <= ``max_items``.
    """
    n = fit.theta.size
    if n > max_items:
        raise ValueError(
            f"the Fisher covariance of the scores needs a dense {n} x {n} inverse; it is "
            f"limited to n_items <= {max_items}. Use intervals='bootstrap' for larger item sets."
        )
    Xa = fit.X[:, fit.active]
    k = Xa.shape[1]
    th = np.where(np.isfinite(fit.theta), fit.theta, 0.0)
    s = 1.0 / (1.0 + np.exp(-(th[fit.ei] - th[fit.ej] + Xa @ fit.beta[fit.active])))
    h = fit.w * s * (1.0 - s)
    # H = D^T diag(h) D with D = [A, Xa], A the +1/-1 incidence rows: built from the edges
    # (a weighted graph Laplacian, A^T (h Xa) by bincount, Xa^T (h Xa)), O(m k^2), instead of
    # forming the dense m x n incidence matrix (O(m n^2), and BLAS-thread bound under load)
    H = np.zeros((n + k, n + k))
    H[:n, :n] = _laplacian(fit.ei, fit.ej, h, n)
    hX = Xa * h[:, None]
    for c in range(k):
        col = np.bincount(fit.ei, hX[:, c], n) - np.bincount(fit.ej, hX[:, c], n)
        H[:n, n + c] = H[n + c, :n] = col
    H[n:, n:] = Xa.T @ hX
    H[np.diag_indices(n)] += fit.ridge_vec
    H[np.arange(n, n + k), np.arange(n, n + k)] += fit.ridge_beta
    comp_size, gauged = gauge(fit.comp, fit.n_comp, fit.ridge_vec)
    J = np.zeros_like(H)
    for c in np.flatnonzero(gauged):
        idx = np.flatnonzero(fit.comp == c)
        J[np.ix_(idx, idx)] = 1.0 / comp_size[c]
    absent = np.flatnonzero(fit.comp < 0)
    H[absent, absent] = 1.0
    cov = np.linalg.inv(H + J) - J
    cov_theta = cov[:n, :n]
    cov_theta[absent, :] = np.nan
    cov_theta[:, absent] = np.nan
    cov_beta = np.full((fit.X.shape[1],) * 2, np.nan)
    cov_beta[np.ix_(fit.active, fit.active)] = cov[n:, n:]
    return cov_theta, cov_beta


def _laplacian(ei, ej, h, n):
    """sum_e h_e (e_i - e_j)(e_i - e_j)^T as a dense n x n matrix."""
    L = np.bincount(ei * n + ej, h, n * n).reshape(n, n)
    L += L.T
    L = -L
    L[np.diag_indices(n)] = np.bincount(ei, h, n) + np.bincount(ej, h, n)
    return L


def bootstrap_features(fit, wy, n_boot, rng, ridge, max_iter, tol):
    """(n_boot, n_items) scores and (n_boot, k) coefficients refitted on the comparisons
    resampled with replacement (``rng``), each warm-started from the fit."""
    m = fit.ei.size
    x0 = np.r_[fit.theta, fit.beta]
    thetas = np.empty((n_boot, fit.theta.size))
    betas = np.empty((n_boot, fit.beta.size))
    for b in range(n_boot):
        counts = np.bincount(rng.integers(0, m, m), minlength=m).astype(np.float64)
        refit = fit_features(
            fit.ei, fit.ej, wy * counts, fit.w * counts, fit.X, fit.theta.size, ridge,
            max_iter, tol, x0=x0,
        )  # fmt: skip
        thetas[b] = refit.theta
        betas[b] = refit.beta
    return thetas, betas

"""Per-pair likelihood of the Davidson and Rao–Kupper tie models, its derivatives, the objective.

Comparisons are aggregated to unordered pairs (i, j): ``a`` = mass of "i beats j", ``b`` =
mass of "j beats i", ``t`` = mass of ties. With d = theta_i - theta_j:

* Davidson (1970), tie parameter x = log nu:
  P(i > j) = pi_i / (pi_i + pi_j + nu sqrt(pi_i pi_j)), P(tie) = nu sqrt(pi_i pi_j) / (...);
  the log-likelihood of a pair is (a - b) d / 2 + t x - n log(2 cosh(d / 2) + nu), n = a + b + t.
* Rao–Kupper (1967), tie parameter x = kappa = log theta (theta >= 1):
  P(i > j) = pi_i / (pi_i + theta pi_j) = sigmoid(d - kappa),
  P(tie) = (theta^2 - 1) pi_i pi_j / ((pi_i + theta pi_j)(theta pi_i + pi_j))
         = (e^{2 kappa} - 1) sigmoid(d - kappa) sigmoid(-d - kappa).

Both log-likelihoods are jointly concave in (theta, x), so damped Newton in these coordinates
is safe; the intervals of the tie parameter are taken on log nu and on log(theta - 1).
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np

from ranking._core.checks import check_flat

__all__ = [
    "DAVIDSON",
    "MODELS",
    "RAO_KUPPER",
    "TieModelFit",
    "TieProblem",
    "pair_derivatives",
    "pair_probabilities",
    "tie_masses",
    "tie_model_fit",
]

DAVIDSON = 0
RAO_KUPPER = 1
#: accepted names of ``ties=`` -> model code
MODELS = {"davidson": DAVIDSON, "rao-kupper": RAO_KUPPER}

#: What the line search evaluates: pairs (pi, pj), their masses a (i wins), b (j wins), t (tie),
#: the ridge per item and the model code; the point is (theta_0..theta_{n-1}, x).
TieProblem = namedtuple("TieProblem", "pi pj a b t ridge_vec model")


def objective(problem, z):
    """The penalised log-likelihood of the tie model at z = (theta, x)."""
    z = np.asarray(z, dtype=np.float64)
    pi, pj, a, b, t = problem.pi, problem.pj, problem.a, problem.b, problem.t
    n = problem.ridge_vec.shape[0]
    x = z[n]  # the tie parameter
    d = z[pi] - z[pj]
    if problem.model == DAVIDSON:
        if not x < 700.0:  # nu = e^x overflows
            return -np.inf
        u = 0.5 * np.abs(d)
        E = np.exp(-u)
        logD = u + np.log(1.0 + E * E + np.exp(x - u))
        F = (0.5 * (a - b) * d + t * x - (a + b + t) * logD).sum()
    else:
        if not x > 0.0:
            return -np.inf
        L = 2.0 * x + np.log1p(-np.exp(-2.0 * x))
        F = ((a + t) * _log_sigmoid(d - x) + (b + t) * _log_sigmoid(-d - x)).sum()
        F += np.where(t > 0.0, t * L, 0.0).sum()
    return float(F - 0.5 * (problem.ridge_vec * z[:n] * z[:n]).sum())


def _log_sigmoid(v):
    """log(1 / (1 + exp(-v))) without overflow."""
    return np.minimum(v, 0.0) - np.log1p(np.exp(-np.abs(v)))


def pair_derivatives(model, d, x, a, b, t):
    """Per-pair gradient (g_d, g_x) and Hessian (h_dd, h_dx, h_xx) of the log-likelihood."""
    n = a + b + t
    if model == DAVIDSON:
        u = 0.5 * np.abs(d)
        E = np.exp(-u)
        nuE = np.exp(x - u)
        den = 1.0 + E * E + nuE
        s = np.sign(d) * (1.0 - E * E) / (2.0 * den)  # sinh(d/2) / D
        c = (1.0 + E * E) / (2.0 * den)  # cosh(d/2) / D
        r = nuE / den  # nu / D
        g_d = 0.5 * (a - b) - n * s
        g_x = t - n * r
        return g_d, g_x, -n * (0.5 * c - s * s), n * s * r, -2.0 * n * r * c
    A, B = a + t, b + t
    p = _sigmoid(d - x)
    q = _sigmoid(-d - x)
    vp, vq = A * p * (1.0 - p), B * q * (1.0 - q)
    e2 = np.exp(-2.0 * x)
    g_d = A * (1.0 - p) - B * (1.0 - q)
    g_x = -A * (1.0 - p) - B * (1.0 - q) + t * 2.0 / (1.0 - e2)
    h_xx = -vp - vq - t * 4.0 * e2 / (1.0 - e2) ** 2
    return g_d, g_x, -vp - vq, vp - vq, h_xx


def pair_probabilities(model, d, x):
    """(P(i beats j), P(tie), P(j beats i)) for score differences d and tie parameter x."""
    d = np.asarray(d, dtype=np.float64)
    if model == DAVIDSON:
        u = 0.5 * np.abs(d)
        E = np.exp(-u)
        nuE = np.exp(x - u) if np.isfinite(x) else np.zeros_like(u)
        den = 1.0 + E * E + nuE
        big = np.where(d >= 0, 1.0, E * E) / den
        small = np.where(d >= 0, E * E, 1.0) / den
        return big, nuE / den, small
    p = _sigmoid(d - x)
    q = _sigmoid(-d - x)
    return p, np.clip(1.0 - p - q, 0.0, 1.0), q


def _sigmoid(v):
    return 0.5 * (1.0 + np.tanh(0.5 * v))


def tie_masses(outcome, tie):
    """(win, loss, tie) masses per comparison from outcomes in [0, 1] and tie probabilities.

    ``tie=None``: a comparison is a tie exactly when its outcome is 0.5. Otherwise win =
    outcome - tie / 2 and loss = 1 - outcome - tie / 2, which must not be negative; raises
    ValueError naming the first comparison where they are.
    """
    out = np.asarray(outcome, dtype=np.float64)
    if tie is None:
        t = (out == 0.5).astype(np.float64)
    else:
        t = np.asarray(tie, dtype=np.float64)
        if t.shape != out.shape:
            raise ValueError(
                f"tie must have one value per comparison ({out.shape[0]}); got shape {t.shape}"
            )
        bad = np.flatnonzero(~np.isfinite(t) | (t < 0) | (t > 1))
        if bad.size:
            k = bad[0]
            raise ValueError(
                f"tie must be a probability in [0, 1]; comparison {k} has tie = {t[k]:g} "
                f"({bad.size} such comparison(s))"
            )
    win = out - 0.5 * t
    loss = 1.0 - out - 0.5 * t
    bad = np.flatnonzero((win < -1e-9) | (loss < -1e-9))
    if bad.size:
        k = bad[0]
        raise ValueError(
            f"comparison {k}: outcome {out[k]:g} with tie {t[k]:g} leaves a negative "
            f"{'win' if win[k] < -1e-9 else 'loss'} mass (win = outcome - tie/2 = {win[k]:g}, "
            f"loss = 1 - outcome - tie/2 = {loss[k]:g}); outcome must be P(first wins) + "
            f"tie / 2 ({bad.size} such comparison(s))"
        )
    return np.clip(win, 0.0, None), np.clip(loss, 0.0, None), t


def tie_model_fit(first, second, outcome, scores, ties, tie_param, *, tie=None, weights=None):
    """Log-likelihood and tie rates of fitted scores under a three-outcome model.

    Parameters
    ----------
    first, second, outcome : array_like
        Flat comparisons as for ``bradley_terry`` (outcome 1 / 0 / 0.5 = tie, or soft).
    scores : array_like of float, shape (n_items,)
        Fitted scores (``BTResult.scores``).
    ties : {"davidson", "rao-kupper", "half-win"}
        The model. "half-win" reads plain Bradley–Terry scores ("a tie is half a win") as the
        Davidson model with nu = 2 and scores doubled, the three-outcome model whose
        likelihood is the half-win likelihood (P(i > j) = p^2, P(tie) = 2 p (1 - p) with
        p = sigmoid(theta_i - theta_j)), so the three log-likelihoods are comparable.
    tie_param : float
        Davidson's nu or Rao–Kupper's theta (ignored for "half-win").
    tie, weights : array_like, optional
        Tie probabilities and weights per comparison, as for ``bradley_terry``.

    Returns
    -------
    TieModelFit
        ``log_lik`` (sum over comparisons), ``predicted_tie_rate`` and ``observed_tie_rate``
        (weighted means over comparisons), ``n`` (total weight).
    """
    ei, ej, out, w, n_items = check_flat(first, second, outcome, None, weights)
    theta = np.asarray(scores, dtype=np.float64)
    if ei.max() >= theta.size or ej.max() >= theta.size:
        raise ValueError(f"scores has {theta.size} items; comparisons index beyond it")
    win, loss, t = tie_masses(out, tie)
    if ties == "half-win":
        model, x, d = DAVIDSON, np.log(2.0), 2.0 * (theta[ei] - theta[ej])
    elif ties in MODELS:
        model, d = MODELS[ties], theta[ei] - theta[ej]
        x = np.log(tie_param) if tie_param > 0 else -np.inf
    else:
        raise ValueError(f"ties must be 'davidson', 'rao-kupper' or 'half-win'; got {ties!r}")
    pw, pt, pl = pair_probabilities(model, d, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = [m * np.log(p) for m, p in ((win, pw), (t, pt), (loss, pl))]
    ll = sum(np.where(m > 0, v, 0.0) for m, v in zip((win, t, loss), terms, strict=True))
    total = w.sum()
    return TieModelFit(
        log_lik=float((w * ll).sum()),
        predicted_tie_rate=float((w * pt).sum() / total),
        observed_tie_rate=float((w * t).sum() / total),
        n=float(total),
    )


class TieModelFit(NamedTuple):
    """Result of :func:`tie_model_fit`."""

    log_lik: float
    predicted_tie_rate: float
    observed_tie_rate: float
    n: float

"""The monotone maps of ``ranking.bias.calibration``: fitting and applying them.

* isotonic: the increasing isotonic regression of a target t on p
  (``scipy.optimize.isotonic_regression``, ties in p pooled), kept as knots (x, y) and applied
  piecewise linearly between them (``np.interp``);
* Platt: p' = sigmoid(a logit(p) + b), p clipped to [CLIP, 1 - CLIP], (a, b) minimising the
  cross-entropy with t by Newton's method with step halving.

``_fit_map`` / ``_apply_map`` pick one of the two by method name. Private to
``ranking.bias.calibration`` (which re-exports ``CLIP``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import isotonic_regression

#: Platt calibration clips p to [CLIP, 1 - CLIP] before taking its logit.
CLIP = 1e-4
_PLATT_GRID = np.linspace(0.0, 1.0, 201)


def _interp(p, x, y):
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    out[ok] = np.interp(p[ok], x, y)
    return out


def _logit(p):
    q = np.clip(p, CLIP, 1.0 - CLIP)
    return np.log(q) - np.log1p(-q)


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _platt_apply(p, coef):
    out = np.full(np.shape(p), np.nan)
    ok = np.isfinite(p)
    out[ok] = _sigmoid(coef[0] * _logit(p[ok]) + coef[1])
    return out


def _fit_isotonic(p, t, w=None):
    """Knots (x, y) of the increasing isotonic regression of t on p (ties in p pooled)."""
    w = np.ones_like(p) if w is None else w
    x, inv = np.unique(p, return_inverse=True)
    sw = np.bincount(inv, weights=w)
    mean_t = np.bincount(inv, weights=w * t) / sw
    return x, isotonic_regression(mean_t, weights=sw, increasing=True).x


def _platt_loss(X, t, beta, ridge):
    z = X @ beta
    # cross-entropy of sigmoid(z) against t, written stably: log(1 + e^z) - t z
    return float(np.sum(np.logaddexp(0.0, z) - t * z) + 0.5 * ridge * beta @ beta)


def _fit_platt(p, t, ridge=1e-6, n_iter=100):
    """(a, b) of p' = sigmoid(a logit(p) + b) minimising the cross-entropy with t.

    Newton's method with step halving (a full step overshoots when many p sit at the clip).
    """
    X = np.column_stack([_logit(p), np.ones_like(p)])
    beta = np.array([1.0, 0.0])
    loss = _platt_loss(X, t, beta, ridge)
    for _ in range(n_iter):
        q = _sigmoid(X @ beta)
        grad = X.T @ (q - t) + ridge * beta
        hess = (X * (q * (1.0 - q))[:, None]).T @ X + ridge * np.eye(2)
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        for _ in range(40):
            new = beta - step
            new_loss = _platt_loss(X, t, new, ridge)
            if new_loss <= loss:
                break
            step = 0.5 * step
        else:
            break
        beta, done = new, loss - new_loss < 1e-12 * max(1.0, abs(loss))
        loss = new_loss
        if done or np.max(np.abs(step)) < 1e-10:
            break
    return float(beta[0]), float(beta[1])


def _fit_map(method, p, t):
    if method == "platt":
        coef = _fit_platt(p, t)
        return _PLATT_GRID.copy(), _platt_apply(_PLATT_GRID, coef), coef
    x, y = _fit_isotonic(p, t)
    return x, y, None


def _apply_map(arr, x, y, coef):
    return _platt_apply(arr, coef) if coef is not None else _interp(arr, x, y)

"""Slow, obviously right twins and shared data for the tests of the agreement statistics
(ranking/agreement/: correlations, reliability, significance, segments, bootstrap)."""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats


def scipy_corr(x, y, method, variant="b"):
    if method == "spearman":
        return stats.spearmanr(x, y).statistic
    if method == "kendall":
        return stats.kendalltau(x, y, variant=variant).statistic
    return stats.pearsonr(x, y).statistic


def kendall_counts_loop(x, y):
    """Concordant minus discordant pairs and ties, by the definition."""
    c = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        tx += dx == 0
        ty += dy == 0
        if dx != 0 and dy != 0:
            c += 1 if (dx > 0) == (dy > 0) else -1
    return c, tx, ty


def kendall_blocks_numpy(x, y, units, n_units):
    """Sign-product sums between units from the full (n, n) matrix."""
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    A = np.zeros((len(x), n_units))
    A[np.arange(len(x)), units] = 1.0
    return A.T @ (sx * sy) @ A


def resample_twin(x, y, units, draws):
    """The literally resampled arrays of one bootstrap replicate."""
    idx = np.concatenate([np.flatnonzero(units == u) for u in draws])
    return x[idx], y[idx]


def williams_twin(r12, r13, r23, n):
    K = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    num = (r12 - r13) * np.sqrt((n - 1) * (1 + r23))
    den = np.sqrt(2 * K * (n - 1) / (n - 3) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3)
    t = num / den
    return t, 2 * (1 - stats.t.cdf(abs(t), n - 3))


def kappa_twin(a, b, weights=None):
    cats = sorted(set(a) | set(b))
    q, n = len(cats), len(a)
    pos = {c: i for i, c in enumerate(cats)}
    O = [[0.0] * q for _ in range(q)]
    for x, y in zip(a, b, strict=True):
        O[pos[x]][pos[y]] += 1 / n
    ra = [sum(O[i]) for i in range(q)]
    cb = [sum(O[i][j] for i in range(q)) for j in range(q)]

    def w(i, j):
        if weights is None:
            return float(i != j)
        return abs(i - j) if weights == "linear" else (i - j) ** 2

    obs = sum(w(i, j) * O[i][j] for i in range(q) for j in range(q))
    exp = sum(w(i, j) * ra[i] * cb[j] for i in range(q) for j in range(q))
    return 1 - obs / exp


def bh_twin(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p)
    adj = np.empty(m)
    prev = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        prev = min(prev, p[i] * m / rank)
        adj[i] = prev
    return adj


def tied_data(rng, n, levels=5):
    h = rng.integers(1, levels + 1, n).astype(float)
    j = np.round(h + rng.normal(0, 1.5, n))
    return j, h


def panel_data():
    """24 contexts x 8 systems of Likert-like human and judge scores, 4 judge NaN."""
    rng = np.random.default_rng(4)
    n_ctx, n_sys = 24, 8
    ctx = np.repeat(np.arange(n_ctx), n_sys)
    sysl = np.tile([f"s{i}" for i in range(n_sys)], n_ctx)
    quality = np.tile(rng.normal(0, 1, n_sys), n_ctx)
    h = np.clip(np.round(3 + quality + rng.normal(0, 1, ctx.size)), 1, 5)
    j = np.round(3 + quality + rng.normal(0, 1.2, ctx.size) + 0.3 * (h - 3), 1)
    j[[3, 50, 51, 100]] = np.nan
    return j, h, ctx, sysl

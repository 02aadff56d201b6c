"""Bradley–Terry with ties: the Davidson (1970) and Rao–Kupper (1967) models.

Behind ``ranking.bradley_terry(first=, second=, outcome=, ties="davidson" | "rao-kupper")``.
The model maths are in ``ranking.bradley_terry.ties_model``. The fit:

* comparisons are aggregated first to unordered pairs with three masses (i wins, j wins, tie),
  exact for the likelihood; a comparison's tie mass is ``tie`` (default: 1 where the outcome,
  after ``tau``, is 0.5), its win mass ``outcome - tie / 2`` and its loss mass
  ``1 - outcome - tie / 2``, all times its weight;
* damped Newton on (theta, x) with x = log nu (Davidson) or kappa = log theta (Rao–Kupper),
  both concave, dense (n_items + 1) Hessian with the centring gauge of every shift-invariant
  component, the line search of ``ranking.bradley_terry.newton``; started from plain Bradley–Terry
  ("a tie is half a win") and the tie parameter matching the observed tie rate;
* Fisher intervals from the inverse information (scores: under the centring; the tie
  parameter on log nu and log(theta - 1), transformed back), or bootstrap percentiles from
  refits on multinomially resampled comparisons.

Conventions follow plain Bradley–Terry (``ranking.bradley_terry``): scores centred per
connected component, NaN for items never compared, ``RIDGE_FALLBACK`` on components without a
finite MLE (an item that never loses nor ties against the rest of its component). With no tie
at all the tie parameter is on its boundary (nu = 0, theta = 1): the fit is plain
Bradley–Terry on the decisive outcomes, and a note says so. With ties only, nu (theta) is
infinite: scores are 0 and a note says so.
"""

from __future__ import annotations

import statistics
import warnings

import numpy as np

from ranking._core.checks import check_flat, check_tau
from ranking._core.decisions import decide

from .flat import fit_flat
from .graph import components, finite_mle
from .intervals import MAX_FISHER_ITEMS, _percentile_bounds
from .newton import RIDGE_FALLBACK, backtrack
from .result import BTResult
from .ties_model import (
    DAVIDSON,
    MODELS,
    RAO_KUPPER,
    TieProblem,
    objective,
    pair_derivatives,
    tie_masses,
)

__all__ = ["fit_ties"]

_NAMES = {DAVIDSON: "Davidson", RAO_KUPPER: "Rao–Kupper"}


def fit_ties(first, second, outcome, n_items, weights, tau, ties, tie, **options):
    """The tie-model fit behind ``bradley_terry(..., ties=...)`` (flat input); a BTResult."""
    if ties not in MODELS:
        raise ValueError(f"ties must be None, 'davidson' or 'rao-kupper'; got {ties!r}")
    model = MODELS[ties]
    ei, ej, out, w, n_items = check_flat(first, second, outcome, n_items, weights)
    tau = check_tau(tau, allow_none=True)
    y = out if tau is None else decide(out, tau)
    win, loss, t = tie_masses(y, tie)
    cells = _cells(ei, ej, win * w, loss * w, t * w)
    pi, pj, inv = cells["pi"], cells["pj"], cells["pair_of_cell"]
    a, b, tt = (np.bincount(inv, cells[k], minlength=pi.size) for k in ("a", "b", "t"))
    ridge = options["ridge"]
    fit = _Fitter(model, pi, pj, n_items, ridge, options["max_iter"], options["tol"])
    z, info = fit.solve(a, b, tt)
    theta = fit.scores(z)
    lower = upper = samples = None
    tie_low = tie_high = np.nan
    method = f"{_NAMES[model]} ties: damped newton (dense hessian)"
    conf = options["confidence"]
    intervals = options["intervals"] if info["tie_state"] == "inside" else None
    if options["intervals"] is not None and intervals is None:
        info["notes"].append("no interval for the tie parameter at its boundary")
    if intervals == "fisher":
        if fit.m > MAX_FISHER_ITEMS:
            raise ValueError(
                f"Fisher intervals need a dense inverse; {fit.m} items is more than "
                f"{MAX_FISHER_ITEMS}: use intervals='bootstrap'"
            )
        se = fit.standard_errors(z, a, b, tt)
        zq = statistics.NormalDist().inv_cdf(0.5 + conf / 2.0)
        se_items = np.full(n_items, np.nan)
        se_items[fit.items] = se[:-1]
        lower, upper = theta - zq * se_items, theta + zq * se_items
        half = zq * se[-1] * _dlog_dx(model, z[-1])
        tie_low, tie_high = _from_log(model, _to_log(model, z[-1]) + np.array([-half, half]))
        method += f"; fisher intervals (confidence {conf})"
    elif intervals == "bootstrap":
        samples, taus = _bootstrap(fit, cells, z, options["n_boot"], options["rng"])
        lower, upper = _percentile_bounds(samples, conf)
        tie_low, tie_high = _percentile_bounds(taus, conf)
        method += f"; bootstrap intervals ({options['n_boot']} replicates, confidence {conf})"
    if not info["converged"]:
        warnings.warn(
            f"bradley_terry: did not converge in {options['max_iter']} iterations",
            RuntimeWarning,
            stacklevel=4,
        )
        info["notes"].append("Newton iteration did not converge within max_iter")
    return BTResult(
        scores=theta,
        converged=info["converged"],
        n_iter=info["n_iter"],
        max_change=info["max_change"],
        lower=lower,
        upper=upper,
        finite_mle=fit.finite,
        component=fit.component,
        n_components=fit.n_comp,
        ridge=fit.ridge_full(),
        method=method,
        notes=tuple(info["notes"]),
        samples=samples,
        tie_param=float(info["tie_param"]),
        tie_low=float(tie_low),
        tie_high=float(tie_high),
    )


def _cells(ei, ej, a, b, t):
    """Distinct comparisons (unordered pair and masses) with their counts, and their pairs.

    One lexsort over (pair, masses) instead of ``np.unique(axis=0)`` (ten times slower).
    """
    lo, hi = np.minimum(ei, ej), np.maximum(ei, ej)
    swap = ei > ej
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    keep = (a + b + t) > 0
    code = lo[keep].astype(np.int64) * (int(hi.max()) + 1) + hi[keep]
    a, b, t = a[keep], b[keep], t[keep]
    order = np.lexsort((t, b, a, code))
    code, a, b, t = code[order], a[order], b[order], t[order]
    new = np.ones(code.size, bool)
    new[1:] = (np.diff(code) != 0) | (np.diff(a) != 0) | (np.diff(b) != 0) | (np.diff(t) != 0)
    start = np.flatnonzero(new)
    count = np.diff(np.append(start, code.size)).astype(np.float64)
    code, unit = code[start], np.column_stack([a[start], b[start], t[start]])
    pair_new = np.ones(code.size, bool)
    pair_new[1:] = np.diff(code) != 0
    pair_of_cell = np.cumsum(pair_new) - 1
    pairs = code[pair_new]
    width = int(hi.max()) + 1
    return {
        "pi": (pairs // width).astype(np.int64),
        "pj": (pairs % width).astype(np.int64),
        "pair_of_cell": pair_of_cell,
        "unit": unit,
        "count": count,
        "a": unit[:, 0] * count,
        "b": unit[:, 1] * count,
        "t": unit[:, 2] * count,
    }


def _to_log(model, x):
    """The scale of the tie interval: log nu (Davidson), log(theta - 1) (Rao–Kupper)."""
    return x if model == DAVIDSON else np.log(np.expm1(x))


def _dlog_dx(model, x):
    return 1.0 if model == DAVIDSON else np.exp(x) / np.expm1(x)


def _from_log(model, v):
    return np.exp(v) if model == DAVIDSON else 1.0 + np.exp(v)


def _param(model, x):
    return float(np.exp(x))  # nu = e^x, theta = e^kappa


class _Fitter:
    """The fit on the compared items (reindexed 0..m-1) with their components and ridge."""

    def __init__(self, model, pi, pj, n_items, ridge, max_iter, tol):
        self.model, self.n_items = model, n_items
        self.max_iter, self.tol, self.ridge = max_iter, tol, ridge
        used = np.zeros(n_items, bool)
        used[pi] = used[pj] = True
        self.items = np.flatnonzero(used)
        self.m = self.items.size
        pos = np.full(n_items, -1, np.int64)
        pos[self.items] = np.arange(self.m)
        self.pi, self.pj = pos[pi], pos[pj]
        comp, self.n_comp = components(self.pi, self.pj, np.ones(self.pi.size), self.m)
        self.comp = comp
        self.component = np.full(n_items, -1, np.int64)
        self.component[self.items] = comp

    def ridge_full(self):
        out = np.zeros(self.n_items)
        out[self.items] = self.ridge_vec
        return out

    def scores(self, z, centre=True):
        theta = np.full(self.n_items, np.nan)
        th = z[: self.m].copy()
        if centre:
            for c in range(self.n_comp):
                if self.gauged[c]:
                    th[self.comp == c] -= th[self.comp == c].mean()
        theta[self.items] = th
        return theta

    def _setup(self, a, b, t):
        ok = finite_mle(self.pi, self.pj, a + 0.5 * t, a + b + t, self.m, self.comp, self.n_comp)
        self.finite = bool(ok.all())
        if self.ridge > 0:
            self.ridge_vec = np.full(self.m, self.ridge)
        else:
            self.ridge_vec = np.where(ok[self.comp], 0.0, RIDGE_FALLBACK)
        self.gauged = np.array([not (self.ridge_vec[self.comp == c] > 0).any()
                                for c in range(self.n_comp)])  # fmt: skip
        self.gauge = np.zeros((self.m + 1, self.m + 1))
        for c in np.flatnonzero(self.gauged):
            idx = np.flatnonzero(self.comp == c)
            self.gauge[np.ix_(idx, idx)] = 1.0 / idx.size

    def hessian(self, z, a, b, t):
        m = self.m
        d = z[self.pi] - z[self.pj]
        g_d, g_x, h_dd, h_dx, h_xx = pair_derivatives(self.model, d, z[m], a, b, t)
        g = np.zeros(m + 1)
        g[:m] = np.bincount(self.pi, g_d, m) - np.bincount(self.pj, g_d, m)
        g[:m] -= self.ridge_vec * z[:m]
        g[m] = g_x.sum()
        H = np.zeros((m + 1, m + 1))
        flat = H.ravel()
        np.add.at(flat, self.pi * (m + 1) + self.pj, -h_dd)
        np.add.at(flat, self.pj * (m + 1) + self.pi, -h_dd)
        diag = np.bincount(self.pi, h_dd, m) + np.bincount(self.pj, h_dd, m) - self.ridge_vec
        H[np.arange(m), np.arange(m)] += diag
        col = np.bincount(self.pi, h_dx, m) - np.bincount(self.pj, h_dx, m)
        H[:m, m] = H[m, :m] = col
        H[m, m] = h_xx.sum()
        return g, H

    def solve(self, a, b, t, z0=None):
        """Maximise the likelihood for pair masses (a, b, t); returns (z, info)."""
        self._setup(a, b, t)
        notes = []
        T, N = t.sum(), (a + b + t).sum()
        if T <= 0 or T >= N:
            return self._boundary(a, b, t, T, N, notes)
        z = self._start(a, b, t, T / N) if z0 is None else z0.copy()
        problem = TieProblem(self.pi, self.pj, a, b, t, self.ridge_vec, self.model)
        converged, it, change = False, 0, np.inf
        for it in range(1, self.max_iter + 1):  # noqa: B007
            g, H = self.hessian(z, a, b, t)
            M = self.gauge - H
            try:
                step = np.linalg.solve(M, g)
            except np.linalg.LinAlgError:
                step = np.linalg.lstsq(M, g, rcond=None)[0]
            change = float(np.abs(step).max())
            if change < self.tol:
                converged = True
                break
            z = backtrack(lambda x: objective(problem, x), z, step, float(g @ step))
        state = "inside"
        return z, dict(converged=converged, n_iter=it, max_change=change, notes=notes,
                       tie_param=_param(self.model, z[-1]), tie_state=state)  # fmt: skip

    def _start(self, a, b, t, rate):
        wy, w = a + 0.5 * t, a + b + t
        theta = fit_flat(self.pi, self.pj, wy, w, self.m, self.ridge, 200, 1e-6)[0]
        if self.model == DAVIDSON:
            x = np.log(2.0 * rate / (1.0 - rate))
        else:
            x = np.log((1.0 + rate) / (1.0 - rate))
        return np.append(np.nan_to_num(theta), x)

    def _boundary(self, a, b, t, T, N, notes):
        m, name = self.m, _NAMES[self.model]
        if T <= 0:
            theta = fit_flat(self.pi, self.pj, a, a + b, m, self.ridge, self.max_iter,
                             self.tol)  # fmt: skip
            converged, n_iter, change = theta[1], theta[2], theta[3]
            self.ridge_vec, self.finite = theta[7][:m], bool(theta[6])
            z = np.append(np.nan_to_num(theta[0]), -np.inf if self.model == DAVIDSON else 0.0)
            value = 0.0 if self.model == DAVIDSON else 1.0
            notes.append(
                f"no tie in the data: the {name} tie parameter is on its boundary "
                f"({'nu = 0' if value == 0 else 'theta = 1'}) and the scores are plain "
                "Bradley–Terry on the decisive outcomes"
            )
        else:
            z = np.append(np.zeros(m), np.inf)
            converged, n_iter, change, value = True, 0, 0.0, np.inf
            notes.append(
                f"every comparison is a tie: the {name} tie parameter is infinite and all "
                "scores are 0"
            )
        return z, dict(converged=bool(converged), n_iter=int(n_iter), max_change=float(change),
                       notes=notes, tie_param=value, tie_state="boundary")  # fmt: skip

    def standard_errors(self, z, a, b, t):
        _, H = self.hessian(z, a, b, t)
        cov = np.linalg.inv(self.gauge - H) - self.gauge
        return np.sqrt(np.clip(np.diag(cov), 0.0, None))


def _bootstrap(fit, cells, z, n_boot, rng):
    """Refits on comparisons resampled with replacement (multinomial over distinct cells)."""
    count = cells["count"]
    total = int(round(count.sum()))
    prob = count / count.sum()
    samples = np.full((n_boot, fit.n_items), np.nan)
    taus = np.full(n_boot, np.nan)
    npair = fit.pi.size
    for r in range(n_boot):
        k = rng.multinomial(total, prob).astype(np.float64)
        a, b, t = (np.bincount(cells["pair_of_cell"], cells["unit"][:, c] * k, minlength=npair)
                   for c in range(3))  # fmt: skip
        zr, info = fit.solve(a, b, t, z0=z)
        samples[r] = fit.scores(zr)
        mass = np.bincount(fit.pi, a + b + t, fit.m) + np.bincount(fit.pj, a + b + t, fit.m)
        samples[r, fit.items[mass == 0]] = np.nan  # not drawn in this replicate
        taus[r] = info["tie_param"]
    fit._setup(*(np.bincount(cells["pair_of_cell"], cells[k], minlength=npair)
                 for k in ("a", "b", "t")))  # fmt: skip
    return samples, taus

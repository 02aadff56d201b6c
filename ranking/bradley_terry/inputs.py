"""The three input paths of ``ranking.bradley_terry``: P per context, one flat item set, and
a flat item set with covariates. Each checks its arrays, fits, and builds the BTResult with the
intervals asked for (``ranking.bradley_terry.result.result``)."""

import dataclasses
import warnings

import numpy as np

from ranking._core.checks import as_P, check_flat, check_tau
from ranking._core.decisions import decide
from ranking._core.score_checks import check_confidence

from .aggregate import aggregate, bootstrap_cells, fold_pairs, pair_totals
from .dense import win_weights
from .features import (
    bootstrap_features,
    check_features,
    coef_covariance,
    fit_features,
    joint_covariance,
    plain_fit,
)
from .flat import fit_flat, solver
from .intervals import (
    MAX_FISHER_ITEMS,
    bootstrap_dense,
    bootstrap_flat,
    bounds,
    fisher_flat,
)
from .result import result as _result
from .stacked import fisher_stack, fit_stack

__all__ = ["bt_P", "bt_flat", "bt_features"]


def bt_P(P, weights, tau, **options):
    arr = as_P(P)
    n_ctx, n, _ = arr.shape
    tau = check_tau(tau, P=arr, allow_none=True)
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
    Y = np.where(finite, arr if tau is None else decide(arr, tau), 0.0)
    W = np.ascontiguousarray(win_weights(Y, Om))
    theta = np.zeros((n_ctx, n))
    ridge, max_iter, tol = options["ridge"], options["max_iter"], options["tol"]
    fitted = fit_stack(W, ridge, max_iter, tol, theta, False)
    converged, _, _, comp, n_comp, _, ridge_used = fitted
    if not converged.all():
        warnings.warn(
            f"bradley_terry: context(s) {np.flatnonzero(~converged)[:10].tolist()} did not "
            f"converge in {max_iter} iterations",
            RuntimeWarning,
            stacklevel=3,
        )
    res = _result(
        theta,
        fitted,
        per_context=True,
        method="newton-cholesky per context",
        se=lambda: fisher_stack(W, theta, ridge_used, comp),
        replicates=lambda: bootstrap_dense(
            Y, Om, theta, ridge, max_iter, tol, options["n_boot"], options["rng"]
        ),
        options=options,
    )
    empty = np.flatnonzero(~(Om > 0).any(axis=(1, 2)))
    if empty.size:
        note = f"context(s) {empty[:10].tolist()}: no comparison at all, so their scores are NaN"
        res = dataclasses.replace(res, notes=(*res.notes, note))
    return res


def bt_flat(first, second, outcome, n_items, weights, tau, groups, **options):
    ei, ej, out, w, n_items = check_flat(first, second, outcome, n_items, weights)
    codes = None if groups is None else _group_codes(groups, ei.size)
    tau = check_tau(tau, allow_none=True)
    y = out if tau is None else decide(out, tau)
    ridge, max_iter, tol = options["ridge"], options["max_iter"], options["tol"]
    # the likelihood is additive in the weights: one edge per compared pair when that pays
    cells = None
    if options["intervals"] == "bootstrap":
        cells = aggregate(ei, ej, y, w, groups=codes)
    if cells is not None:
        folded = pair_totals(cells)
    else:
        folded = fold_pairs(ei, ej, y, w)
    if folded is None:
        fa, fb, fwy, fw = ei, ej, w * y, w
    else:
        fa, fb = (x.astype(ei.dtype) for x in folded[:2])
        fwy, fw = folded[2:]
    theta, *fitted = fit_flat(fa, fb, fwy, fw, n_items, ridge, max_iter, tol)
    converged, _, _, comp, n_comp, _, ridge_vec = fitted
    if not converged:
        warnings.warn(
            f"bradley_terry: did not converge in {max_iter} iterations",
            RuntimeWarning,
            stacklevel=3,
        )

    def replicates():
        n_boot, rng = options["n_boot"], options["rng"]
        if cells is None:  # hardly any repeated comparison: resample them one by one
            return bootstrap_flat(ei, ej, w * y, w, n_items, theta, ridge, max_iter, tol,
                                  n_boot, rng)  # fmt: skip
        chord = bool(fitted[5]) and fitted[4] == 1
        return bootstrap_cells(
            cells, n_items, theta, ridge, max_iter, tol, n_boot, rng, chord=chord
        )

    how = "" if folded is None else f" on {fa.size} pair(s) aggregated from {ei.size} comparisons"
    if codes is not None and options["intervals"] == "bootstrap":
        how += f"; bootstrap over {int(codes.max()) + 1} group(s)"
    res = _result(
        theta,
        fitted,
        per_context=False,
        method=solver(comp) + how,
        se=lambda: fisher_flat(fa, fb, fw, n_items, theta, ridge_vec, comp, n_comp),
        replicates=replicates,
        options=options,
    )
    return dataclasses.replace(res, fit=plain_fit(fa, fb, fw, theta, comp, n_comp, ridge_vec))


def _group_codes(groups, m):
    g = np.asarray(groups)
    if g.shape != (m,):
        raise ValueError(f"groups must hold one label per comparison ({m}); got shape {g.shape}")
    if g.dtype.kind == "f" and not np.isfinite(g).all():
        k = int(np.flatnonzero(~np.isfinite(g))[0])
        raise ValueError(f"groups[{k}] is {g[k]!r}: every comparison needs a group label")
    try:
        _, codes = np.unique(g, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"groups must be labels of one kind (all int or all str); {exc}") from None
    return codes.astype(np.int64).ravel()


def bt_features(first, second, outcome, n_items, weights, tau, features, **options):
    check_confidence(options["confidence"])
    first, second, outcome, n_items, weights, X, dropped = check_features(
        first, second, outcome, n_items, weights, features
    )
    ei, ej, out, w, n_items = check_flat(first, second, outcome, n_items, weights)
    tau = check_tau(tau, allow_none=True)
    wy = w * (out if tau is None else decide(out, tau))
    ridge, max_iter, tol = options["ridge"], options["max_iter"], options["tol"]
    fit = fit_features(ei, ej, wy, w, X, n_items, ridge, max_iter, tol)
    if not fit.converged:
        warnings.warn(
            f"bradley_terry: did not converge in {max_iter} iterations",
            RuntimeWarning,
            stacklevel=3,
        )
    cache = {}

    def boot():
        if "boot" not in cache:
            cache["boot"] = bootstrap_features(
                fit, wy, options["n_boot"], options["rng"], ridge, max_iter, tol
            )
        return cache["boot"]

    fitted = (fit.converged, fit.n_iter, fit.max_change, fit.comp, fit.n_comp, fit.graph_ok)
    res = _result(
        fit.theta,
        (*fitted, fit.ridge_vec),
        per_context=False,
        method="joint newton (sparse LU on the items, Schur complement on the covariates)",
        se=lambda: np.sqrt(np.clip(np.diag(joint_covariance(fit, MAX_FISHER_ITEMS)[0]), 0, None)),
        replicates=lambda: boot()[0],
        options=options,
    )
    se = np.sqrt(np.clip(np.diag(coef_covariance(fit)), 0.0, None))
    if options["intervals"] == "bootstrap":
        lo, hi, _ = bounds("bootstrap", fit.beta, options["confidence"], 0, None, lambda: boot()[1])
    else:
        lo, hi, _ = bounds("fisher", fit.beta, options["confidence"], 0, lambda: se, None)
    notes = (*res.notes, *fit.notes)
    if dropped:
        notes += (f"{dropped} comparison(s) with NaN in features or outcome were dropped",)
    return dataclasses.replace(
        res, finite_mle=fit.finite_mle, coef=fit.beta,
        samples=boot()[0] if options["intervals"] == "bootstrap" else None, coef_se=se, coef_low=lo, coef_high=hi,
        fit=fit, notes=notes,
    )  # fmt: skip

"""Bradley–Terry maximum likelihood from pairwise comparisons (soft or hard outcomes).

Model: P(i beats j) = sigmoid(theta_i - theta_j). Every ordered comparison (i shown first,
j second) is one Bernoulli observation of "i beats j" with outcome y in [0, 1] (1: i wins,
0: j wins, 0.5: a tie, or a soft probability); the presentation order is ignored by the
model. The log-likelihood is sum_c w_c [y_c log s(d_c) + (1 - y_c) log s(-d_c)],
d_c = theta_first - theta_second, minus (ridge / 2) * ||theta||^2 when ridge > 0. The
outcomes are the probabilities themselves (``tau=None``) or the hard decisions at a threshold
(``ranking.decide``).

Solvers (both exact Newton methods, converged on max |delta theta| < tol, damped by one
shared line search, ``ranking._bt_newton``):

* P input (n_contexts, N, N): per context a damped Newton iteration whose N x N Hessian is
  solved by Cholesky; the numba kernel loops over contexts in parallel (``ranking._bt_dense``).
* flat input (one large item set): a few passes of Newman's (2023) iteration to get close,
  then a damped inexact Newton iteration whose Hessian (a weighted graph Laplacian) is solved
  by Jacobi-preconditioned conjugate gradient. Every step is a pass over the edge list; no
  dense n_items x n_items matrix is formed (``ranking._bt_flat``).

Flat input is folded first when that pays (``ranking._bt_aggregate``): the log-likelihood is
additive in the weights and ignores the presentation order, so identical comparisons become
one edge per compared pair, exactly. The bootstrap of flat input draws multinomial counts
over the folded cells (resampling comparisons) or over ``groups`` (resampling, e.g., whole
contexts) and refits every replicate warm-started in one compiled loop; ``samples`` keeps the
replicates (``ranking.rank_intervals`` turns them into rank intervals).

Fisher intervals, and the bootstrap of P input, are in ``ranking._bt_intervals``.

With ``features`` (flat input only) the model gains covariates, the Chatbot Arena style
control: logit P(first beats second) = theta_first - theta_second + x @ beta, fitted jointly by
damped Newton with a sparse LU on the item block and a Schur complement on the covariates
(``ranking._bt_features``); ``coef`` and its Fisher intervals are on the result.

Documented behaviour where the plain MLE does not exist or is not unique:

* Scores are log-strengths, centred to mean 0 within every connected component of the
  comparison graph. Scores of different components are not comparable (the likelihood says
  nothing about them); ``n_components`` > 1 flags this.
* With ``ridge = 0`` the MLE is finite exactly when, inside each component, the "beats" graph
  (i -> j when i has positive win weight against j) is strongly connected. When it is not
  (an item or group never loses, or never wins, against the rest of its component) the
  affected components are fitted with a weak Gaussian prior ``RIDGE_FALLBACK`` (prior sd about
  31.6 logits) instead; those scores are large but finite (typically 5 to 15 logits away from
  the rest) and ``finite_mle`` is False for that context (or the flat set). Components whose MLE
  exists keep the exact, unpenalised MLE.
* With ``ridge > 0`` the result is the MAP estimate under theta_i ~ N(0, 1 / ridge): always
  finite and unique, and each component's mean is 0 at the optimum.
* Items with no comparison at all get score NaN (never a made-up number) and component -1;
  so does every item of a context without any comparison (an all-NaN block of P, e.g. every
  answer about that item unparsed): that context has ``n_components`` 0 and a note says so.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field

import numpy as np

from ._bt_aggregate import aggregate, bootstrap_cells, fold_pairs, pair_totals
from ._bt_dense import fit_batch, win_weights
from ._bt_features import (
    bootstrap_features,
    check_features,
    coef_covariance,
    fit_features,
    joint_covariance,
    plain_fit,
)
from ._bt_flat import fit_flat
from ._bt_intervals import (
    MAX_FISHER_ITEMS,
    bootstrap_dense,
    bootstrap_flat,
    bounds,
    fisher_dense,
    fisher_flat,
)
from ._bt_newton import RIDGE_FALLBACK
from ._checks import as_P, check_flat, check_random_state, check_tau
from ._score_checks import check_confidence
from .decisions import decide

__all__ = ["BTResult", "MAX_FISHER_ITEMS", "RIDGE_FALLBACK", "bradley_terry"]


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
        Interval bounds for ``scores`` at ``confidence`` (None when ``intervals`` is None).
    finite_mle : ndarray of bool or bool
        False where, with ridge == 0, some component had no finite MLE and was fitted with
        ``RIDGE_FALLBACK`` (with ridge > 0 it still reports whether the plain MLE exists).
    component : ndarray of int
        Connected-component label of each item (-1: never compared).
    n_components : ndarray of int or int
        Number of connected components (> 1: scores of different components not comparable).
    ridge : ndarray of float
        Ridge actually used per item (``ridge``, 0, or ``RIDGE_FALLBACK``); same shape as
        scores.
    method : str
        Solver and interval method used.
    notes : tuple of str
        Human-readable flags (fallback prior used, several components, no convergence).
    coef, coef_se, coef_low, coef_high : ndarray of shape (k,) or None
        With ``features``: the covariate coefficients beta (log-odds per unit of the
        covariate), their Fisher standard errors and interval at ``confidence`` (bootstrap
        percentiles when ``intervals="bootstrap"``, Fisher otherwise); NaN for a covariate
        that is not identifiable. None without features.
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
    ridge: np.ndarray
    method: str
    notes: tuple[str, ...]
    coef: np.ndarray | None = None
    coef_se: np.ndarray | None = None
    coef_low: np.ndarray | None = None
    coef_high: np.ndarray | None = None
    #: the flat fit's data for ``ranking.controlled_win_rates`` (None for P input)
    fit: object = field(default=None, repr=False, compare=False)
    #: with ``intervals="bootstrap"``: the refitted scores, shape (n_boot, *scores.shape)
    samples: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: with ``ties``: the tie parameter (Davidson's nu >= 0, Rao–Kupper's theta >= 1) and its
    #: interval at ``confidence``; None otherwise
    tie_param: float | None = None
    tie_low: float | None = None
    tie_high: float | None = None


def bradley_terry(
    P=None,
    *,
    first=None,
    second=None,
    outcome=None,
    n_items=None,
    weights=None,
    tau=None,
    ridge=0.0,
    max_iter=10_000,
    tol=1e-8,
    intervals=None,
    n_boot=200,
    confidence=0.95,
    random_state=None,
    features=None,
    ties=None,
    tie=None,
    groups=None,
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
    tau : None, float or array_like of shape (n_contexts,), default None
        None: soft outcomes y = p. A threshold (one per context allowed for P): hard
        decisions y = decide(p, tau) (``ranking.decide``), p == tau counting as a tie (half
        a win each).
    ridge : float, default 0.0
        Gaussian prior precision: maximises log-lik - ridge/2 ||theta||^2. With 0 the exact
        MLE; see the module docstring for components without a finite MLE.
    max_iter : int, default 10_000
        Most Newton iterations (convergence normally takes 5-15).
    tol : float, default 1e-8
        Stop when the Newton step has max |delta theta| < tol.
    intervals : {None, "bootstrap", "fisher"}, default None
        "bootstrap": percentile intervals from ``n_boot`` refits on comparisons resampled with
        replacement (per context for P; whole groups with ``groups``), seeded by
        ``random_state``; the refitted scores are kept in ``samples``. "fisher": theta +/- z * se
        with se from the inverse Fisher information under the centring constraint
        (Moore-Penrose inverse of the Hessian); flat input limited to
        ``MAX_FISHER_ITEMS`` items.
    n_boot : int, default 200
        Bootstrap replicates.
    confidence : float, default 0.95
        Interval coverage.
    random_state : None, int or numpy Generator
        Seed for the bootstrap (``ranking._checks.check_random_state``).
    features : array_like of shape (n_comparisons, k), optional
        Flat input only: covariates added to the logit of "first beats second", logit =
        theta_first - theta_second + features @ beta (e.g. a constant 1 for the first-slot
        effect and normalised differences of text features). Scores are then the
        covariate-adjusted thetas and ``coef`` holds beta. Rows with NaN in features or
        outcome are dropped (a note counts them). The ridge applies to theta, not beta.
    ties : {None, "davidson", "rao-kupper"}, default None
        Flat input only: a tie model instead of "a tie is half a win" (``ranking._bt_ties``).
        The tie parameter and its interval are ``tie_param``, ``tie_low``, ``tie_high``.
    tie : array_like of float, optional
        With ``ties``: the probability of a tie for each comparison (e.g. the judge's mass on
        a tie label); ``outcome`` then stays P(first wins) + tie / 2. Default: a comparison
        is a tie exactly when its outcome (after ``tau``) is 0.5.
    groups : array_like, optional
        Flat input, plain model: one label (int or str) per comparison, e.g. its context.
        With ``intervals="bootstrap"`` whole groups are resampled with replacement (a cluster
        bootstrap); without it the bootstrap resamples single comparisons. No effect on the
        fit itself.

    Returns
    -------
    BTResult
        Scores (log-strengths, mean 0 per connected component), convergence and flags.

    Raises
    ------
    ValueError
        Bad shapes, values outside [0, 1], N < 2, empty or mismatched flat arrays,
        out-of-range indices, bad options, features with P input or of the wrong shape. (A context of P without any comparison is not an
        error: its scores are NaN.)
    """
    _check_options(ridge, max_iter, tol, intervals, n_boot, confidence)
    rng = check_random_state(random_state)
    flat_given = any(x is not None for x in (first, second, outcome))
    if P is not None and flat_given:
        raise ValueError("give either P or the flat arrays (first, second, outcome), not both")
    if P is None and not flat_given:
        raise ValueError("no comparisons given: pass P or first/second/outcome")
    options = dict(
        ridge=float(ridge),
        max_iter=int(max_iter),
        tol=float(tol),
        intervals=intervals,
        n_boot=int(n_boot),
        confidence=float(confidence),
        rng=rng,
    )
    if groups is not None and (P is not None or ties is not None or features is not None):
        raise ValueError(
            "groups= works with the plain model on flat input (first, second, outcome); "
            "not with P, ties= or features="
        )
    if P is not None:
        if ties is not None or tie is not None:
            raise ValueError(
                "ties= needs the flat input (first, second, outcome): P holds one probability "
                "per ordered pair, with no room for a tie"
            )
        if features is not None:
            raise ValueError(
                "features= needs the flat input (first, second, outcome): one row of "
                "covariates per comparison; P input has no rows to attach them to"
            )
        return _bt_P(P, weights, tau, **options)
    if ties is not None:
        if features is not None:
            raise ValueError("ties= and features= cannot be combined (yet): fit one or the other")
        from ._bt_ties import fit_ties

        return fit_ties(first, second, outcome, n_items, weights, tau, ties, tie, **options)
    if tie is not None:
        raise ValueError('tie= needs a tie model: pass ties="davidson" or ties="rao-kupper"')
    if features is not None:
        return _bt_features(first, second, outcome, n_items, weights, tau, features, **options)
    return _bt_flat(first, second, outcome, n_items, weights, tau, groups, **options)


def _check_options(ridge, max_iter, tol, intervals, n_boot, confidence):
    if not (np.isfinite(ridge) and ridge >= 0.0):
        raise ValueError(f"ridge must be a finite number >= 0; got {ridge!r}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1; got {max_iter!r}")
    if not (np.isfinite(tol) and tol > 0.0):
        raise ValueError(f"tol must be > 0; got {tol!r}")
    if intervals not in (None, "bootstrap", "fisher"):
        raise ValueError(f"intervals must be None, 'bootstrap' or 'fisher'; got {intervals!r}")
    if intervals == "bootstrap" and int(n_boot) < 2:
        raise ValueError(f"n_boot must be >= 2 for bootstrap intervals; got {n_boot!r}")
    if intervals is not None:
        check_confidence(confidence)


def _result(theta, fitted, *, per_context, method, se, replicates, options):
    """The BTResult of a fit, with Fisher or bootstrap intervals when asked.

    ``fitted`` is (converged, n_iter, max_change, component, n_components, finite_mle,
    ridge used); ``se()`` gives the Fisher standard errors and ``replicates()`` the
    (n_boot, ...) refitted scores, each called only for its kind of interval.
    """
    converged, n_iter, max_change, comp, n_comp, fin, ridge_used = fitted
    kept = {}

    def keep():
        kept["samples"] = replicates()
        return kept["samples"]

    lower, upper, how = bounds(
        options["intervals"], theta, options["confidence"], options["n_boot"], se, keep
    )
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
        ridge=ridge_used,
        method=method + how,
        notes=_notes(n_comp, fin, converged, options["ridge"], per_context),
        samples=kept.get("samples"),
    )


def _notes(n_components, finite, converged, ridge, per_context):
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
    if nf.size and ridge == 0:
        notes.append(
            f"{where(nf)}: no finite MLE (some items never lose or never win within their "
            f"component); those components were fitted with ridge = {RIDGE_FALLBACK}"
        )
    nc = np.flatnonzero(~np.atleast_1d(converged))
    if nc.size:
        notes.append(f"{where(nc)}: Newton iteration did not converge within max_iter")
    return tuple(notes)


def _bt_P(P, weights, tau, **options):
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
    fitted = fit_batch(W, ridge, max_iter, tol, theta, False)
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
        se=lambda: fisher_dense(W, theta, ridge_used, comp, n_comp),
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


def _bt_flat(first, second, outcome, n_items, weights, tau, groups, **options):
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
        method="newman warm-up + newton-cg (jacobi-preconditioned conjugate gradient)" + how,
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


def _bt_features(first, second, outcome, n_items, weights, tau, features, **options):
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

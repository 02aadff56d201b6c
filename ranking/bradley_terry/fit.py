"""Bradley–Terry maximum likelihood from pairwise comparisons (soft or hard outcomes).

Model: P(i beats j) = sigmoid(theta_i - theta_j). Every ordered comparison (i shown first,
j second) is one Bernoulli observation of "i beats j" with outcome y in [0, 1] (1: i wins,
0: j wins, 0.5: a tie, or a soft probability); the presentation order is ignored by the
model. The log-likelihood is sum_c w_c [y_c log s(d_c) + (1 - y_c) log s(-d_c)],
d_c = theta_first - theta_second, minus (ridge / 2) * ||theta||^2 when ridge > 0. The
outcomes are the probabilities themselves (``tau=None``) or the hard decisions at a threshold
(``ranking.decide``).

Solvers (exact Newton methods, converged on max |delta theta| < tol, damped by backtracking
with Armijo's test, ``ranking.bradley_terry.newton``):

* P input (n_contexts, N, N): per context a damped Newton iteration whose N x N Hessian is
  solved by Cholesky, all contexts together as one stack of dense problems in numpy
  (``ranking.bradley_terry.stacked``): nothing to compile.
* flat input (one item set): every connected component is a problem of its own; components
  of up to ``STACK_MAX_ITEMS`` items (systems of a leaderboard, an arena folded into its
  pairs, the candidates of many contexts) are fitted as such a stack too. An item set with a
  larger component takes the compiled sparse solver (``ranking.bradley_terry.flat``): a few
  passes of Newman's (2023) iteration to get close, then a damped inexact Newton iteration
  whose Hessian (a weighted graph Laplacian) is solved by Jacobi-preconditioned conjugate
  gradient, every step a pass over the edge list (no dense n_items x n_items matrix).

Flat input is folded first when that pays (``ranking.bradley_terry.aggregate``): the log-likelihood
is additive in the weights and ignores the presentation order, so identical comparisons become one
edge per compared pair, exactly. The bootstrap of flat input draws multinomial counts over the
folded cells (resampling comparisons) or over ``groups`` (resampling, e.g., whole contexts) and
refits every replicate warm-started in one compiled loop; ``samples`` keeps the replicates
(``ranking.rank_intervals`` turns them into rank intervals).

Fisher intervals, and the bootstrap of P input, are in ``ranking.bradley_terry.intervals``.

With ``features`` (flat input only) the model gains covariates, the Chatbot Arena style
control: logit P(first beats second) = theta_first - theta_second + x @ beta, fitted jointly by
damped Newton with a sparse LU on the item block and a Schur complement on the covariates
(``ranking.bradley_terry.features``); ``coef`` and its Fisher intervals are on the result.

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

import numpy as np

from ranking._core.checks import check_random_state
from ranking._core.score_checks import check_confidence

from .inputs import bt_features, bt_flat, bt_P
from .intervals import MAX_FISHER_ITEMS
from .newton import RIDGE_FALLBACK
from .result import BTResult

__all__ = ["BTResult", "MAX_FISHER_ITEMS", "RIDGE_FALLBACK", "bradley_terry"]


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
        Seed for the bootstrap (``ranking._core.checks.check_random_state``).
    features : array_like of shape (n_comparisons, k), optional
        Flat input only: covariates added to the logit of "first beats second", logit =
        theta_first - theta_second + features @ beta (e.g. a constant 1 for the first-slot
        effect and normalised differences of text features). Scores are then the
        covariate-adjusted thetas and ``coef`` holds beta. Rows with NaN in features or
        outcome are dropped (a note counts them). The ridge applies to theta, not beta.
    ties : {None, "davidson", "rao-kupper"}, default None
        Flat input only: a tie model instead of "a tie is half a win"
        (``ranking.bradley_terry.ties``). The tie parameter and its interval are ``tie_param``,
        ``tie_low``, ``tie_high``.
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
        return bt_P(P, weights, tau, **options)
    if ties is not None:
        if features is not None:
            raise ValueError("ties= and features= cannot be combined (yet): fit one or the other")
        from .ties import fit_ties

        return fit_ties(first, second, outcome, n_items, weights, tau, ties, tie, **options)
    if tie is not None:
        raise ValueError('tie= needs a tie model: pass ties="davidson" or ties="rao-kupper"')
    if features is not None:
        return bt_features(first, second, outcome, n_items, weights, tau, features, **options)
    return bt_flat(first, second, outcome, n_items, weights, tau, groups, **options)


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

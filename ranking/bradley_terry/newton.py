"""What the Bradley–Terry Newton solvers share: the line search, the gauge, the centring.

Every solver maximises a concave penalised log-likelihood by damped Newton steps, damped by
one backtracking rule: t = 1, 1/2, 1/4, ... until Armijo's sufficient-increase test holds.
The compiled solvers (``ranking.bradley_terry.dense``, one N x N Hessian per context, used by
the budget loop; ``ranking.bradley_terry.flat``'s sparse solver for large item sets) call
:func:`line_search`; the numpy ones call :func:`backtrack` (one problem: the tie models and
covariates) or ``ranking.bradley_terry.stacked`` (a stack of problems at once), the same rule
with the same constants. What :func:`line_search` evaluates depends on the problem it is
given:

* ``objective(problem, x)``: the penalised log-likelihood at x;
* ``accept_early(problem, trial, step)``: a cheap acceptance test tried before the objective
  (the flat solver accepts on its gradient at the trial point, which it needs next anyway;
  the dense solver has none).

Each compiled solver module defines its problem (a named tuple of the arrays those two need)
and registers the two for it with ``numba.extending.overload``, so the choice is made when
numba compiles the line search for that problem type, not at run time.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload

from ranking._core.jit import FLAGS, njit

__all__ = [
    "RIDGE_FALLBACK",
    "accept_early",
    "backtrack",
    "line_search",
    "objective",
    "register",
]

#: Ridge used (only) in components whose unpenalised MLE is at infinity when ridge == 0.
RIDGE_FALLBACK = 1e-3
# Armijo constant and the most halvings of one Newton step.
_ARMIJO = 1e-4
_MAX_HALVINGS = 40


def objective(problem, x):
    """The penalised log-likelihood of ``problem`` at ``x`` (numba only: see :func:`register`)."""
    raise NotImplementedError("called from numba-compiled code only")


def accept_early(problem, trial, step):
    """Whether ``trial`` is accepted without the objective (numba only: see :func:`register`)."""
    raise NotImplementedError("called from numba-compiled code only")


def register(problem_class, objective_impl, accept_early_impl):
    """Make :func:`line_search` evaluate problems of ``problem_class`` with these functions.

    ``objective_impl(problem, x)`` and ``accept_early_impl(problem, trial, step)`` are
    numba-compilable functions; ``problem_class`` is the named tuple that carries their
    arrays.
    """

    def applies(problem):
        return getattr(problem, "instance_class", None) is problem_class

    @overload(objective, jit_options=FLAGS)
    def _objective(problem, x):
        return objective_impl if applies(problem) else None

    @overload(accept_early, jit_options=FLAGS)
    def _accept_early(problem, trial, step):
        return accept_early_impl if applies(problem) else None


@njit
def line_search(problem, theta, step, slope, F0, have_F0, trial):
    """Backtracking along the Newton ``step`` from ``theta``; the accepted point is in ``trial``.

    Tries t = 1, 1/2, 1/4, ... (at most ``_MAX_HALVINGS`` times) and stops at the first t for
    which trial = theta + t step passes ``accept_early`` or Armijo's sufficient-increase test
    F(trial) >= F(theta) + c t slope, with slack for rounding near the optimum (``slope`` is
    the gradient times the step). ``F0`` is F(theta) when ``have_F0``; otherwise it is
    computed here, once and only if needed. Returns the step length t taken.
    """
    n = theta.shape[0]
    t = 1.0
    for _ in range(_MAX_HALVINGS):
        for i in range(n):
            trial[i] = theta[i] + t * step[i]
        if accept_early(problem, trial, step):
            break
        if not have_F0:
            F0 = objective(problem, theta)
            have_F0 = True
        F1 = objective(problem, trial)
        if F1 >= F0 + _ARMIJO * t * slope - 1e-13 * (1.0 + abs(F0)):
            break
        t *= 0.5
    return t


def backtrack(objective, theta, step, slope, F0=None):
    """:func:`line_search` for numpy solvers: ``objective(x)`` is the penalised
    log-likelihood (``F0`` its value at ``theta``, computed here when None and needed).

    Tries t = 1, 1/2, ... (at most ``_MAX_HALVINGS`` times) and returns the first
    theta + t step that passes Armijo's test with the same slack for rounding; the last one
    tried otherwise.
    """
    t = 1.0
    trial = theta + step
    for _ in range(_MAX_HALVINGS):
        trial = theta + t * step
        if F0 is None:
            F0 = objective(theta)
        F1 = objective(trial)
        if F1 >= F0 + _ARMIJO * t * slope - 1e-13 * (1.0 + abs(F0)):
            break
        t *= 0.5
    return trial


@njit
def step_size(g, step):
    """max |step| and the slope g . step of a Newton step."""
    max_change = 0.0
    slope = 0.0
    for i in range(step.shape[0]):
        max_change = max(max_change, abs(step[i]))
        slope += g[i] * step[i]
    return max_change, slope


@njit
def stop_step(g, step, theta, tol):
    """:func:`step_size` of a Newton step, and whether the fit stops there: a full step with
    max |step| < tol is within ~tol^2 of the optimum, so it is taken (theta += step).
    Returns (max_change, slope, stop)."""
    max_change, slope = step_size(g, step)
    if max_change < tol:
        for i in range(step.shape[0]):
            theta[i] += step[i]
        return max_change, slope, True
    return max_change, slope, False


@njit
def gauge(comp, n_comp, ridge_vec):
    """Size of every component, and which are shift invariant (no ridge on their items)."""
    comp_size = np.zeros(n_comp)
    gauged = np.zeros(n_comp, np.bool_)
    for i in range(comp.shape[0]):
        if comp[i] >= 0:
            comp_size[comp[i]] += 1.0
            if ridge_vec[i] == 0.0:
                gauged[comp[i]] = True
    return comp_size, gauged


@njit
def log_sigmoid(d):
    """log(1 / (1 + exp(-d))) without overflow for large |d|."""
    if d >= 0.0:
        return -np.log1p(np.exp(-d))
    return d - np.log1p(np.exp(d))


@njit
def sigmoid(d):
    """1 / (1 + exp(-d)) without overflow."""
    if d >= 0.0:
        return 1.0 / (1.0 + np.exp(-d))
    e = np.exp(d)
    return e / (1.0 + e)


@njit
def centre(theta, comp, n_comp):
    """Shift theta to mean 0 within every connected component (items with comp -1 untouched)."""
    n = theta.shape[0]
    sums = np.zeros(n_comp)
    cnt = np.zeros(n_comp)
    for i in range(n):
        if comp[i] >= 0:
            sums[comp[i]] += theta[i]
            cnt[comp[i]] += 1.0
    for i in range(n):
        if comp[i] >= 0:
            theta[i] -= sums[comp[i]] / cnt[comp[i]]


@njit
def centre_gauged(theta, comp, n_comp, gauged):
    """:func:`centre`, only in the shift-invariant components (pins them against drift)."""
    n = theta.shape[0]
    sums = np.zeros(n_comp)
    cnt = np.zeros(n_comp)
    for i in range(n):
        c = comp[i]
        if c >= 0 and gauged[c]:
            sums[c] += theta[i]
            cnt[c] += 1.0
    for i in range(n):
        c = comp[i]
        if c >= 0 and gauged[c]:
            theta[i] -= sums[c] / cnt[c]

"""Input checks shared by the public ranking functions: clear ValueErrors, never silent.

One place for what every function of ``ranking`` checks the same way: P (:func:`as_P`),
flat comparisons (:func:`check_flat`), a decision threshold tau, scalar or one per context
(:func:`check_tau`), and the seed of anything random (:func:`check_random_state`).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_P", "check_flat", "check_random_state", "check_tau", "check_weights", "weights_on"]


def as_P(P, *, name: str = "P", allow_empty: bool = False) -> np.ndarray:
    """Return ``P`` as a C-contiguous float64 array of shape (n_contexts, N, N).

    A 2-D (N, N) matrix is treated as one context. Raises ValueError for a wrong shape,
    N < 2, values outside [0, 1], no contexts, or (unless ``allow_empty``) no comparison in
    any context (nothing to rank). NaN marks a pair that was not compared; the diagonal is
    ignored (set to NaN in the copy returned).

    A context with no comparison at all (an all-NaN block, e.g. every answer for that item
    unparsed) is accepted as long as another context has one: every public function handles
    it, the rankings with NaN scores for its candidates, the pooled statistics by skipping it
    and counting it (``ranking._core.pooled``). The pooled statistics pass ``allow_empty=True``:
    with no comparison anywhere their value is NaN with a reason, not an error.
    """
    arr = np.asarray(P, dtype=np.float64)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
        raise ValueError(
            f"{name} must have shape (n_contexts, N, N) or (N, N); got shape {np.shape(P)}"
        )
    n_contexts, n_items, _ = arr.shape
    if n_contexts == 0:
        raise ValueError(f"{name} has no contexts (shape {arr.shape})")
    if n_items < 2:
        raise ValueError(f"{name} needs at least 2 candidates per context; got N = {n_items}")
    arr = np.ascontiguousarray(arr).copy()
    idx = np.arange(n_items)
    arr[:, idx, idx] = np.nan
    finite = np.isfinite(arr)
    bad = finite & ((arr < 0.0) | (arr > 1.0))
    if bad.any():
        c, i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} holds probabilities, so values must lie in [0, 1]; "
            f"{name}[{c}, {i}, {j}] = {arr[c, i, j]!r} ({int(bad.sum())} value(s) out of range)"
        )
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains infinite values; use NaN for pairs not compared")
    if not allow_empty and not finite.any():
        raise ValueError(
            f"{name} has no comparison at all (all {n_contexts} context(s) are all NaN); "
            "check that the judge's answers were parsed"
        )
    return arr


def check_tau(tau, n_contexts=None, *, P=None, allow_none=False, broadcast=False, name="tau"):
    """A decision threshold: a probability, or one per context (shape (n_contexts,)).

    Parameters
    ----------
    tau : float, array_like of shape (n_contexts,), or None
        The first candidate wins when p > tau, loses when p < tau (a tie at p == tau). A
        per-context tau may be NaN for a context without any comparison (nothing to decide
        there: what ``balanced_threshold(P, per_context=True)`` gives such a context).
    n_contexts : int, optional
        Number of contexts. Without it (and without ``P``: flat comparisons, one item set)
        only a scalar is accepted.
    P : ndarray, optional
        The checked P (leading axis: contexts); gives ``n_contexts`` and tells which contexts
        have no comparison, where a NaN tau is accepted.
    allow_none : bool, default False
        Accept None (soft outcomes, for the functions that turn P into scores) and return it.
    broadcast : bool, default False
        Return one tau per context (a float64 array of shape (n_contexts,)) even for a
        scalar, as the numba kernels take it.

    Returns
    -------
    float, ndarray of shape (n_contexts,), or None
        A scalar comes back as a float (unless ``broadcast``), a per-context tau as a
        float64 array.

    Raises
    ------
    ValueError
        tau outside [0, 1], NaN (except for a context without comparisons), or a
        per-context tau of the wrong shape.
    """
    if P is not None and n_contexts is None:
        n_contexts = P.shape[0]
    if tau is None:
        if allow_none:
            return None
        raise ValueError(f"{name} must be a probability threshold in [0, 1]; got None")
    t = np.asarray(tau, dtype=np.float64)
    if t.ndim == 0:
        out = float(t)
    elif t.ndim == 1 and n_contexts is not None and t.shape[0] == n_contexts:
        out = np.ascontiguousarray(t)
    else:
        where = (
            f"a scalar or one per context, shape ({n_contexts},)"
            if n_contexts is not None
            else "a scalar (flat comparisons have no contexts)"
        )
        raise ValueError(f"{name} must be {where}; got shape {t.shape}")
    bad = ~((t >= 0.0) & (t <= 1.0))
    if t.ndim == 1 and P is not None and bad.any():
        # NaN is fine where there is nothing to decide
        empty = ~np.isfinite(P.reshape(n_contexts, -1)).any(axis=1)
        bad &= ~(np.isnan(t) & empty)
    if bad.any():
        shown = tau if t.ndim == 0 else f"{name}[{int(np.flatnonzero(bad)[0])}] = {t[bad][0]}"
        raise ValueError(f"{name} is a probability threshold and must lie in [0, 1]; got {shown}")
    if broadcast:
        return np.ascontiguousarray(np.broadcast_to(np.float64(out), (n_contexts,)))
    return out


def check_random_state(random_state):
    """The numpy Generator behind ``random_state``: None (fresh entropy), an int seed, or a
    Generator (used as it is, so a caller can share one stream between calls).

    Raises
    ------
    ValueError
        Anything else (a float, a bool, a negative int, a legacy RandomState).
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool | np.bool_):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int seed; got {random_state}")
        return np.random.default_rng(int(random_state))
    raise ValueError(
        "random_state must be None, a non-negative int seed or a numpy.random.Generator; "
        f"got {random_state!r} ({type(random_state).__name__})"
    )


def check_weights(weights, shape, *, name: str = "weights", of: str = "comparisons"):
    """``weights`` as a C-contiguous float64 array of ``shape``, or None for None (all 1).

    A comparison's weight is how many games' worth it counts (Arena-Hard: 3 for a strong
    verdict); it is not a number of samples. Raises ValueError for a wrong shape or a weight
    that is not a finite number > 0, naming the first offending position. NaN is accepted
    only where ``of`` has no comparison: the P-shaped callers pass their mask through
    :func:`weights_on`.
    """
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != tuple(shape):
        raise ValueError(
            f"{name} must have the shape of the {of} {tuple(shape)}; got shape {w.shape}"
        )
    bad = ~(np.isfinite(w) & (w > 0.0))
    if bad.any():
        k = tuple(int(x) for x in np.argwhere(bad)[0])
        at = k[0] if len(k) == 1 else k
        raise ValueError(
            f"{name} must be finite numbers > 0 (a weight is how many games a comparison "
            f"counts); {name}[{at}] = {float(w[k])!r} ({int(bad.sum())} bad value(s))"
        )
    return np.ascontiguousarray(w)


def weights_on(P, weights, *, name: str = "weights"):
    """Weights of the comparisons of a checked ``P`` (same shape): None for None; else the
    weights as float64 with 0 where P has no comparison. Where P has one, each weight must be
    a finite number > 0 (what lies elsewhere, NaN included, is ignored)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2 and P.shape[0] == 1:
        w = w[None]
    if w.shape != P.shape:
        raise ValueError(
            f"{name} must have the shape of P {P.shape}; got shape {np.shape(weights)}"
        )
    present = np.isfinite(P)
    checked = check_weights(np.where(present, w, 1.0), P.shape, name=name, of="P")
    return np.where(present, checked, 0.0)


def _scan_flat(first, second, outcome, weights, n_items):
    """One pass over flat comparisons: (problem code, first offending position) or (0, -1).

    Codes: 1 first out of range, 2 second out of range, 3 self-comparison, 4 outcome not in
    [0, 1], 5 weight negative or not finite, 6 all weights zero. At the first position with
    a problem the lowest code wins.
    """
    has_w = weights.shape[0] > 0
    with np.errstate(invalid="ignore"):
        bad = [
            (first < 0) | (first >= n_items),
            (second < 0) | (second >= n_items),
            first == second,
            ~((outcome >= 0.0) & (outcome <= 1.0)),
        ]
        if has_w:
            bad.append(~((weights >= 0.0) & (weights < np.inf)))
    anywhere = np.logical_or.reduce(bad)
    if anywhere.any():
        k = int(np.argmax(anywhere))
        code = next(c for c, mask in enumerate(bad, start=1) if mask[k])
        return code, k
    if has_w and not (weights > 0.0).any():
        return 6, -1
    return 0, -1


def check_flat(first, second, outcome, n_items, weights=None, *, name="comparisons"):
    """Validate flat comparison arrays; returns (first, second, outcome, weights, n_items).

    ``first`` and ``second`` are integer item indices, ``outcome`` floats in [0, 1],
    ``weights`` non-negative floats (default 1). Raises ValueError naming the problem.
    """
    if first is None or second is None or outcome is None:
        raise ValueError(f"{name}: first, second and outcome are all required")
    first = np.asarray(first)
    second = np.asarray(second)
    outcome = np.asarray(outcome, dtype=np.float64)
    for label, arr in (("first", first), ("second", second), ("outcome", outcome)):
        if arr.ndim != 1:
            raise ValueError(f"{name}: {label} must be 1-D; got shape {arr.shape}")
    if not (len(first) == len(second) == len(outcome)):
        raise ValueError(
            f"{name}: first, second and outcome must have the same length; got "
            f"{len(first)}, {len(second)}, {len(outcome)}"
        )
    if len(first) == 0:
        raise ValueError(f"{name}: no comparisons (empty arrays)")
    for label, arr in (("first", first), ("second", second)):
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(
                f"{name}: {label} must hold integer item indices; got dtype {arr.dtype}"
            )
    if n_items is None:
        n_items = int(max(first.max(), second.max())) + 1
    if int(n_items) != n_items or n_items < 2:
        raise ValueError(f"{name}: n_items must be an integer >= 2; got {n_items!r}")
    n_items = int(n_items)
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != outcome.shape:
            raise ValueError(
                f"{name}: weights must have the same length as outcome; got shape "
                f"{weights.shape} for {len(outcome)} comparisons"
            )
    code, k = _scan_flat(
        first, second, outcome, np.empty(0) if weights is None else weights, n_items
    )
    if code == 1 or code == 2:
        label, arr = ("first", first) if code == 1 else ("second", second)
        raise ValueError(
            f"{name}: {label}[{k}] = {int(arr[k])} is out of range for n_items = {n_items}"
        )
    if code == 3:
        raise ValueError(f"{name}: comparison {k} compares item {int(first[k])} with itself")
    if code == 4:
        n_bad = int((~np.isfinite(outcome) | (outcome < 0.0) | (outcome > 1.0)).sum())
        raise ValueError(
            f"{name}: outcome must be finite and lie in [0, 1]; outcome[{k}] = {outcome[k]!r} "
            f"({n_bad} bad value(s)); drop unparsed comparisons before ranking"
        )
    if code == 5:
        raise ValueError(f"{name}: weights must be finite and >= 0; weights[{k}] = {weights[k]!r}")
    if weights is None:
        weights = np.ones(len(first))
    elif code == 6:
        raise ValueError(f"{name}: all weights are 0, nothing to fit")
    idx_dtype = np.int32 if n_items < 2**31 - 1 else np.int64
    return (
        np.ascontiguousarray(first, dtype=idx_dtype),
        np.ascontiguousarray(second, dtype=idx_dtype),
        np.ascontiguousarray(outcome),
        np.ascontiguousarray(weights),
        n_items,
    )

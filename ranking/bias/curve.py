"""The threshold curve: position bias, pairwise accuracy and Spearman along a grid of taus.

What ``position_bias``, ``win_ratio`` + ``spearman`` and ``pairwise_accuracy`` give at each
threshold of a grid, computed on the compared cells of P only and for many thresholds at
once. An Arena-Hard-style P (500 questions x 76 systems, each question a star of 75 systems
against the baseline) has 2.9M cells of which 75k are compared: the per-tau loop over the
dense P took 47 s for 103 thresholds, this takes a fraction of a second.

Thresholds that lie in the same gap between the distinct values of P (or on the same
value) take the same decisions, so the work is done once per such class of thresholds.
Sums are taken in the order of the dense functions where the values could tie (win-ratio
wins, whose ranks decide Spearman), so the curve equals the per-tau values exactly up to the
rounding of weighted sums (1e-15 relative).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ranking._core.checks import as_P, weights_on
from ranking.agreement.metrics import _centred_ranks, _rho_centred, as_reference

__all__ = ["ThresholdCurve", "threshold_curve"]

#: Most (threshold, contribution) values built at once (8 bytes each, a few arrays of it).
_BLOCK = 1 << 22


@dataclass(frozen=True)
class ThresholdCurve:
    """Per threshold of ``tau`` (each an array of the same length as ``tau``).

    ``position_bias``: the pooled first-position win rate (``position_bias(P, tau,
    weights=weights)``); ``accuracy``: the pooled pairwise accuracy against the reference
    (``pairwise_accuracy(P, reference, tau)``); ``spearman``: the mean over contexts, where
    defined, of Spearman's rho between the win-ratios at tau (``win_ratio(P, tau,
    weights=weights)``) and the reference. NaN where undefined, and ``accuracy`` and
    ``spearman`` all NaN without a reference.
    """

    tau: np.ndarray
    position_bias: np.ndarray
    accuracy: np.ndarray
    spearman: np.ndarray


def _check_taus(taus) -> np.ndarray:
    t = np.asarray(taus, dtype=np.float64)
    if t.ndim != 1:
        raise ValueError(f"taus must be a 1-D grid of thresholds; got shape {t.shape}")
    bad = ~((t >= 0.0) & (t <= 1.0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"taus are probability thresholds and must lie in [0, 1]; got taus[{k}] = {float(t[k])!r}"
        )
    return np.ascontiguousarray(t)


def _classes(p, taus):
    """Thresholds taking the same decisions on the values ``p``: (one representative
    threshold per class, the class of each threshold)."""
    u = np.unique(p)
    k = np.searchsorted(u, taus, side="left")
    on_value = (k < u.shape[0]) & (u[np.minimum(k, u.shape[0] - 1)] == taus)
    signature = 2 * k + on_value
    _, first, inverse = np.unique(signature, return_index=True, return_inverse=True)
    return taus[first], inverse.reshape(-1)


def _decide(p, taus):
    """Decisions (len(taus), len(p)) by ``ranking.decide``'s rule on finite ``p``."""
    t = taus[:, None]
    return np.where(p > t, 1.0, np.where(p < t, 0.0, 0.5))


def threshold_curve(P, taus, reference=None, weights=None) -> ThresholdCurve:
    """Position bias, pairwise accuracy and mean Spearman at every threshold of ``taus``.

    Parameters
    ----------
    P : array_like, shape (n_contexts, N, N) or (N, N)
        P[c, i, j] = probability that i (shown first) beats j (shown second); NaN where not
        compared. Contexts without any comparison are allowed (skipped), a P without any
        comparison is not (no win-ratio to rank, as ``win_ratio``).
    taus : array_like of shape (n_taus,)
        The thresholds, each in [0, 1]: the first candidate wins when p > tau, loses when
        p < tau, and a tie (p == tau) is half a win each (``ranking.decide``).
    reference : array_like of shape (n_contexts, N) or (N,), optional
        Reference (e.g. human) scores, NaN where missing; None: no accuracy nor Spearman.
    weights : array_like of P's shape, optional
        How many games each comparison counts, as in ``win_ratio`` and ``position_bias``
        (pairwise accuracy counts every comparison once, as ``pairwise_accuracy``).

    Returns
    -------
    ThresholdCurve
        Per threshold: the pooled first-position win rate, the pooled pairwise accuracy and
        the mean over contexts of Spearman's rho (win-ratio against the reference; contexts
        where rho is undefined left out, NaN when it is undefined everywhere): the values
        ``position_bias``, ``pairwise_accuracy`` and ``spearman(win_ratio(...), reference)``
        give at each threshold.

    Raises
    ------
    ValueError
        Bad P, taus, reference or weights; a P without any comparison.
    """
    P = as_P(P)
    w = weights_on(P, weights)
    taus = _check_taus(taus)
    n_contexts, n_items, _ = P.shape
    ref = None if reference is None else as_reference(reference, n_contexts, n_items)
    n_taus = taus.shape[0]
    out_pb = np.full(n_taus, np.nan)
    out_acc = np.full(n_taus, np.nan)
    out_rho = np.full(n_taus, np.nan)
    if n_taus == 0:
        return ThresholdCurve(taus, out_pb, out_acc, out_rho)

    present = np.isfinite(P)
    c, i, j = np.nonzero(present)
    p = P[c, i, j]
    m = p.shape[0]
    wc = None if w is None else w[c, i, j]
    reps, cls = _classes(p, taus)

    # first-position win rate: wins / comparisons over every compared cell
    pb_den = float(m) if wc is None else float(wc.sum())

    # pairwise accuracy: the cells whose two reference scores are finite and differ
    if ref is not None:
        ri, rj = ref[c, i], ref[c, j]
        use = np.isfinite(ri) & np.isfinite(rj) & (ri != rj)
        acc_p, acc_gt, acc_den = p[use], ri[use] > rj[use], int(use.sum())

    # win-ratio: every cell adds d (times its weight) to the wins of i and 1 - d to those of
    # j. Each item's wins are summed in win_ratio's order (as the second candidate of rows
    # i < u, its own row, then as the second of rows i > u): stable-sorted by that key,
    # np.bincount adds them in the same order, so tied win-ratios stay tied.
    if w is None:
        counts = present.sum(axis=2) + present.sum(axis=1)
    else:
        counts = w.sum(axis=2) + w.sum(axis=1)
    if ref is not None:
        key = np.concatenate([n_items + j, np.where(i < j, i, 2 * n_items + i)])
        order = np.argsort(key, kind="stable")
        src = np.concatenate([np.arange(m), np.arange(m)])[order]
        is_row = (order < m)[None, :]
        target = np.concatenate([c * n_items + i, c * n_items + j])[order]
        w_src = None if wc is None else wc[src]
        valid = (counts > 0) & np.isfinite(ref)
        rcb, nv = _centred_ranks(ref, valid)
        ss_b = (rcb * rcb).sum(axis=1)
        ranked = np.flatnonzero(nv >= 2)  # rho is NaN elsewhere
        rcb, ss_b, valid_r = rcb[ranked], ss_b[ranked], valid[ranked]
        cnt = counts.astype(np.float64)

    n_cells = n_contexts * n_items
    step = max(1, _BLOCK // max(1, 2 * m))
    pb = np.empty(reps.shape[0])
    acc = np.full(reps.shape[0], np.nan)
    rho_mean = np.full(reps.shape[0], np.nan)
    for b0 in range(0, reps.shape[0], step):
        tb = reps[b0 : b0 + step]
        nb = tb.shape[0]
        d = _decide(p, tb)
        pb[b0 : b0 + nb] = (d.sum(axis=1) if wc is None else (d * wc).sum(axis=1)) / pb_den
        if ref is None:
            continue
        if acc_den:
            da = _decide(acc_p, tb)
            acc[b0 : b0 + nb] = np.where(acc_gt, da, 1.0 - da).sum(axis=1) / acc_den
        ds = d[:, src]
        vals = np.where(is_row, ds, 1.0 - ds)
        if w_src is not None:
            vals = vals * w_src
        idx = (np.arange(nb) * n_cells)[:, None] + target[None, :]
        wins = np.bincount(idx.ravel(), vals.ravel(), minlength=nb * n_cells)
        wins = wins.reshape(nb, n_contexts, n_items)
        with np.errstate(invalid="ignore", divide="ignore"):
            wr = np.where(counts > 0, wins / cnt, np.nan)[:, ranked]
        if ranked.size == 0:
            continue
        n_r = ranked.size
        rca, _ = _centred_ranks(
            wr.reshape(nb * n_r, n_items), np.broadcast_to(valid_r, wr.shape).reshape(-1, n_items)
        )
        rca = rca.reshape(nb, n_r, n_items)
        rho = _rho_centred((rca * rcb).sum(axis=2), (rca * rca).sum(axis=2), ss_b[None, :])
        for k in range(nb):
            r = rho[k][np.isfinite(rho[k])]
            if r.size:
                rho_mean[b0 + k] = r.mean()
    return ThresholdCurve(taus, pb[cls], acc[cls], rho_mean[cls])

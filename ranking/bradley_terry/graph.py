"""The comparison graph of a flat item set, in numpy and scipy: connected components, the
MLE-existence check of the beats graph, the gauge and the centring per component.

Conventions are those of every Bradley–Terry fit (``ranking.bradley_terry``): components are
numbered 0, 1, ... in the order of their smallest item, items never compared (no edge with a
positive weight) get -1; a component's MLE is finite (with ridge 0) exactly when its beats
graph (i -> j when i has positive win weight against j) is strongly connected.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

__all__ = ["centred", "components", "finite_mle", "gauge", "information"]


def components(ei, ej, w, n):
    """(component per item, number of components) of the edges with positive weight."""
    keep = w > 0.0
    a, b = ei[keep], ej[keep]
    comp = np.full(n, -1, np.int64)
    if a.size == 0:
        return comp, 0
    present = np.zeros(n, bool)
    present[a] = present[b] = True
    graph = coo_matrix((np.ones(a.size), (a, b)), shape=(n, n))
    _, label = connected_components(graph, directed=True, connection="weak")
    items = np.flatnonzero(present)
    # renumber by each component's smallest item (``np.unique`` keeps first occurrences)
    found, first = np.unique(label[items], return_index=True)
    rank = np.empty(found.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(found.size)
    comp[items] = rank[np.searchsorted(found, label[items])]
    return comp, int(found.size)


def finite_mle(ei, ej, wy, w, n, comp, n_comp):
    """Per component: is the beats graph strongly connected (the MLE finite with ridge 0)?"""
    ok = np.ones(n_comp, bool)
    if n_comp == 0:
        return ok
    win, loss = wy > 0.0, (w - wy) > 0.0
    src = np.concatenate([ei[win], ej[loss]])
    dst = np.concatenate([ej[win], ei[loss]])
    graph = coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    _, strong = connected_components(graph, directed=True, connection="strong")
    items = np.flatnonzero(comp >= 0)
    pairs = np.unique(comp[items] * np.int64(n) + strong[items])
    ok[np.bincount(pairs // n, minlength=n_comp) > 1] = False
    return ok


def gauge(comp, n_comp, ridge_vec):
    """Size of every component, and which are shift invariant (no ridge on their items)."""
    present = comp >= 0
    size = np.bincount(comp[present], minlength=n_comp).astype(np.float64)
    gauged = np.zeros(n_comp, bool)
    gauged[comp[present & (ridge_vec == 0.0)]] = True
    return size, gauged


def information(ei, ej, w, theta, ridge):
    """The Fisher information (the negative Hessian of the log-likelihood) at ``theta`` of
    the comparisons ei[e] vs ej[e] with weights w[e], plus ``ridge`` (a number or one per
    item) on the diagonal: a dense n x n matrix, n = theta.size."""
    n = theta.size
    s = 1.0 / (1.0 + np.exp(-(theta[ei] - theta[ej])))
    h = w * s * (1.0 - s)
    H = np.zeros((n, n))
    np.add.at(H, (ei, ej), -h)
    np.add.at(H, (ej, ei), -h)
    H[np.diag_indices(n)] = -H.sum(axis=1) + ridge
    return H


def centred(theta, comp, n_comp):
    """theta shifted to mean 0 within every component (items with component -1 untouched)."""
    present = comp >= 0
    size = np.bincount(comp[present], minlength=n_comp)
    mean = np.bincount(comp[present], theta[present], minlength=n_comp) / np.maximum(size, 1)
    out = theta.copy()
    out[present] -= mean[comp[present]]
    return out

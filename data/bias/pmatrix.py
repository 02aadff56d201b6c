"""One P per judge: the calibration layout derived from the transitivity layout.

The transitivity tables read the judge's P in candidate-table order with every candidate
of a compared context (``cycles.cycles_pmatrix``); the calibration tables read it as
``data.comparative.judge_pmatrix`` lays it out (contexts with a parsed comparison, sorted;
per context the compared candidates, sorted). Both average the same parsed samples of the
same rows into the same cells, so the second is a re-indexing of the first:
:func:`compared_layout` gathers it instead of averaging the comparisons a second time.
:func:`table_order_P` builds the first by integer lookups (``comparisons_to_P``'s floats
without its string merges).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.arrays import PMatrix, comparisons_to_P
from data.bias._pairs_common import candidate_index

__all__ = ["compared_layout", "table_order_P"]


def compared_layout(pm: PMatrix) -> PMatrix | None:
    """``pm`` re-laid out as ``data.comparative.judge_pmatrix`` builds it.

    Parameters
    ----------
    pm : PMatrix
        A P built by ``data.arrays.comparisons_to_P`` with a ``candidates`` order (e.g.
        ``data.bias.cycles_pmatrix``): unparsed samples counted nowhere, candidates never
        compared present with empty rows.

    Returns
    -------
    PMatrix or None
        Contexts with at least one parsed sample, sorted by id; per context the candidates
        with a parsed sample (first or second), sorted by id; ``P`` and ``counts`` gathered
        from ``pm`` (the same floats, NaN / 0 in padding). None when no cell holds a parsed
        sample.
    """
    counts = np.asarray(pm.counts)
    seen = (counts.sum(axis=2) + counts.sum(axis=1)) > 0  # (n_contexts, N): parsed samples
    kept = [c for c in range(len(pm.context_ids)) if seen[c].any()]
    if not kept:
        return None
    kept.sort(key=lambda c: pm.context_ids[c])
    rows = []
    for c in kept:
        ids = pm.candidate_ids[c]
        idx = [i for i in np.flatnonzero(seen[c]) if i < len(ids)]
        rows.append(sorted(idx, key=lambda i, ids=ids: ids[i]))
    n_max = max(len(r) for r in rows)
    n = len(kept)
    # padded gather: index n_max-wide rows, padding pointed at a cell then masked
    take = np.zeros((n, n_max), dtype=np.int64)
    real = np.zeros((n, n_max), dtype=bool)
    for k, r in enumerate(rows):
        take[k, : len(r)] = r
        real[k, : len(r)] = True
    ctx = np.asarray(kept, dtype=np.int64)[:, None, None]
    gi, gj = take[:, :, None], take[:, None, :]
    mask = real[:, :, None] & real[:, None, :]
    P = np.where(mask, np.asarray(pm.P)[ctx, gi, gj], np.nan)
    cnt = np.where(mask, counts[ctx, gi, gj], 0).astype(np.int64)
    return PMatrix(
        P=P,
        context_ids=[pm.context_ids[c] for c in kept],
        candidate_ids=[
            [pm.candidate_ids[c][i] for i in r] for c, r in zip(kept, rows, strict=True)
        ],
        counts=cnt,
        attribute=pm.attribute,
        judge=pm.judge,
    )


def table_order_P(ds, rows: pd.DataFrame, attribute: str, judge: str) -> PMatrix:
    """``comparisons_to_P(rows, attribute=, judge=, candidates=ds.candidates)``, faster.

    Parameters
    ----------
    ds : Dataset
        Its candidates table fixes the layout.
    rows : pandas.DataFrame
        The comparisons of one attribute and judge (unparsed rows included), non-empty.
    attribute, judge : str
        Recorded on the result.

    Returns
    -------
    PMatrix
        The contexts with a row, in candidate-table order, each with all its candidates in
        table order; P the mean of the parsed samples per ordered pair (``np.bincount`` over
        the rows in their order, as ``comparisons_to_P``). A row naming a candidate or
        context missing from the candidates table, or a candidate compared with itself, is
        left to ``comparisons_to_P`` (its error message).
    """
    idx = candidate_index(ds)
    gf = idx.lookup(rows["context_id"], rows["first_id"])
    gs = idx.lookup(rows["context_id"], rows["second_id"])
    if not len(rows) or (gf < 0).any() or (gs < 0).any() or (gf == gs).any():
        return comparisons_to_P(rows, attribute=attribute, judge=judge, candidates=ds.candidates)
    ctx_of = idx.ctx_rank  # each candidate's context, numbered in table order
    present = np.unique(ctx_of[gf])  # contexts with a row, in table order
    sub = np.full(int(ctx_of.max()) + 1, -1, dtype=np.int64)
    sub[present] = np.arange(len(present))
    members = np.flatnonzero(sub[ctx_of] >= 0)  # candidates of those contexts, table order
    sizes = np.bincount(sub[ctx_of[members]], minlength=len(present))
    n_max = int(sizes.max())
    c = sub[ctx_of[gf]]
    p = rows["p_first"].to_numpy(dtype=np.float64)
    valid = np.isfinite(p)
    flat = (c * n_max + idx.pos[gf]) * n_max + idx.pos[gs]
    size = len(present) * n_max * n_max
    sums = np.bincount(flat[valid], weights=p[valid], minlength=size)
    counts = np.bincount(flat[valid], minlength=size).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        P = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    table = idx.table
    ctx_names = table["context_id"].astype(str).to_numpy(dtype=object)
    cand = table["candidate_id"].astype(str).to_numpy(dtype=object)
    order = members[np.argsort(sub[ctx_of[members]], kind="stable")]
    bounds = np.cumsum(sizes)[:-1]
    return PMatrix(
        P=P.reshape(len(present), n_max, n_max),
        context_ids=[str(ctx_names[g[0]]) for g in np.split(order, bounds)],
        candidate_ids=[cand[g].tolist() for g in np.split(order, bounds)],
        counts=counts.reshape(len(present), n_max, n_max),
        attribute=attribute,
        judge=judge,
    )

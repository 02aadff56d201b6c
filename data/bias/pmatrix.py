"""One P per judge: the calibration layout derived from the transitivity layout.

The transitivity tables read the judge's P in candidate-table order with every candidate
of a compared context (``cycles.cycles_pmatrix``); the calibration tables read it as
``data.comparative.tables.judge_pmatrix`` lays it out (contexts with a parsed comparison, sorted;
per context the compared candidates, sorted). Both average the same parsed samples of the
same rows into the same cells, so the second is a re-indexing of the first:
:func:`compared_layout` gathers it instead of averaging the comparisons a second time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from data.arrays import PMatrix

__all__ = ["compared_layout", "prebuilt"]


def compared_layout(pm: PMatrix) -> PMatrix | None:
    """``pm`` re-laid out as ``data.comparative.tables.judge_pmatrix`` builds it.

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


def prebuilt(pm, ds, attribute, judge, build: Callable, name: str = "pm", hint: str = ""):
    """A caller's prebuilt PMatrix checked against the selection, or built here when None.

    Parameters
    ----------
    pm : PMatrix or None
        The prebuilt P (None: ``build(ds, attribute, judge)``, which may return None).
    ds, attribute, judge
        The selection it must be of.
    build : callable
        ``build(ds, attribute, judge)`` builds it; its name is the error's advice.
    name, hint : str
        The parameter's name, and what to pass instead when not ``build(...)``, for the error.

    Raises
    ------
    ValueError
        ``pm`` was built for another attribute or judge.
    """
    if pm is None:
        return build(ds, attribute, judge)
    if (pm.attribute, pm.judge) != (str(attribute), str(judge)):
        raise ValueError(
            f"{name} was built for attribute {pm.attribute!r}, judge {pm.judge!r}, not "
            f"{attribute!r}, {judge!r}: pass {hint or build.__name__ + '(ds, attribute, judge)'}"
        )
    return pm

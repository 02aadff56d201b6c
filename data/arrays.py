"""From canonical tables to the numpy arrays the ranking engine works on.

``ranking`` sees no pandas: it gets ``P`` of shape (n_contexts, N_max, N_max) with
``P[c, i, j]`` = mean p_first over the samples where candidate i was shown first and j
second (NaN where the pair was not compared and in padding; with weights, the weighted
mean, the cell's mean weight beside it in ``PMatrix.weights``), score matrices of shape
(n_contexts, N_max), or flat index arrays for one large item set (Bradley–Terry over
systems, in ``data.flat``). The ids that give rows and columns their meaning travel beside
the arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from data.schema import DEFAULT_WEIGHT, DataError


@dataclass
class PMatrix:
    """Pairwise preference probabilities of one attribute and one judge.

    Attributes
    ----------
    P : ndarray of float64, shape (n_contexts, N_max, N_max)
        ``P[c, i, j]`` = mean p_first over samples for candidate i first, j second; NaN
        where not compared (or every sample unparsed), on the diagonal and in padding.
    context_ids : list of str
        Context of each first-axis entry.
    candidate_ids : list of list of str
        Candidate of each row/column per context (``len(candidate_ids[c])`` <= N_max; the
        rest is padding).
    counts : ndarray of int64, same shape as ``P``
        Number of parsed samples averaged into each cell (comparisons, never weight).
    attribute, judge : str or None
        The selection the matrix was built from.
    weights : ndarray of float64, same shape as ``P``, or None
        The comparisons' weights (the ``weight`` column: how many games a comparison counts,
        Arena-Hard's 3 for a strong verdict): per cell the mean weight of its parsed
        samples (so repeated samples of one comparison stay one comparison, as in ``P``),
        NaN where ``P`` is; ``P`` is then the weighted mean of the samples. None when every
        weight is 1 (or the table has no weight column): each comparison counts once.
        Hand it to ``ranking``'s ``weights=`` (win-ratio, Bradley–Terry, position bias).
    """

    P: np.ndarray
    context_ids: list[str]
    candidate_ids: list[list[str]]
    counts: np.ndarray
    attribute: str | None = None
    judge: str | None = None
    weights: np.ndarray | None = None

    @property
    def n_candidates(self) -> np.ndarray:
        """Number of real (non-padding) candidates per context, int64."""
        return np.array([len(c) for c in self.candidate_ids], dtype=np.int64)


def _need_columns(table: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise DataError(
            f"{what}: column(s) {', '.join(missing)} missing (columns: "
            f"{', '.join(map(str, table.columns))}); pass a canonical table"
        )


def row_weights(table: pd.DataFrame, what: str = "comparisons") -> np.ndarray:
    """The weight of every row of a comparisons table (float64): its ``weight`` column, an
    empty cell (or no column) counting ``DEFAULT_WEIGHT`` (1).

    Raises
    ------
    DataError
        A weight that is not a finite number > 0, with its row (context, first, second).
    """
    if "weight" not in table.columns:
        return np.full(len(table), DEFAULT_WEIGHT)
    raw = table["weight"]
    w = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, copy=True)
    empty = raw.isna().to_numpy()
    w[empty] = DEFAULT_WEIGHT
    bad = ~(np.isfinite(w) & (w > 0.0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        where = ", ".join(
            f"{c} {table[c].iloc[k]!r}"
            for c in ("context_id", "first_id", "second_id")
            if c in table.columns
        )
        raise DataError(
            f"{what}: {int(bad.sum())} row(s) have a weight that is not a number > 0 (e.g. "
            f"{raw.iloc[k]!r} at row {k + 1}: {where}); a weight says how many games a "
            "comparison counts: give a number > 0, or leave the cell empty for 1"
        )
    return w


def _select(table: pd.DataFrame, column: str, value, what: str, arg: str) -> pd.DataFrame:
    """Rows of ``table`` with ``column == value``; with ``value`` None there must be one choice."""
    if column not in table.columns:
        return table
    present = sorted(table[column].dropna().astype(str).unique())
    if value is None:
        if len(present) > 1:
            shown = ", ".join(repr(v) for v in present[:12]) + (" ..." if len(present) > 12 else "")
            raise DataError(
                f"{what} holds several {column} values ({shown}); choose one with {arg}=..."
            )
        return table
    if str(value) not in present:
        shown = ", ".join(repr(v) for v in present[:12]) or "none"
        raise DataError(f"{what} has no rows with {column} = {value!r}; available: {shown}")
    return table[table[column].astype(str) == str(value)]


def _single(table: pd.DataFrame, column: str) -> str | None:
    if column not in table.columns or not len(table):
        return None
    vals = table[column].dropna().unique()
    return str(vals[0]) if len(vals) == 1 else None


def _order_from_candidates(candidates) -> dict[str, list[str]]:
    """context -> candidate ids in table order, from a candidates table or a mapping."""
    if isinstance(candidates, Mapping):
        return {str(k): [str(x) for x in v] for k, v in candidates.items()}
    _need_columns(candidates, ["context_id", "candidate_id"], "candidates")
    pairs = pd.DataFrame(
        {
            "context_id": candidates["context_id"].astype(str).to_numpy(dtype=object),
            "candidate_id": candidates["candidate_id"].astype(str).to_numpy(dtype=object),
        }
    ).drop_duplicates()
    # contexts in order of first appearance, each one's candidates in table order
    codes, contexts = pd.factorize(pairs["context_id"].to_numpy(dtype=object))
    cands = pairs["candidate_id"].to_numpy(dtype=object)[np.argsort(codes, kind="stable")]
    if not len(contexts):
        return {}
    ends = np.cumsum(np.bincount(codes, minlength=len(contexts))).tolist()
    cands = cands.tolist()
    return {
        ctx: cands[a:b] for ctx, a, b in zip(contexts.tolist(), [0, *ends[:-1]], ends, strict=True)
    }


class _Layout(NamedTuple):
    """(context, candidate) -> (c, i) of a layout, through integer codes."""

    contexts: pd.Index  # distinct context ids -> context code
    names: pd.Index  # distinct candidate ids -> candidate code
    keys: pd.Index  # context code * len(names) + candidate code, one per cell
    c: np.ndarray  # int64 context row of each cell
    i: np.ndarray  # int64 position in its context of each cell


def _positions(context_ids: Sequence[str], candidate_ids: Sequence[Sequence[str]]) -> _Layout:
    """Lookup of a layout (a repeated context or candidate: its first place)."""
    sizes = np.fromiter((len(c) for c in candidate_ids), dtype=np.int64, count=len(candidate_ids))
    ctx_code, contexts = pd.factorize(np.asarray([str(x) for x in context_ids], dtype=object))
    flat = np.asarray([str(x) for cands in candidate_ids for x in cands], dtype=object)
    cand_code, names = pd.factorize(flat)
    row = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    pos = np.arange(len(flat), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    keys = pd.Index(ctx_code.astype(np.int64)[row] * len(names) + cand_code)
    first = ~keys.duplicated()
    return _Layout(
        pd.Index(contexts, dtype=object),
        pd.Index(names, dtype=object),
        keys[first],
        row[first],
        pos[first],
    )


def _lookup(ctx: pd.Series, cand: pd.Series, layout: _Layout):
    """(c, i) of each (context, candidate) row; -1 where the pair is not in the layout."""
    a = layout.contexts.get_indexer(ctx.astype(str).to_numpy(dtype=object))
    b = layout.names.get_indexer(cand.astype(str).to_numpy(dtype=object))
    cell = layout.keys.get_indexer(a.astype(np.int64) * len(layout.names) + b)
    cell[(a < 0) | (b < 0)] = -1
    found = cell >= 0
    c = np.full(len(cell), -1, dtype=np.int64)
    i = np.full(len(cell), -1, dtype=np.int64)
    c[found] = layout.c[cell[found]]
    i[found] = layout.i[cell[found]]
    return c, i


def _compared(ctx: pd.Series, first: pd.Series, second: pd.Series):
    """Contexts (sorted) and, per context, the candidates compared there (sorted)."""
    ctx_code, contexts = pd.factorize(ctx.to_numpy(dtype=object))
    both = np.concatenate([first.to_numpy(dtype=object), second.to_numpy(dtype=object)])
    cand_code, names = pd.factorize(both)
    # ranks in Python's order of str, so the pairs sort as sorted() would sort them
    ctx_rank = np.empty(len(contexts), dtype=np.int64)
    ctx_rank[np.argsort(np.asarray(contexts, dtype=object), kind="stable")] = np.arange(
        len(contexts)
    )
    name_order = np.argsort(np.asarray(names, dtype=object), kind="stable")
    name_rank = np.empty(len(names), dtype=np.int64)
    name_rank[name_order] = np.arange(len(names))
    rows = np.tile(ctx_rank[ctx_code], 2)
    pairs = np.unique(rows * len(names) + name_rank[cand_code])
    row, rank = np.divmod(pairs, len(names))
    sorted_names = np.asarray(names, dtype=object)[name_order][rank].tolist()
    ends = np.cumsum(np.bincount(row, minlength=len(contexts))).tolist()
    context_ids = np.asarray(contexts, dtype=object)[np.argsort(ctx_rank)].tolist()
    candidate_ids = [sorted_names[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
    return context_ids, candidate_ids


def comparisons_to_P(
    comparisons: pd.DataFrame,
    *,
    attribute: str | None = None,
    judge: str | None = None,
    candidates: pd.DataFrame | Mapping[str, Sequence[str]] | None = None,
) -> PMatrix:
    """Average the comparisons of one attribute and judge into a P array.

    Parameters
    ----------
    comparisons : pandas.DataFrame
        Canonical comparisons table.
    attribute, judge : str, optional
        Selection; may be omitted only when the table holds a single one.
    candidates : DataFrame or mapping of context to candidate ids, optional
        Fixes the order of rows per context (table order) and includes candidates that
        were never compared. Without it, candidates per context are the compared ones,
        sorted. Contexts are those with at least one selected comparison, in the order of
        ``candidates`` when given, else sorted.

    Returns
    -------
    PMatrix

    Raises
    ------
    DataError
        A required column missing (from ``comparisons``, or ``context_id`` / ``candidate_id``
        from a ``candidates`` table), ambiguous or unknown attribute/judge, no comparisons, a
        candidate compared with itself, a comparison naming a candidate or context missing
        from ``candidates``.
    """
    what = "comparisons"
    _need_columns(
        comparisons, ["context_id", "attribute", "judge", "first_id", "second_id", "p_first"], what
    )
    table = _select(comparisons, "attribute", attribute, what, "attribute")
    table = _select(table, "judge", judge, what, "judge")
    if not len(table):
        raise DataError(f"{what}: no comparisons to build P from")
    ctx = table["context_id"].astype(str)
    first = table["first_id"].astype(str)
    second = table["second_id"].astype(str)
    same = (first == second).to_numpy()
    if same.any():
        k = int(np.flatnonzero(same)[0])
        raise DataError(
            f"{what}: {int(same.sum())} row(s) compare a candidate with itself (e.g. context "
            f"{ctx.iloc[k]!r}, candidate {first.iloc[k]!r}); validate the table first"
        )

    if candidates is not None:
        order = _order_from_candidates(candidates)
        present = set(ctx.unique())
        missing_ctx = sorted(present - set(order))
        if missing_ctx:
            raise DataError(
                f"{what}: context(s) {', '.join(map(repr, missing_ctx[:10]))} are not in the "
                "candidates table; add their candidates or drop those comparisons"
            )
        context_ids = [c for c in order if c in present]
        candidate_ids = [order[c] for c in context_ids]
    else:
        context_ids, candidate_ids = _compared(ctx, first, second)

    layout = _positions(context_ids, candidate_ids)
    c1, i = _lookup(ctx, first, layout)
    c2, j = _lookup(ctx, second, layout)
    unknown = (c1 < 0) | (c2 < 0)
    if unknown.any():
        k = int(np.flatnonzero(unknown)[0])
        bad = first.iloc[k] if c1[k] < 0 else second.iloc[k]
        raise DataError(
            f"{what}: {int(unknown.sum())} row(s) name a candidate missing from the candidates "
            f"table (e.g. {bad!r} in context {ctx.iloc[k]!r}); validate the dataset first"
        )

    n_contexts = len(context_ids)
    n_max = max(len(cands) for cands in candidate_ids)
    p = table["p_first"].to_numpy(dtype=np.float64)
    valid = np.isfinite(p)
    w = row_weights(table, what)
    weighted = bool((w[valid] != DEFAULT_WEIGHT).any())
    flat = (c1 * n_max + i) * n_max + j
    size = n_contexts * n_max * n_max
    counts = np.bincount(flat[valid], minlength=size).astype(np.int64)
    weights = None
    if weighted:
        # the weighted mean of the samples; the cell's weight: their mean weight
        wsum = np.bincount(flat[valid], weights=w[valid], minlength=size)
        sums = np.bincount(flat[valid], weights=w[valid] * p[valid], minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            P = np.where(counts > 0, sums / np.where(counts > 0, wsum, 1.0), np.nan)
            weights = np.where(counts > 0, wsum / np.maximum(counts, 1), np.nan)
        weights = weights.reshape(n_contexts, n_max, n_max)
    else:
        sums = np.bincount(flat[valid], weights=p[valid], minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            P = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return PMatrix(
        P=P.reshape(n_contexts, n_max, n_max),
        context_ids=context_ids,
        candidate_ids=candidate_ids,
        counts=counts.reshape(n_contexts, n_max, n_max),
        attribute=attribute if attribute is not None else _single(table, "attribute"),
        judge=judge if judge is not None else _single(table, "judge"),
        weights=weights,
    )


def scores_to_matrix(
    table: pd.DataFrame,
    ids: PMatrix | tuple[Sequence[str], Sequence[Sequence[str]]],
    *,
    attribute: str | None = None,
    annotators: Sequence[str] | None = None,
    judge: str | None = None,
    prompt_id: str | None = None,
    value: str = "score",
) -> np.ndarray:
    """Mean score per (context, candidate), laid out like a :class:`PMatrix`.

    Works for human_scores (mean over annotators) and ratings (mean over samples).

    Parameters
    ----------
    table : pandas.DataFrame
        human_scores or ratings (canonical).
    ids : PMatrix or (context_ids, candidate_ids)
        The layout of the result.
    attribute : str, optional
        May be omitted only when the table holds a single attribute.
    annotators : sequence of str, optional
        Keep only these annotators (human_scores).
    judge, prompt_id : str, optional
        Selection for ratings; required when the table holds several.
    value : str
        The column to average.

    Returns
    -------
    ndarray of float64, shape (n_contexts, N_max)
        NaN-aware mean; NaN where nothing was scored and in padding. Rows of ``table``
        outside the layout are ignored.

    Raises
    ------
    DataError
        A column missing (``context_id``, ``candidate_id``, ``value``, or ``annotator`` when
        ``annotators`` is given); attribute, judge or prompt_id omitted while the table holds
        several, or given but absent; an annotator of ``annotators`` not in the table.
    """
    if isinstance(ids, PMatrix):
        context_ids, candidate_ids = ids.context_ids, ids.candidate_ids
        n_max = ids.P.shape[1]
    else:
        context_ids, candidate_ids = ids
        n_max = max((len(c) for c in candidate_ids), default=0)
    what = "scores table"
    _need_columns(table, ["context_id", "candidate_id", value], what)
    sel = _select(table, "attribute", attribute, what, "attribute")
    sel = _select(sel, "judge", judge, what, "judge")
    sel = _select(sel, "prompt_id", prompt_id, what, "prompt_id")
    if annotators is not None:
        _need_columns(sel, ["annotator"], what)
        wanted = [str(a) for a in annotators]
        known = set(sel["annotator"].astype(str).unique())
        unknown = [a for a in wanted if a not in known]
        if unknown:
            raise DataError(
                f"{what}: annotator(s) {', '.join(map(repr, unknown))} not found; available: "
                f"{', '.join(map(repr, sorted(known)))}"
            )
        sel = sel[sel["annotator"].astype(str).isin(wanted)]
    n_contexts = len(context_ids)
    out = np.full((n_contexts, n_max), np.nan)
    if not len(sel) or n_contexts == 0 or n_max == 0:
        return out
    c, i = _lookup(sel["context_id"], sel["candidate_id"], _positions(context_ids, candidate_ids))
    vals = pd.to_numeric(sel[value], errors="coerce").to_numpy(dtype=np.float64)
    keep = (c >= 0) & np.isfinite(vals)
    flat = c[keep] * n_max + i[keep]
    sums = np.bincount(flat, weights=vals[keep], minlength=n_contexts * n_max)
    counts = np.bincount(flat, minlength=n_contexts * n_max)
    has = counts > 0
    out.reshape(-1)[has] = sums[has] / counts[has]
    return out

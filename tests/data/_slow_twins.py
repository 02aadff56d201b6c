"""Slow twins: data.arrays.comparisons_to_P / scores_to_matrix and
data.comparative.tables.human_scores_for as they were before their integer-lookup rewrite
(string merges, a per-candidate loop, a per-row Python test), kept verbatim so the tests
can check that the rewrite gives the same arrays bit for bit and the same messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

import ranking as rk
from data.agreement.reference import reference_annotators
from data.arrays import PMatrix, _need_columns, _select, _single
from data.comparative.tables import _parsed
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset


def slow_order_from_candidates(candidates) -> dict[str, list[str]]:
    """context -> candidate ids in table order, from a candidates table or a mapping."""
    if isinstance(candidates, Mapping):
        return {str(k): [str(x) for x in v] for k, v in candidates.items()}
    _need_columns(candidates, ["context_id", "candidate_id"], "candidates")
    order: dict[str, list[str]] = {}
    for ctx, cand in zip(
        candidates["context_id"].astype(str), candidates["candidate_id"].astype(str), strict=True
    ):
        lst = order.setdefault(ctx, [])
        lst.append(cand)
    return {k: list(dict.fromkeys(v)) for k, v in order.items()}


def slow_positions(
    context_ids: Sequence[str], candidate_ids: Sequence[Sequence[str]]
) -> pd.DataFrame:
    """Lookup table (context_id, candidate_id) -> (c, i)."""
    ctx, cand, c_idx, i_idx = [], [], [], []
    for c, (cid, cands) in enumerate(zip(context_ids, candidate_ids, strict=True)):
        ctx.extend([str(cid)] * len(cands))
        cand.extend(str(x) for x in cands)
        c_idx.extend([c] * len(cands))
        i_idx.extend(range(len(cands)))
    return pd.DataFrame(
        {
            "context_id": pd.Series(ctx, dtype="str"),
            "candidate_id": pd.Series(cand, dtype="str"),
            "_c": np.asarray(c_idx, dtype=np.int64),
            "_i": np.asarray(i_idx, dtype=np.int64),
        }
    )


def slow_lookup(keys: pd.DataFrame, pos: pd.DataFrame, ctx_col: str, cand_col: str):
    """(c, i) for each row of ``keys``; -1 where the pair is not in ``pos``."""
    probe = pd.DataFrame(
        {
            "context_id": keys[ctx_col].astype(str).to_numpy(),
            "candidate_id": keys[cand_col].astype(str).to_numpy(),
        }
    )
    merged = probe.merge(pos, on=["context_id", "candidate_id"], how="left", sort=False)
    c = merged["_c"].fillna(-1).to_numpy(dtype=np.int64)
    i = merged["_i"].fillna(-1).to_numpy(dtype=np.int64)
    return c, i


def slow_comparisons_to_P(
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
        order = slow_order_from_candidates(candidates)
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
        both = pd.DataFrame(
            {"context_id": pd.concat([ctx, ctx]), "candidate_id": pd.concat([first, second])}
        ).drop_duplicates()
        grouped = both.groupby("context_id", sort=True)["candidate_id"]
        context_ids = [str(k) for k in grouped.groups]
        candidate_ids = [sorted(grouped.get_group(k).tolist()) for k in context_ids]

    pos = slow_positions(context_ids, candidate_ids)
    keys = pd.DataFrame({"context_id": ctx, "first_id": first, "second_id": second})
    c1, i = slow_lookup(keys, pos, "context_id", "first_id")
    c2, j = slow_lookup(keys, pos, "context_id", "second_id")
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
    flat = (c1 * n_max + i) * n_max + j
    size = n_contexts * n_max * n_max
    sums = np.bincount(flat[valid], weights=p[valid], minlength=size)
    counts = np.bincount(flat[valid], minlength=size).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        P = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return PMatrix(
        P=P.reshape(n_contexts, n_max, n_max),
        context_ids=context_ids,
        candidate_ids=candidate_ids,
        counts=counts.reshape(n_contexts, n_max, n_max),
        attribute=attribute if attribute is not None else _single(table, "attribute"),
        judge=judge if judge is not None else _single(table, "judge"),
    )


def slow_scores_to_matrix(
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
    pos = slow_positions(context_ids, candidate_ids)
    c, i = slow_lookup(sel, pos, "context_id", "candidate_id")
    vals = pd.to_numeric(sel[value], errors="coerce").to_numpy(dtype=np.float64)
    keep = (c >= 0) & np.isfinite(vals)
    flat = c[keep] * n_max + i[keep]
    sums = np.bincount(flat, weights=vals[keep], minlength=n_contexts * n_max)
    counts = np.bincount(flat, minlength=n_contexts * n_max)
    has = counts > 0
    out.reshape(-1)[has] = sums[has] / counts[has]
    return out


def slow_human_scores_for(
    ds: Dataset, attribute: str, pm: PMatrix, annotators=None
) -> tuple[np.ndarray | None, str]:
    """Human reference scores laid out like ``pm``, and where they come from.

    Parameters
    ----------
    ds : Dataset
        Its human scores, else its human comparisons (judges ``human:...``).
    attribute : str
        The attribute.
    pm : PMatrix
        The layout (its judge, when human, is left out of the pooled human verdicts).
    annotators : str or iterable of str, optional
        The reference annotators of the human scores (``data.agreement
        .reference_annotators``); default the only annotator group.

    Returns
    -------
    (ndarray of shape (n_contexts, N_max) or None, str)
        The scores (higher is better, NaN where missing) and one line saying what they are;
        None and the reason when the dataset has no human reference for the attribute.

    Raises
    ------
    DataError
        Several annotator groups and no ``annotators`` (the message lists them), or an
        unknown annotator.
    """
    hs = ds.human_scores
    if len(hs) and attribute in set(hs["attribute"].astype(str)):
        names = reference_annotators(ds, annotators)
        scores = slow_scores_to_matrix(hs, pm, attribute=attribute, annotators=names)
        if np.isfinite(scores).sum() >= 2:
            who = names[0] if len(names) == 1 else f"{len(names)} annotators"
            return scores, f"mean human score ({who})"
    comps = _parsed(ds) if len(ds.comparisons) else ds.comparisons
    if len(comps):
        names = comps["judge"].astype(str)
        keep = (
            names.str.startswith(HUMAN_JUDGE_PREFIX)
            & (names != str(pm.judge))
            & (comps["attribute"].astype(str) == attribute)
        )
        rows = comps[keep]
        layout = dict(zip(pm.context_ids, pm.candidate_ids, strict=True))
        if len(rows):
            inside = [
                c in layout and a in layout[c] and b in layout[c]
                for c, a, b in zip(
                    rows["context_id"].astype(str),
                    rows["first_id"].astype(str),
                    rows["second_id"].astype(str),
                    strict=True,
                )
            ]
            rows = rows[np.asarray(inside, dtype=bool)]
        if len(rows):
            n_ann = rows["judge"].nunique()
            hp = slow_comparisons_to_P(
                rows.assign(judge="humans"), attribute=attribute, judge="humans", candidates=layout
            )
            scores = np.full(pm.P.shape[:2], np.nan)
            where = {ctx: c for c, ctx in enumerate(pm.context_ids)}
            scores[[where[c] for c in hp.context_ids], : hp.P.shape[1]] = rk.win_ratio(
                hp.P, tau=0.5
            )
            return scores, f"win-ratio of the pooled verdicts of {n_ann} human annotator(s)"
    return None, f"no human scores or human verdicts for attribute {attribute!r}"

"""Shared pieces of the pair frames (``data.bias.pairs``): candidate index, orientation,
human reference, judge gap, assembly. Internal; the public names are re-exported there."""

from __future__ import annotations

import numpy as np
import pandas as pd

import ranking
from data.bias.features import FEATURES, text_features
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset

#: The columns of :func:`pair_frame` (and ``rating_pairs``), in order.
PAIR_COLUMNS = (
    "context_id",
    "a",
    "b",
    "system_a",
    "system_b",
    "p_ab",
    "p_ba",
    "n_ab",
    "n_ba",
    "stable_ab",
    "stable_ba",
    "tie_ab",
    "tie_ba",
    "human_pref",
    "human_gap",
    "judge_gap",
    "gap",
    *(f"{f}_{s}" for f in FEATURES for s in "ab"),
)
#: Prior precision of the per-context Bradley–Terry fit behind ``judge_gap`` (keeps the
#: scores of a candidate that never lost finite).
JUDGE_GAP_RIDGE = 0.01
GAP_SOURCES = ("human score gap", "human vote margin", "judge Bradley–Terry gap")


class CandidateIndex:
    """Candidates of a dataset in table order, with their position inside their context.

    Attributes
    ----------
    table : pandas.DataFrame
        ``ds.candidates`` without repeated (context_id, candidate_id), index 0..n-1.
    keys : pandas.MultiIndex
        (context_id, candidate_id) of each row, for ``get_indexer``.
    pos : ndarray of int64
        Position of each candidate in its context (0 = listed first).
    ctx_rank : ndarray of int64
        Order of first appearance of each candidate's context.
    """

    def __init__(self, candidates: pd.DataFrame):
        table = candidates.drop_duplicates(["context_id", "candidate_id"]).reset_index(drop=True)
        ctx = table["context_id"].astype(str)
        self.table = table
        self.keys = pd.MultiIndex.from_arrays([ctx.to_numpy(), table["candidate_id"].astype(str)])
        self.pos = table.groupby(ctx, sort=False).cumcount().to_numpy(dtype=np.int64)
        self.ctx_rank = pd.factorize(ctx)[0].astype(np.int64)

    def lookup(self, context_ids, candidate_ids) -> np.ndarray:
        """Row of each (context, candidate) in :attr:`table`; -1 where absent."""
        probe = pd.MultiIndex.from_arrays(
            [pd.Series(context_ids).astype(str), pd.Series(candidate_ids).astype(str)]
        )
        return self.keys.get_indexer(probe).astype(np.int64)


def candidate_index(ds: Dataset) -> CandidateIndex:
    """The :class:`CandidateIndex` of ``ds.all_candidates()``: the candidates table and the
    candidates the other tables name without it (a pairwise file without texts).

    Parameters
    ----------
    ds : Dataset
        Any dataset (its candidates table may be empty).

    Returns
    -------
    CandidateIndex
    """
    return CandidateIndex(ds.all_candidates())


def empty_pairs(reason: str, gap_source: str = "") -> pd.DataFrame:
    """An empty pair frame with the :data:`PAIR_COLUMNS` and ``attrs["reason"]``."""
    df = pd.DataFrame({c: pd.Series(dtype="float64") for c in PAIR_COLUMNS})
    for c in ("context_id", "a", "b", "system_a", "system_b"):
        df[c] = df[c].astype("object")
    for c in ("n_ab", "n_ba"):
        df[c] = df[c].astype("int64")
    df.attrs.update(reason=reason, gap_source=gap_source)
    return df


def orient(rows: pd.DataFrame, idx: CandidateIndex, what: str):
    """Global candidate rows (a, b) and whether a was shown first, for each comparison row."""
    ctx = rows["context_id"]
    gf = idx.lookup(ctx, rows["first_id"])
    gs = idx.lookup(ctx, rows["second_id"])
    bad = (gf < 0) | (gs < 0) | (gf == gs)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        ctx = ctx.astype(str).to_numpy(dtype=object)
        raise DataError(
            f"{what}: {int(bad.sum())} comparison row(s) name a candidate missing from the "
            f"candidates table or compare a candidate with itself (e.g. row {rows.index[k]!r}, "
            f"context {ctx[k]!r}: {rows['first_id'].iloc[k]!r} vs {rows['second_id'].iloc[k]!r});"
            " validate the dataset first"
        )
    a_first = idx.pos[gf] < idx.pos[gs]
    return np.where(a_first, gf, gs), np.where(a_first, gs, gf), a_first


def human_reference(ds, attribute, idx, ga, gb, pair_key, n_cand):
    """(human_pref, human_gap, source) per pair; NaN where humans said nothing."""
    hs = ds.human_scores
    if len(hs) and (hs["attribute"].astype(str) == attribute).any():
        sel = hs[hs["attribute"].astype(str) == attribute]
        g = idx.lookup(sel["context_id"], sel["candidate_id"])
        score = pd.to_numeric(sel["score"], errors="coerce").to_numpy(dtype=np.float64)
        ok = (g >= 0) & np.isfinite(score)
        sums = np.bincount(g[ok], weights=score[ok], minlength=n_cand)
        cnt = np.bincount(g[ok], minlength=n_cand)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(cnt > 0, sums / np.maximum(cnt, 1), np.nan)
        diff = mean[ga] - mean[gb]
        pref = np.where(np.isnan(diff), np.nan, np.sign(diff) * 0.5 + 0.5)
        return pref, np.abs(diff), GAP_SOURCES[0]
    comp = ds.comparisons
    human = comp[
        comp["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX)
        & (comp["attribute"].astype(str) == attribute)
    ]
    p = human["p_first"].to_numpy(dtype=np.float64)
    human = human[np.isfinite(p)]
    nan = np.full(len(ga), np.nan)
    if not len(human):
        return nan, nan, ""
    ha, hb, a_first = orient(human, idx, f"dataset {ds.name!r}, human comparisons")
    share = human["p_first"].to_numpy(dtype=np.float64)
    share = np.where(a_first, share, 1.0 - share)
    uniq, inv = np.unique(ha * n_cand + hb, return_inverse=True)
    sums = np.bincount(inv, weights=share, minlength=len(uniq))
    cnt = np.bincount(inv, minlength=len(uniq))
    at = pd.Index(uniq).get_indexer(pair_key)
    pref = np.where(at >= 0, sums[np.maximum(at, 0)] / np.maximum(cnt[np.maximum(at, 0)], 1), nan)
    return pref, np.abs(2.0 * pref - 1.0), GAP_SOURCES[1]


def judge_gaps(P: np.ndarray, ctx_row: np.ndarray, pos_a: np.ndarray, pos_b: np.ndarray):
    """|theta_a - theta_b| of the per-context Bradley–Terry fit of ``P`` (ridge
    :data:`JUDGE_GAP_RIDGE`), for pairs at context rows ``ctx_row`` (-1: NaN)."""
    if not P.size:
        return np.full(len(ctx_row), np.nan)
    scores = np.asarray(ranking.bradley_terry(P, ridge=JUDGE_GAP_RIDGE).scores)
    r = np.maximum(ctx_row, 0)
    gap = np.abs(scores[r, pos_a] - scores[r, pos_b])
    return np.where(ctx_row >= 0, gap, np.nan)


def gap_source(human_gap: np.ndarray, source: str) -> str:
    """The ``attrs["gap_source"]`` wording for a pair frame whose human gaps are ``human_gap``."""
    finite = np.isfinite(human_gap)
    if source and finite.all() and finite.size:
        return source
    if source and finite.any():
        return f"{source} (judge Bradley–Terry gap where humans are missing)"
    return GAP_SOURCES[2]


def assemble(idx, ga, gb, cols: dict, human, judge_gap) -> pd.DataFrame:
    """The pair frame from per-pair arrays: ids, systems, human and judge gaps, text features."""
    pref, hgap, source = human
    table = idx.table
    has_system = "system" in table.columns
    system = table["system"].to_numpy(dtype=object) if has_system else None
    uniq, inv = np.unique(np.concatenate([ga, gb]), return_inverse=True)
    feats = text_features(table["text"].iloc[uniq].reset_index(drop=True)).to_numpy()
    fa, fb = feats[inv[: len(ga)]], feats[inv[len(ga) :]]
    out = {
        "context_id": table["context_id"].astype(str).to_numpy(dtype=object)[ga],
        "a": table["candidate_id"].astype(str).to_numpy(dtype=object)[ga],
        "b": table["candidate_id"].astype(str).to_numpy(dtype=object)[gb],
        "system_a": system[ga] if has_system else np.full(len(ga), np.nan, dtype=object),
        "system_b": system[gb] if has_system else np.full(len(ga), np.nan, dtype=object),
        **cols,
        "human_pref": pref,
        "human_gap": hgap,
        "judge_gap": judge_gap,
        "gap": np.where(np.isfinite(hgap), hgap, judge_gap),
    }
    for k, f in enumerate(FEATURES):
        out[f"{f}_a"], out[f"{f}_b"] = fa[:, k], fb[:, k]
    df = pd.DataFrame(out, columns=list(PAIR_COLUMNS))
    df.attrs.update(reason="", gap_source=gap_source(hgap, source))
    return df


def pair_P(mean: np.ndarray, ctx_rank: np.ndarray, pos_a: np.ndarray, pos_b: np.ndarray):
    """The judge's P (as ``data.arrays.comparisons_to_P`` builds it, contexts in candidate
    order, rows and columns at candidate positions) from the per-pair means of both orders.

    Returns ``(P, ctx_row)``: P of shape (n_contexts, N_max, N_max) over the contexts with a
    pair, and each pair's context row in it.
    """
    ctx_row, _ = pd.factorize(ctx_rank, sort=True)
    n_ctx = int(ctx_row.max()) + 1 if len(ctx_row) else 0
    n_max = int(max(pos_a.max(), pos_b.max())) + 1 if len(ctx_row) else 0
    P = np.full((n_ctx, n_max, n_max), np.nan)
    P[ctx_row, pos_a, pos_b] = mean[:, 0]
    P[ctx_row, pos_b, pos_a] = mean[:, 1]
    return P, ctx_row.astype(np.int64)

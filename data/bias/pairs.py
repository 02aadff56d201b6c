"""One row per judged pair of candidates: both orders side by side, with the quality gap.

:func:`pair_frame` is the table every judge-bias statistic starts from (position profile,
length and style bias, calibration). Each comparison row of one (attribute, judge) is
oriented to the pair's (a, b), a before b in the candidate order of ``ds.candidates``:
``p_ab`` averages the parsed p_first of the rows that showed a first (P(a wins | a first)),
``p_ba`` those that showed b first (P(b wins | b first)). Everything is grouped with numpy
(``bincount`` over integer pair keys): no Python loop per row.

The quality gap of a pair is the human one where humans judged the attribute (mean score
difference, or the vote margin of human verdicts), else the distance between the two
candidates' scores in the judge's own Bradley–Terry fit of the context.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import ranking
from data.bias.features import FEATURES, text_features
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset

__all__ = ["JUDGE_GAP_RIDGE", "PAIR_COLUMNS", "candidate_index", "pair_frame"]

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
    """The :class:`CandidateIndex` of ``ds.candidates``.

    Parameters
    ----------
    ds : Dataset
        Any dataset (its candidates table may be empty).

    Returns
    -------
    CandidateIndex
    """
    return CandidateIndex(ds.candidates)


def empty_pairs(reason: str, gap_source: str = "") -> pd.DataFrame:
    """An empty pair frame with the :data:`PAIR_COLUMNS` and ``attrs["reason"]``."""
    df = pd.DataFrame({c: pd.Series(dtype="float64") for c in PAIR_COLUMNS})
    for c in ("context_id", "a", "b", "system_a", "system_b"):
        df[c] = df[c].astype("object")
    for c in ("n_ab", "n_ba"):
        df[c] = df[c].astype("int64")
    df.attrs.update(reason=reason, gap_source=gap_source)
    return df


def _judge_rows(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    comp = ds.comparisons
    judges = sorted(comp["judge"].astype(str).unique()) if len(comp) else []
    if judge not in judges:
        known = ", ".join(repr(j) for j in judges[:12])
        raise DataError(
            f"dataset {ds.name!r}: no comparisons by judge {judge!r}; judges with comparisons: "
            f"{known or 'none'} (ratings judges: use rating_pairs)"
        )
    return comp[(comp["judge"].astype(str) == judge) & (comp["attribute"].astype(str) == attribute)]


def _orient(rows: pd.DataFrame, idx: CandidateIndex, what: str):
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


def _decisions(p: np.ndarray, tie: np.ndarray, tie_band: float) -> np.ndarray:
    """1 / 0.5 / 0 (first wins / tie / second wins) per sample; NaN where unparsed."""
    out = np.where(p > 0.5 + tie_band, 1.0, np.where(p < 0.5 - tie_band, 0.0, 0.5))
    out = np.where(tie, 0.5, out)
    return np.where(np.isnan(p), np.nan, out)


def modal_share(decisions: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Share of the modal decision per group (NaN for groups with < 2 parsed samples).

    The per-group repetition stability of ``ranking.repetition_stability`` (Shi et al.
    2024), computed with ``bincount`` over the (group, decision) cells.
    """
    ok = ~np.isnan(decisions)
    cat = np.rint(decisions[ok] * 2).astype(np.int64)  # 0, 1, 2
    cells = np.bincount(groups[ok] * 3 + cat, minlength=3 * n_groups).reshape(n_groups, 3)
    total = cells.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total >= 2, cells.max(axis=1) / total, np.nan)


def _human_reference(ds, attribute, idx, ga, gb, pair_key, n_cand):
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
    ha, hb, a_first = _orient(human, idx, f"dataset {ds.name!r}, human comparisons")
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


def pair_frame(ds: Dataset, attribute: str, judge: str, *, tie_band: float = 0.0) -> pd.DataFrame:
    """Every pair of candidates a judge compared, with both orders and the quality gap.

    Parameters
    ----------
    ds : Dataset
        A validated dataset.
    attribute : str
        The attribute judged.
    judge : str
        A judge with comparisons in ``ds`` (for ratings judges use ``rating_pairs``).
    tie_band : float, default 0.0
        A sample is a tie when ``|p_first - 0.5| <= tie_band`` or its verdict is ``"tie"``;
        decisions (for the repetition stability) are first wins above ``0.5 + tie_band``,
        second wins below ``0.5 - tie_band``, tie otherwise.

    Returns
    -------
    pandas.DataFrame
        One row per unordered pair of a context judged at least once (parsed or not), a
        before b in candidate order, rows in context order then by (a, b). Columns
        :data:`PAIR_COLUMNS`: ``p_ab`` / ``p_ba`` mean parsed p_first with a / b shown
        first (NaN if none parsed); ``n_ab`` / ``n_ba`` parsed samples; ``stable_*`` share
        of the modal decision over that order's samples (NaN below 2 samples); ``tie_*``
        share of parsed samples that are ties; ``human_pref`` P(humans prefer a) (1 / 0.5 /
        0 from the mean human scores, else the share of human verdicts, judges
        ``human:*``, for a); ``human_gap`` |mean score a - b| or |2 human_pref - 1|;
        ``judge_gap`` |theta_a - theta_b| of the judge's Bradley–Terry fit per context
        (ridge :data:`JUDGE_GAP_RIDGE`); ``gap`` human_gap where finite, else judge_gap;
        text features of a and b (:func:`data.bias.features.text_features`).
        ``attrs["gap_source"]`` names the gap used, ``attrs["reason"]`` is "" or why the
        frame is empty (the judge has no comparison for this attribute).

    Raises
    ------
    DataError
        ``judge`` has no comparisons in ``ds``; a comparison names a candidate missing from
        the candidates table.
    ValueError
        ``tie_band`` outside [0, 0.5).
    """
    if not 0.0 <= tie_band < 0.5:
        raise ValueError(f"tie_band must lie in [0, 0.5), got {tie_band}")
    rows = _judge_rows(ds, str(attribute), str(judge))
    if not len(rows):
        return empty_pairs(f"judge {judge!r} has no comparisons for attribute {attribute!r}")
    what = f"dataset {ds.name!r}, judge {judge!r}, attribute {attribute!r}"
    idx = candidate_index(ds)
    n_cand = len(idx.table)
    ga, gb, a_first = _orient(rows, idx, what)
    key = ga * n_cand + gb
    uniq, inv = np.unique(key, return_inverse=True)
    # rows in context order, then by position of a and b
    ua, ub = uniq // n_cand, uniq % n_cand
    order = np.lexsort((idx.pos[ub], idx.pos[ua], idx.ctx_rank[ua]))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    pair = rank[inv]
    ua, ub, uniq = ua[order], ub[order], uniq[order]
    n_pairs = len(uniq)

    p = rows["p_first"].to_numpy(dtype=np.float64)
    parsed = np.isfinite(p)
    verdict = rows["verdict"].astype(str).to_numpy() if "verdict" in rows else None
    is_tie = parsed & (np.abs(p - 0.5) <= tie_band)
    if verdict is not None:
        is_tie |= parsed & (verdict == "tie")
    group = pair * 2 + np.where(a_first, 0, 1)
    n = np.bincount(group[parsed], minlength=2 * n_pairs).reshape(n_pairs, 2)
    sums = np.bincount(group[parsed], weights=p[parsed], minlength=2 * n_pairs)
    ties = np.bincount(group[is_tie], minlength=2 * n_pairs).reshape(n_pairs, 2)
    stable = modal_share(_decisions(p, is_tie, tie_band), group, 2 * n_pairs).reshape(n_pairs, 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, sums.reshape(n_pairs, 2) / np.maximum(n, 1), np.nan)
        tie_share = np.where(n > 0, ties / np.maximum(n, 1), np.nan)
    cols = {
        "p_ab": mean[:, 0],
        "p_ba": mean[:, 1],
        "n_ab": n[:, 0].astype(np.int64),
        "n_ba": n[:, 1].astype(np.int64),
        "stable_ab": stable[:, 0],
        "stable_ba": stable[:, 1],
        "tie_ab": tie_share[:, 0],
        "tie_ba": tie_share[:, 1],
    }
    human = _human_reference(ds, str(attribute), idx, ua, ub, uniq, n_cand)
    P, ctx_row = pair_P(mean, idx.ctx_rank[ua], idx.pos[ua], idx.pos[ub])
    jgap = judge_gaps(P, ctx_row, idx.pos[ua], idx.pos[ub])
    return assemble(idx, ua, ub, cols, human, jgap)


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

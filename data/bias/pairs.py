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

from typing import NamedTuple

import numpy as np
import pandas as pd

import ranking
from data.bias._pairs_common import (
    GAP_SOURCES,
    JUDGE_GAP_RIDGE,
    PAIR_COLUMNS,
    CandidateIndex,
    assemble,
    candidate_index,
    empty_pairs,
    human_reference,
    judge_gaps,
    orient,
    pair_P,
)
from data.schema import DataError, Dataset

__all__ = [
    "GAP_SOURCES",
    "JUDGE_GAP_RIDGE",
    "PAIR_COLUMNS",
    "CandidateIndex",
    "candidate_index",
    "JudgedPairs",
    "frame_of",
    "judged_pairs",
    "pair_frame",
    "rating_pairs",
]


def _rows_of(ds: Dataset, kind: str, attribute: str, judge: str, other: str) -> pd.DataFrame:
    """The ``kind`` table's rows (comparisons or ratings) of the judge and attribute; a
    DataError listing the judges of that table when it has none by ``judge``."""
    table = getattr(ds, kind)
    judges = sorted(table["judge"].astype(str).unique()) if len(table) else []
    if judge not in judges:
        known = ", ".join(repr(j) for j in judges[:12])
        raise DataError(
            f"dataset {ds.name!r}: no {kind} by judge {judge!r}; judges with {kind}: "
            f"{known or 'none'} ({other})"
        )
    return table[
        (table["judge"].astype(str) == judge) & (table["attribute"].astype(str) == attribute)
    ]


def _judge_rows(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    return _rows_of(ds, "comparisons", attribute, judge, "ratings judges: use rating_pairs")


def _decisions(p: np.ndarray, tie: np.ndarray, tie_band: float) -> np.ndarray:
    """1 / 0.5 / 0 (first wins / tie / second wins) per sample; NaN where unparsed."""
    out = np.where(p > 0.5 + tie_band, 1.0, np.where(p < 0.5 - tie_band, 0.0, 0.5))
    out = np.where(tie, 0.5, out)
    return np.where(np.isnan(p), np.nan, out)


class JudgedPairs(NamedTuple):
    """A pair frame with the samples behind it (:func:`judged_pairs`).

    Attributes
    ----------
    frame : pandas.DataFrame
        :func:`pair_frame`'s result.
    decisions : ndarray of float
        Per comparison row 1 / 0.5 / 0 (first wins / tie / second wins), NaN unparsed.
    groups : ndarray of int64
        Per comparison row its ordered pair: ``2 * row of frame`` (a shown first) or
        ``2 * row + 1`` (b first), for ``ranking.repetition_stability``.
    """

    frame: pd.DataFrame
    decisions: np.ndarray
    groups: np.ndarray


def frame_of(pairs, what: str = "pairs") -> pd.DataFrame:
    """The pair frame behind a ``pairs=`` argument of the ``data.bias`` tables.

    Every table of ``data.bias`` takes an optional prebuilt ``pairs=``: the
    :class:`JudgedPairs` of :func:`judged_pairs` (or the frame of :func:`pair_frame` /
    :func:`rating_pairs`), used as is, so that one pair frame per (dataset, attribute, judge)
    serves every table.

    Parameters
    ----------
    pairs : JudgedPairs or pandas.DataFrame
        A prebuilt pair frame (with its samples).
    what : str
        The argument's name, for the message.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    TypeError
        Anything else, or a frame without the :data:`PAIR_COLUMNS`.
    """
    frame = pairs.frame if isinstance(pairs, JudgedPairs) else pairs
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"{what} must be judged_pairs(ds, attribute, judge) or a pair_frame; got "
            f"{type(pairs).__name__}"
        )
    missing = [c for c in PAIR_COLUMNS if c not in frame.columns]
    if missing:
        raise TypeError(
            f"{what} is not a pair frame: columns {', '.join(missing[:5])} missing; build it with "
            "data.bias.judged_pairs or pair_frame"
        )
    return frame


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
        frame is empty (the judge has no comparison for this attribute),
        ``attrs["tie_band"]`` the ``tie_band`` it was built with.

    Raises
    ------
    DataError
        ``judge`` has no comparisons in ``ds``; a comparison names a candidate missing from
        the candidates table.
    ValueError
        ``tie_band`` outside [0, 0.5).
    """
    return judged_pairs(ds, attribute, judge, tie_band=tie_band).frame


def judged_pairs(ds: Dataset, attribute: str, judge: str, *, tie_band: float = 0.0) -> JudgedPairs:
    """:func:`pair_frame` with the per-sample decisions and ordered-pair ids behind it.

    Parameters
    ----------
    ds, attribute, judge, tie_band
        As for :func:`pair_frame`.

    Returns
    -------
    JudgedPairs

    Raises
    ------
    DataError, ValueError
        As for :func:`pair_frame`.
    """
    if not 0.0 <= tie_band < 0.5:
        raise ValueError(f"tie_band must lie in [0, 0.5), got {tie_band}")
    rows = _judge_rows(ds, str(attribute), str(judge))
    if not len(rows):
        reason = f"judge {judge!r} has no comparisons for attribute {attribute!r}"
        empty = empty_pairs(reason)
        empty.attrs["tie_band"] = float(tie_band)
        return JudgedPairs(empty, np.empty(0), np.empty(0, dtype=np.int64))
    what = f"dataset {ds.name!r}, judge {judge!r}, attribute {attribute!r}"
    idx = candidate_index(ds)
    n_cand = len(idx.table)
    ga, gb, a_first = orient(rows, idx, what)
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
    decisions = _decisions(p, is_tie, tie_band)
    per_group = ranking.repetition_stability(decisions, group, n_boot=0).per_group
    stable = np.full(2 * n_pairs, np.nan)
    stable[: len(per_group)] = per_group
    stable = stable.reshape(n_pairs, 2)
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
    human = human_reference(ds, str(attribute), idx, ua, ub, uniq, n_cand)
    P, ctx_row = pair_P(mean, idx.ctx_rank[ua], idx.pos[ua], idx.pos[ub])
    jgap = judge_gaps(P, ctx_row, idx.pos[ua], idx.pos[ub])
    frame = assemble(idx, ua, ub, cols, human, jgap)
    frame.attrs["tie_band"] = float(tie_band)
    return JudgedPairs(frame, decisions, group)


def _rating_rows(ds: Dataset, attribute: str, judge: str, prompt_id) -> pd.DataFrame:
    sel = _rows_of(ds, "ratings", attribute, judge, "comparison judges: use pair_frame")
    prompts = sorted(sel["prompt_id"].astype(str).unique())
    if prompt_id is None and len(prompts) > 1:
        raise DataError(
            f"dataset {ds.name!r}: judge {judge!r} rated {attribute!r} under several prompts "
            f"({', '.join(map(repr, prompts))}); choose one with prompt_id=..."
        )
    if prompt_id is not None:
        sel = sel[sel["prompt_id"].astype(str) == str(prompt_id)]
    return sel


def rating_pairs(
    ds: Dataset, attribute: str, judge: str, prompt_id: str | None = None, *, max_cells=4_000_000
) -> pd.DataFrame:
    """The pair frame of a ratings judge: every pair of rated candidates of a context.

    The judge never saw the two candidates together, so there is one "order": ``p_ab`` =
    P(score_a > score_b) + 1/2 P(score_a = score_b) over every pair of a parsed sample of a
    with a parsed sample of b (20 x 20 for GPT-3.5 on TopicalChat).

    Parameters
    ----------
    ds : Dataset
        A validated dataset.
    attribute, judge : str
        The selection; ``judge`` must have ratings.
    prompt_id : str, optional
        Required when the judge rated the attribute under several prompts.
    max_cells : int
        Sample pairs compared per chunk of candidate pairs (memory bound).

    Returns
    -------
    pandas.DataFrame
        :data:`PAIR_COLUMNS`, as :func:`pair_frame`, with ``n_ab`` the number of sample pairs
        compared, ``stable_ab`` the share of the modal outcome (a higher / equal / lower)
        over them, ``tie_ab`` the share of equal scores; ``p_ba`` / ``stable_ba`` /
        ``tie_ba`` NaN and ``n_ba`` 0. Pairs where a or b has no parsed sample are listed with
        NaN p. ``judge_gap`` comes from the Bradley–Terry fit of the ``p_ab`` per context.

    Raises
    ------
    DataError
        ``judge`` has no ratings; several prompts and no ``prompt_id``; a rating names a
        candidate missing from the candidates table.
    """
    rows = _rating_rows(ds, str(attribute), str(judge), prompt_id)
    if not len(rows):
        return empty_pairs(f"judge {judge!r} has no ratings of attribute {attribute!r}")
    idx = candidate_index(ds)
    n_cand = len(idx.table)
    g = idx.lookup(rows["context_id"], rows["candidate_id"])
    if (g < 0).any():
        k = int(np.flatnonzero(g < 0)[0])
        raise DataError(
            f"dataset {ds.name!r}, ratings of judge {judge!r}: {int((g < 0).sum())} row(s) name a "
            f"candidate missing from the candidates table (e.g. {rows['candidate_id'].iloc[k]!r} "
            f"in context {rows['context_id'].iloc[k]!r}); validate the dataset first"
        )
    score = pd.to_numeric(rows["score"], errors="coerce").to_numpy(dtype=np.float64)
    rated, r = np.unique(g, return_inverse=True)
    k = pd.Series(r).groupby(r).cumcount().to_numpy()
    S = np.full((len(rated), int(k.max()) + 1), np.nan)
    S[r, k] = score
    # every pair of rated candidates of a context, a before b in candidate order
    cand = pd.DataFrame({"r": np.arange(len(rated)), "c": idx.ctx_rank[rated], "p": idx.pos[rated]})
    pairs = cand.merge(cand, on="c", suffixes=("_a", "_b"))
    pairs = pairs[pairs["p_a"] < pairs["p_b"]].sort_values(["c", "p_a", "p_b"])
    ra, rb = pairs["r_a"].to_numpy(), pairs["r_b"].to_numpy()
    counts = np.zeros((len(ra), 3))  # a higher, equal, a lower
    step = max(1, max_cells // (S.shape[1] ** 2))
    for lo in range(0, len(ra), step):
        x = S[ra[lo : lo + step], :, None]
        y = S[rb[lo : lo + step], None, :]
        counts[lo : lo + step] = np.stack(
            [(x > y).sum(axis=(1, 2)), (x == y).sum(axis=(1, 2)), (x < y).sum(axis=(1, 2))], 1
        )
    total = counts.sum(axis=1)
    nan = np.full(len(ra), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_ab = np.where(total > 0, (counts[:, 0] + 0.5 * counts[:, 1]) / total, np.nan)
        stable = np.where(total >= 2, counts.max(axis=1) / total, np.nan)
        tie = np.where(total > 0, counts[:, 1] / total, np.nan)
    cols = {
        "p_ab": p_ab,
        "p_ba": nan,
        "n_ab": total.astype(np.int64),
        "n_ba": np.zeros(len(ra), dtype=np.int64),
        "stable_ab": stable,
        "stable_ba": nan,
        "tie_ab": tie,
        "tie_ba": nan,
    }
    ga, gb = rated[ra], rated[rb]
    human = human_reference(ds, str(attribute), idx, ga, gb, ga * n_cand + gb, n_cand)
    P, ctx_row = pair_P(np.column_stack([p_ab, nan]), idx.ctx_rank[ga], idx.pos[ga], idx.pos[gb])
    jgap = judge_gaps(P, ctx_row, idx.pos[ga], idx.pos[gb])
    return assemble(idx, ga, gb, cols, human, jgap)

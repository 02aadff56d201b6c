"""The per-example table: every compared pair of one attribute and judge, in both orders.

One row per unordered pair (context, candidate a, candidate b), with ``a`` before ``b`` in
natural order (M2 before M10): what the judge said with ``a`` shown first and with ``a``
shown second, whether its decision flips when the order is swapped, the human preference and
whether the judge disagrees with it, and how many answers could not be parsed. The Examples
page filters, searches and opens these rows (issue 11, item 8).

Pure pandas: the caller selects the comparison rows (one attribute and judge) and passes the
human reference as a plain table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.natural import natural_sorted

#: Columns of :func:`pair_table`, in order.
PAIR_COLUMNS = (
    "context_id",
    "a",
    "b",
    "p_a_first",
    "p_a_second",
    "decision_a_first",
    "decision_a_second",
    "flips",
    "judge_pick",
    "human_a",
    "human_b",
    "human_pick",
    "disagrees",
    "n_unparsed",
    "unparsed",
    "n_samples",
)
TIE = "tie"


def _ranks(values: pd.Series) -> pd.Series:
    """Natural-order rank of each value (equal strings, equal ranks)."""
    order = natural_sorted(values.unique())
    return values.map({v: k for k, v in enumerate(order)}).astype(np.int64)


def oriented(rows: pd.DataFrame) -> pd.DataFrame:
    """Each comparison row as (context_id, a, b, a_first): its pair in natural order.

    Parameters
    ----------
    rows : pandas.DataFrame
        Comparison rows (``context_id``, ``first_id``, ``second_id``).

    Returns
    -------
    pandas.DataFrame
        Same index as ``rows``; ``a_first`` is True where ``a`` was shown first.
    """
    ctx = rows["context_id"].astype(str)
    first = rows["first_id"].astype(str)
    second = rows["second_id"].astype(str)
    ranks = _ranks(pd.concat([first, second], ignore_index=True))
    r_first = ranks.iloc[: len(rows)].to_numpy()
    r_second = ranks.iloc[len(rows) :].to_numpy()
    a_first = (r_first < r_second) | ((r_first == r_second) & (first <= second).to_numpy())
    return pd.DataFrame(
        {
            "context_id": ctx,
            "a": first.where(a_first, second),
            "b": second.where(a_first, first),
            "a_first": a_first,
        },
        index=rows.index,
    )


def _decision(p: np.ndarray, shown_first: np.ndarray, shown_second: np.ndarray, tau: float):
    """Winner of each comparison at threshold tau: first if p > tau, second if p < tau."""
    out = np.where(p > tau, shown_first, np.where(p < tau, shown_second, TIE)).astype(object)
    out[~np.isfinite(p)] = None
    return out


def _pick(scores_a: np.ndarray, scores_b: np.ndarray, a: np.ndarray, b: np.ndarray):
    """a, b or tie by the larger score; None where either is NaN."""
    out = np.where(scores_a > scores_b, a, np.where(scores_a < scores_b, b, TIE)).astype(object)
    out[~(np.isfinite(scores_a) & np.isfinite(scores_b))] = None
    return out


def pair_table(
    rows: pd.DataFrame, reference: pd.DataFrame | None = None, *, tau: float = 0.5
) -> pd.DataFrame:
    """Every compared pair of one attribute and judge, both presentation orders side by side.

    Parameters
    ----------
    rows : pandas.DataFrame
        Canonical comparison rows of one attribute and one judge (several samples, or
        several annotators of a pooled human judge, per ordered pair).
    reference : pandas.DataFrame, optional
        Human reference per candidate: ``context_id``, ``candidate_id``, ``score`` (higher
        is better; NaN: none). Without it the human columns are missing values.
    tau : float
        Decision threshold: the first-shown candidate wins when p_first > tau, the second
        when p_first < tau, a tie when equal.

    Returns
    -------
    pandas.DataFrame
        :data:`PAIR_COLUMNS`, one row per unordered pair, naturally sorted by context, a, b.
        ``p_a_first`` is the mean parsed p_first with ``a`` shown first; ``p_a_second`` is
        1 - the mean parsed p_first with ``b`` shown first (NaN where that order has no
        parsed answer). ``decision_*`` name the winner (a candidate id or "tie") in each
        order. ``flips`` (nullable boolean) is True where the two decisions differ, missing
        unless both orders have a decision. ``judge_pick`` uses the mean of the two
        probabilities (of the one available); ``human_pick`` the larger reference score;
        ``disagrees`` is True where the judge picks one candidate and the humans prefer the
        other, False where both pick the same, missing where either ties or is unknown. ``n_unparsed``
        counts answers with p_first NaN, ``n_samples`` all answers of the pair.
    """
    if not len(rows):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in PAIR_COLUMNS})
    o = oriented(rows)
    p = pd.to_numeric(rows["p_first"], errors="coerce")
    keys = ["context_id", "a", "b"]
    work = o.assign(
        p_ab=p.where(o["a_first"]),
        p_ba=p.where(~o["a_first"]),
        has_ab=o["a_first"],
        has_ba=~o["a_first"],
        unparsed=p.isna(),
    )
    g = work.groupby(keys, sort=False).agg(
        p_ab=("p_ab", "mean"),
        p_ba=("p_ba", "mean"),
        n_unparsed=("unparsed", "sum"),
        n_samples=("a_first", "size"),
    )
    g = g.reset_index()
    a = g["a"].to_numpy(dtype=object)
    b = g["b"].to_numpy(dtype=object)
    p_ab = g["p_ab"].to_numpy(dtype=np.float64)
    p_ba = g["p_ba"].to_numpy(dtype=np.float64)
    dec_first = _decision(p_ab, a, b, tau)
    dec_second = _decision(p_ba, b, a, tau)
    both = pd.notna(dec_first) & pd.notna(dec_second)
    flips = pd.array(np.where(both, dec_first != dec_second, False), dtype="boolean")
    flips[~both] = pd.NA
    both_p = np.vstack([p_ab, 1.0 - p_ba])
    n_p = np.isfinite(both_p).sum(axis=0)
    with np.errstate(invalid="ignore"):
        p_a = np.where(n_p > 0, np.nansum(both_p, axis=0) / n_p, np.nan)
    judge_pick = _decision(p_a, a, b, tau)

    h_a = np.full(len(g), np.nan)
    h_b = np.full(len(g), np.nan)
    if reference is not None and len(reference):
        ref = (
            reference.assign(
                context_id=reference["context_id"].astype(str),
                candidate_id=reference["candidate_id"].astype(str),
                score=pd.to_numeric(reference["score"], errors="coerce"),
            )
            .groupby(["context_id", "candidate_id"])["score"]
            .mean()
        )
        h_a = ref.reindex(pd.MultiIndex.from_arrays([g["context_id"], g["a"]])).to_numpy()
        h_b = ref.reindex(pd.MultiIndex.from_arrays([g["context_id"], g["b"]])).to_numpy()
    human_pick = _pick(h_a, h_b, a, b)
    known = pd.notna(human_pick) & (human_pick != TIE) & pd.notna(judge_pick) & (judge_pick != TIE)
    disagrees = pd.array(np.where(known, judge_pick != human_pick, False), dtype="boolean")
    disagrees[~known] = pd.NA

    out = pd.DataFrame(
        {
            "context_id": g["context_id"],
            "a": g["a"],
            "b": g["b"],
            "p_a_first": p_ab,
            "p_a_second": 1.0 - p_ba,
            "decision_a_first": dec_first,
            "decision_a_second": dec_second,
            "flips": flips,
            "judge_pick": judge_pick,
            "human_a": h_a,
            "human_b": h_b,
            "human_pick": human_pick,
            "disagrees": disagrees,
            "n_unparsed": g["n_unparsed"].astype(np.int64),
            "unparsed": g["n_unparsed"].to_numpy() > 0,
            "n_samples": g["n_samples"].astype(np.int64),
        }
    )
    order = np.lexsort(
        (_ranks(out["b"]).to_numpy(), _ranks(out["a"]).to_numpy(), _ranks(out["context_id"]))
    )
    return out.iloc[order].reset_index(drop=True)


def search_pairs(
    pairs: pd.DataFrame,
    query: str,
    *,
    rows: pd.DataFrame,
    contexts: pd.DataFrame,
    candidates: pd.DataFrame,
) -> np.ndarray:
    """Which pairs mention ``query`` (case-insensitive, literal) anywhere a user reads.

    Parameters
    ----------
    pairs : pandas.DataFrame
        A :func:`pair_table`.
    query : str
        Text to look for; blank matches every pair.
    rows : pandas.DataFrame
        The comparison rows the pairs were built from (their ``raw`` answers are searched).
    contexts, candidates : pandas.DataFrame
        Canonical tables; their ``text`` is searched (either may be empty).

    Returns
    -------
    ndarray of bool
        One entry per row of ``pairs``: the query is in the context's id or text, in either
        candidate's id or text, or in one of the pair's raw answers.
    """
    query = str(query).strip()
    if not query:
        return np.ones(len(pairs), dtype=bool)

    def hits(series: pd.Series) -> np.ndarray:
        s = series.fillna("").astype(str)
        return s.str.contains(query, case=False, regex=False).to_numpy(dtype=bool)

    ctx = pairs["context_id"].astype(str)
    found = hits(ctx) | hits(pairs["a"]) | hits(pairs["b"])
    if len(contexts) and "text" in contexts:
        ctx_hit = set(contexts["context_id"].astype(str)[hits(contexts["text"])])
        found |= ctx.isin(ctx_hit).to_numpy()
    if len(candidates) and "text" in candidates:
        c_hit = candidates[hits(candidates["text"])]
        keys = pd.MultiIndex.from_arrays(
            [c_hit["context_id"].astype(str), c_hit["candidate_id"].astype(str)]
        )
        for side in ("a", "b"):
            found |= pd.MultiIndex.from_arrays([ctx, pairs[side].astype(str)]).isin(keys)
    if len(rows) and "raw" in rows:
        r_hit = oriented(rows[hits(rows["raw"])])
        keys = pd.MultiIndex.from_arrays([r_hit["context_id"], r_hit["a"], r_hit["b"]])
        found |= pd.MultiIndex.from_arrays(
            [ctx, pairs["a"].astype(str), pairs["b"].astype(str)]
        ).isin(keys)
    return found


def pair_samples(rows: pd.DataFrame, context_id: str, a: str, b: str) -> pd.DataFrame:
    """Every answer of the judge about one pair, in both orders.

    Parameters
    ----------
    rows : pandas.DataFrame
        Comparison rows of one attribute and judge.
    context_id, a, b : str
        The pair (either order).

    Returns
    -------
    pandas.DataFrame
        Columns ``order`` ("<a> first" / "<b> first"), ``judge``, ``sample``, ``p_first``,
        ``verdict``, ``parsed`` ("yes" or "UNPARSED") and ``raw`` (empty when not kept);
        the ``a``-first answers first, then by judge and sample.
    """
    ctx = rows["context_id"].astype(str)
    first = rows["first_id"].astype(str)
    second = rows["second_id"].astype(str)
    a, b = str(a), str(b)
    ab = (ctx == str(context_id)) & (first == a) & (second == b)
    ba = (ctx == str(context_id)) & (first == b) & (second == a)
    sel = rows[ab | ba]
    p = pd.to_numeric(sel["p_first"], errors="coerce")
    out = pd.DataFrame(
        {
            "order": np.where(ab[ab | ba], f"{a} first", f"{b} first"),
            "judge": sel["judge"].astype(str),
            "sample": sel["sample"],
            "p_first": p,
            "verdict": sel["verdict"] if "verdict" in sel else None,
            "parsed": np.where(p.isna(), "UNPARSED", "yes"),
            "raw": sel["raw"].fillna("").astype(str) if "raw" in sel else "",
        }
    )
    out["_o"] = np.where(out["order"] == f"{a} first", 0, 1)
    out["_j"] = _ranks(out["judge"]) if len(out) else 0
    return out.sort_values(["_o", "_j", "sample"]).drop(columns=["_o", "_j"]).reset_index(drop=True)


def human_scores_of(human_scores: pd.DataFrame, context_id: str, candidate_ids) -> pd.DataFrame:
    """The human scores of some candidates of one context: per attribute and annotator.

    Parameters
    ----------
    human_scores : pandas.DataFrame
        Canonical human_scores table (may be empty).
    context_id : str
    candidate_ids : sequence of str
        The candidates, one column each, in this order.

    Returns
    -------
    pandas.DataFrame
        Columns ``attribute``, ``annotator`` then one per candidate; for each attribute the
        annotators in natural order, then, when several annotators scored it, a row
        ``annotator = "mean"`` (mean over those who scored). Empty when there is no score.
    """
    cands = [str(c) for c in candidate_ids]
    cols = ["attribute", "annotator", *cands]
    if not len(human_scores):
        return pd.DataFrame(columns=cols)
    hs = human_scores[
        (human_scores["context_id"].astype(str) == str(context_id))
        & human_scores["candidate_id"].astype(str).isin(cands)
    ]
    if not len(hs):
        return pd.DataFrame(columns=cols)
    hs = hs.assign(
        attribute=hs["attribute"].astype(str),
        annotator=hs["annotator"].astype(str),
        candidate_id=hs["candidate_id"].astype(str),
        score=pd.to_numeric(hs["score"], errors="coerce"),
    )
    wide = hs.pivot_table(
        index=["attribute", "annotator"], columns="candidate_id", values="score", aggfunc="mean"
    ).reindex(columns=cands)
    several = wide.groupby(level="attribute").size() > 1
    means = wide.groupby(level="attribute").mean()[several]
    means.index = pd.MultiIndex.from_arrays([means.index, ["mean"] * len(means)])
    both = pd.concat([wide, means]).reset_index()
    both.columns = cols
    both["_a"] = _ranks(both["attribute"])
    both["_m"] = (both["annotator"] == "mean").astype(int)
    both["_n"] = _ranks(both["annotator"])
    both = both.sort_values(["_a", "_m", "_n"]).drop(columns=["_a", "_m", "_n"])
    return both.reset_index(drop=True)

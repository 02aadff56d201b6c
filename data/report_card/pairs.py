"""Pairs with a known answer: the gold verdict of each pair and every judge's verdicts on it.

The gold is the human verdict: the comparisons whose judge starts with ``human:``
(:data:`data.schema.HUMAN_JUDGE_PREFIX`; LLMBar's ``human:gold``, an upload's human verdict
column, PandaLM's three annotators). Several human verdicts on one pair are a vote: the
candidate most of them prefer is the gold winner; a tie wins a tie, an even split is a
conflict. A pair is identified by its context, attribute and its two candidates in either
order; its *gold order* is the order of the first human verdict on it (LLMBar: output_1 shown
first), the other order is *swapped*.

Every model judge's rows on a pair with gold become one *judgment* per order: the rows of one
order (several samples) are averaged (their mean p), then decided at 0.5 by
``ranking.decide`` (first wins above, second below, a tie at 0.5), unparsed when every row of
the order is NaN.

Categories come from the context id: ``"<category>/<id>"`` (LLMBar: ``"LLMBar/Natural/007"``):
the *subset* is the id without its last part, the *source* its first part; an id without a
``/`` has no category. The id travels with every table, run and link, so no extra column is
needed for it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from data.schema import HUMAN_JUDGE_PREFIX
from ranking import decide

#: Gold statuses of a pair: a winner, a tie, humans split evenly, no human verdict readable.
GOLD_STATUSES = ("ok", "tie", "conflict", "unread")
#: Category levels read from the context id.
LEVELS = ("subset", "source")
#: What an unparsed verdict counts as: a wrong answer (LLMBar's convention) or nothing.
UNPARSED = ("wrong", "skip")
_KEY = ["context_id", "attribute", "lo", "hi"]


def category_of(context_ids, level: str = "subset") -> pd.Series:
    """The category of each context id: ``subset`` (the id without its last ``/`` part) or
    ``source`` (its first part); "" for an id without ``/``."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}; got {level!r}")
    ids = pd.Series(context_ids, dtype="object").astype(str)
    has = ids.str.contains("/", regex=False)
    if level == "subset":
        cat = ids.str.rpartition("/")[0]
    else:
        cat = ids.str.partition("/")[0]
    return cat.where(has, "").set_axis(ids.index)


def _pair_keys(frame: pd.DataFrame) -> pd.DataFrame:
    first = frame["first_id"].astype(str)
    second = frame["second_id"].astype(str)
    return frame.assign(
        context_id=frame["context_id"].astype(str),
        attribute=frame["attribute"].astype(str),
        first_id=first,
        second_id=second,
        lo=np.where(first <= second, first, second),
        hi=np.where(first <= second, second, first),
    )


@dataclass(frozen=True)
class Gold:
    """The gold verdict of every pair that has a human verdict.

    Attributes
    ----------
    pairs : pandas.DataFrame
        One row per pair: context_id, attribute, lo, hi (the candidates sorted, the pair's
        key), a, b (the gold order: a shown first), winner (a candidate id; "" for a tie,
        a conflict or unread), status (:data:`GOLD_STATUSES`), n_votes (readable human
        verdicts), category (subset of the context id).
    n_rows : int
        Human comparison rows read.
    n_unread_rows : int
        Human rows whose verdict is not A, B or a tie (p_first NaN).
    unread_values : list of (str, int)
        The most frequent raw texts of those rows, with their counts.
    annotators : list of str
        The human judges.
    """

    pairs: pd.DataFrame
    n_rows: int = 0
    n_unread_rows: int = 0
    unread_values: list = field(default_factory=list)
    annotators: list = field(default_factory=list)

    def count(self, status: str) -> int:
        """Pairs with this gold status."""
        return int((self.pairs["status"] == status).sum()) if len(self.pairs) else 0

    @property
    def scored(self) -> pd.DataFrame:
        """The pairs with a gold winner (status "ok"): the ones accuracy is counted on."""
        return self.pairs[self.pairs["status"] == "ok"]


_GOLD_COLUMNS = ["context_id", "attribute", "lo", "hi", "a", "b", "winner", "status", "n_votes"]


def gold_pairs(comparisons: pd.DataFrame, attribute: str | None = None) -> Gold:
    """The gold verdict of every pair with a human verdict (see the module docstring).

    Parameters
    ----------
    comparisons : pandas.DataFrame
        A canonical comparisons table.
    attribute : str, optional
        Only this attribute (default: all).

    Returns
    -------
    Gold
    """
    comps = comparisons
    if attribute is not None and len(comps):
        comps = comps[comps["attribute"].astype(str) == str(attribute)]
    human = (
        comps[comps["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX)]
        if len(comps)
        else comps
    )
    if not len(human):
        empty = pd.DataFrame(columns=[*_GOLD_COLUMNS, "category"])
        return Gold(empty)
    h = _pair_keys(human)
    p = h["p_first"].to_numpy(dtype=np.float64)
    unread = np.isnan(p)
    raw = h["raw"].astype(str) if "raw" in h.columns else pd.Series("", index=h.index)
    values = Counter(raw[unread].fillna("").str.strip().str.slice(0, 60).tolist())
    d = decide(np.where(unread, 0.5, p), 0.5)
    # the winner each readable verdict names: the first or second shown, or a tie
    won = np.where(d == 1.0, h["first_id"], np.where(d == 0.0, h["second_id"], ""))
    h = h.assign(_won=np.where(unread, None, won))
    first = h.groupby(_KEY, sort=False).first()[["first_id", "second_id"]]
    first.columns = ["a", "b"]
    read = h[~unread]
    votes = read.groupby([*_KEY, "_won"], sort=False).size().rename("n").reset_index()
    out = first.reset_index()
    if len(votes):
        votes = votes.sort_values([*_KEY, "n"], ascending=[True] * 4 + [False], kind="stable")
        top = votes.groupby(_KEY, sort=False).agg(
            winner=("_won", "first"),
            n_top=("n", "first"),
            n_second=("n", lambda s: s.iloc[1] if len(s) > 1 else 0),
            n_votes=("n", "sum"),
        )
        out = out.merge(top.reset_index(), on=_KEY, how="left")
    else:
        out = out.assign(winner=None, n_top=0, n_second=0, n_votes=0)
    n_votes = out["n_votes"].fillna(0).astype(int)
    split = out["n_top"].fillna(0).to_numpy() == out["n_second"].fillna(0).to_numpy()
    winner = out["winner"].fillna("").astype(str)
    status = np.where(
        n_votes == 0, "unread", np.where(split, "conflict", np.where(winner == "", "tie", "ok"))
    )
    out = out.assign(
        winner=np.where(status == "ok", winner, ""), status=status, n_votes=n_votes.to_numpy()
    )[_GOLD_COLUMNS]
    out["category"] = category_of(out["context_id"]).to_numpy()
    return Gold(
        out.reset_index(drop=True),
        n_rows=len(h),
        n_unread_rows=int(unread.sum()),
        unread_values=values.most_common(5),
        annotators=sorted(h["judge"].unique()),
    )


_JUDGMENT_COLUMNS = [
    "judge",
    *_KEY,
    "category",
    "order",
    "first_id",
    "second_id",
    "p",
    "n_rows",
    "n_unparsed_rows",
    "decision",
    "winner",
    "gold",
    "correct",
]


def judgments(
    comparisons: pd.DataFrame, gold: Gold, judges=None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every model judge's verdict on each pair with gold, one row per pair and order.

    Parameters
    ----------
    comparisons : pandas.DataFrame
        A canonical comparisons table (the one ``gold`` was read from, or a debiased copy).
    gold : Gold
        From :func:`gold_pairs`.
    judges : sequence of str, optional
        The judges to keep (default: every judge that is not human).

    Returns
    -------
    (judgments, outside)
        ``judgments``: judge, context_id, attribute, lo, hi, category, order ("gold" or
        "swapped"), first_id, second_id, p (mean p_first of the order's rows, NaN when all
        are unparsed), n_rows, n_unparsed_rows, decision (1 first wins, 0 second wins, 0.5
        tie, NaN unparsed), winner (the candidate the judge chose, "" for a tie or unparsed),
        gold (the gold winner, "" when the pair's gold is not "ok"), correct (1 / 0 where the
        gold has a winner and the verdict is parsed, else NaN). ``outside``: per judge,
        n_rows_without_gold (rows on pairs no human judged).
    """
    comps = comparisons
    if not len(comps) or not len(gold.pairs):
        return pd.DataFrame(columns=_JUDGMENT_COLUMNS), pd.DataFrame(
            columns=["judge", "n_rows_without_gold"]
        )
    names = comps["judge"].astype(str)
    keep = ~names.str.startswith(HUMAN_JUDGE_PREFIX)
    if judges is not None:
        keep &= names.isin([str(j) for j in judges])
    rows = _pair_keys(comps[keep])
    g = gold.pairs[[*_KEY, "a", "winner", "category"]].rename(columns={"winner": "gold"})
    merged = rows.merge(g, on=_KEY, how="left", indicator=True)
    inside = merged["_merge"] == "both"
    outside = (
        merged.loc[~inside].groupby("judge").size().rename("n_rows_without_gold").reset_index()
    )
    merged = merged[inside].drop(columns="_merge")
    merged["order"] = np.where(merged["first_id"] == merged["a"], "gold", "swapped")
    merged["_nan"] = merged["p_first"].isna()
    agg = merged.groupby(["judge", *_KEY, "order"], sort=False).agg(
        category=("category", "first"),
        first_id=("first_id", "first"),
        second_id=("second_id", "first"),
        p=("p_first", "mean"),
        n_rows=("p_first", "size"),
        n_unparsed_rows=("_nan", "sum"),
        gold=("gold", "first"),
    )
    out = agg.reset_index()
    p = out["p"].to_numpy(dtype=np.float64)
    d = decide(np.where(np.isnan(p), 0.5, np.clip(p, 0.0, 1.0)), 0.5)
    d[np.isnan(p)] = np.nan
    winner = np.where(d == 1.0, out["first_id"], np.where(d == 0.0, out["second_id"], ""))
    gold_w = out["gold"].fillna("").astype(str).to_numpy()
    correct = np.where((gold_w != "") & ~np.isnan(d), (winner == gold_w).astype(np.float64), np.nan)
    out = out.assign(
        decision=d,
        winner=winner,
        gold=gold_w,
        correct=correct,
        n_unparsed_rows=out["n_unparsed_rows"].astype(int),
    )[_JUDGMENT_COLUMNS]
    return out.reset_index(drop=True), outside


_OUTCOME_COLUMNS = [
    "judge",
    *_KEY,
    "category",
    "gold",
    "n_orders",
    "n_unparsed",
    "score",
    "right_gold",
    "right_swapped",
    "right_all",
    "both_right",
    "consistent",
    "both_unparsed",
    "p_gold_order",
    "p_swapped",
]


def pair_outcomes(judged: pd.DataFrame, unparsed: str = "wrong") -> pd.DataFrame:
    """Each judge's result on each pair whose gold has a winner.

    Parameters
    ----------
    judged : pandas.DataFrame
        From :func:`judgments`.
    unparsed : {"wrong", "skip"}
        An unparsed verdict counts as a wrong answer (LLMBar's statistics do so) or is left
        out (a pair whose every order is unparsed then has no score).

    Returns
    -------
    pandas.DataFrame
        judge, context_id, attribute, lo, hi, category, gold, n_orders (orders judged,
        parsed or not), n_unparsed (orders unparsed), score (share of the orders right: 0,
        1/2 or 1 with both orders), right_gold / right_swapped (1 / 0 per order, NaN where
        not judged or skipped), right_all (1 when every order judged is right, else 0),
        both_right (right in both orders: LLMBar's ``correct_both``; NaN unless judged in
        both orders), consistent (the same winner, or a tie, in both orders, both parsed;
        else NaN), both_unparsed (both orders judged and neither parsed), p_gold_order,
        p_swapped (P(a wins | a first), P(b wins | b first): ``ranking.position_profile``'s
        p_ab and p_ba).
    """
    if unparsed not in UNPARSED:
        raise ValueError(f"unparsed must be one of {UNPARSED}; got {unparsed!r}")
    j = judged[judged["gold"] != ""] if len(judged) else judged
    if not len(j):
        return pd.DataFrame(columns=_OUTCOME_COLUMNS)
    right = j["correct"].to_numpy(dtype=np.float64)
    if unparsed == "wrong":
        right = np.where(np.isnan(right), 0.0, right)
    j = j.assign(_right=right, _unparsed=j["decision"].isna())
    index = ["judge", *_KEY]
    base = j.groupby(index, sort=False).agg(
        category=("category", "first"),
        gold=("gold", "first"),
        n_orders=("order", "size"),
        n_unparsed=("_unparsed", "sum"),
        score=("_right", "mean"),
        right_all=("_right", "min"),  # 1 only when every scored order is right; NaN if none
    )
    cols = {"_right": "right", "decision": "d", "p": "p", "winner": "w"}
    for order in ("gold", "swapped"):
        part = j[j["order"] == order].set_index(index)[list(cols)]
        part.columns = [f"{v}_{order}" for v in cols.values()]
        base = base.join(part, how="left")
    both = base["n_orders"].to_numpy() >= 2
    rg, rs = base["right_gold"].to_numpy(float), base["right_swapped"].to_numpy(float)
    scored = both & ~np.isnan(rg) & ~np.isnan(rs)
    both_right = np.where(scored, ((rg == 1) & (rs == 1)).astype(float), np.nan)
    dg, ds = base["d_gold"].to_numpy(float), base["d_swapped"].to_numpy(float)
    parsed_both = both & ~np.isnan(dg) & ~np.isnan(ds)
    same = base["w_gold"].astype(str).to_numpy() == base["w_swapped"].astype(str).to_numpy()
    base = base.assign(
        both_right=both_right,
        consistent=np.where(parsed_both, same.astype(float), np.nan),
        both_unparsed=both & np.isnan(dg) & np.isnan(ds),
        p_gold_order=base["p_gold"].astype(float),
        p_swapped=base["p_swapped"].astype(float),
        n_unparsed=base["n_unparsed"].astype(int),
    )
    out = base.reset_index()[_OUTCOME_COLUMNS]
    return out.reset_index(drop=True)

"""The report card's tables: how often each judge is right on pairs with a known answer, how
consistent it is across the two orders, how calibrated, where it fails, what it costs, and
whether one judge is really better than another.

Every table starts from :class:`Card` (:func:`card`): the gold of each pair, every judgment
(one per judge, pair and order) and every judge's outcome per pair
(:mod:`data.report_card.pairs`). Accuracy is counted per pair: a pair judged in both orders
scores the share of its orders that are right (0, 1/2 or 1), so its two orders are one piece
of evidence, not two; the mean over pairs equals LLMBar's ``correct_average`` (the mean of
the two orders' accuracies) when every pair has both orders. Its Wilson interval
(``ranking.wilson_interval``) counts pairs. *Positional agreement* is the share of pairs
right in both orders (LLMBar's ``correct_both``); *consistency* and the *first-position
rate* are ``ranking.position_profile``'s (the same winner, or a tie, in both orders; the share
of judged orders the first-shown candidate wins, a tie 1/2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.report_card.pairs import (
    LEVELS,
    UNPARSED,
    Gold,
    category_of,
    gold_pairs,
    judgments,
    pair_outcomes,
)
from data.schema import Dataset
from ranking import ece, mcnemar, position_profile, reliability, wilson_interval

#: Columns of :func:`judge_table`, in order.
JUDGE_COLUMNS = [
    "judge",
    "n",
    "accuracy",
    "lower",
    "upper",
    "accuracy_gold_order",
    "accuracy_swapped",
    "positional_agreement",
    "n_both_orders",
    "consistency",
    "first_position_rate",
    "n_one_order",
    "n_unparsed",
    "n_ties",
    "n_gold_not_judged",
    "probabilities",
    "ece",
]
#: Units of a paired comparison: pairs (right in every order shown) or single orders.
UNITS = ("pair", "order")
_NAN = math.nan


@dataclass(frozen=True)
class Card:
    """Everything the report card reads, for one attribute of one dataset.

    Attributes
    ----------
    gold : Gold
    judged : pandas.DataFrame
        :func:`data.report_card.pairs.judgments`.
    outcomes : pandas.DataFrame
        :func:`data.report_card.pairs.pair_outcomes`.
    outside : pandas.DataFrame
        Rows per judge on pairs without any human verdict (not scored).
    judges : list of str
        The model judges with at least one judgment on a pair with gold, sorted.
    attribute : str or None
    unparsed : str
        How unparsed verdicts count (:data:`data.report_card.pairs.UNPARSED`).
    """

    gold: Gold
    judged: pd.DataFrame
    outcomes: pd.DataFrame
    outside: pd.DataFrame
    judges: list
    attribute: str | None
    unparsed: str


def gold_attributes(ds: Dataset) -> list[str]:
    """Attributes with at least one human pairwise verdict (the ones a card can be made for)."""
    gold = gold_pairs(ds.comparisons)
    return sorted(gold.pairs["attribute"].astype(str).unique()) if len(gold.pairs) else []


def card(
    ds: Dataset | pd.DataFrame,
    attribute: str | None = None,
    *,
    judges=None,
    unparsed: str = "wrong",
    gold: Gold | None = None,
) -> Card:
    """The gold, the judgments and the per-pair outcomes of a dataset (or comparisons table).

    Parameters
    ----------
    ds : Dataset or pandas.DataFrame
        The dataset, or only its comparisons (e.g. a debiased copy).
    attribute : str, optional
        The attribute; default: the only one with human verdicts (all of them when several).
    judges : sequence of str, optional
        The model judges to score (default: all).
    unparsed : {"wrong", "skip"}
        How an unparsed verdict counts (see :func:`data.report_card.pairs.pair_outcomes`).
    gold : Gold, optional
        Reuse a gold already read (a debiased copy has the same human verdicts).

    Returns
    -------
    Card
    """
    if unparsed not in UNPARSED:
        raise ValueError(f"unparsed must be one of {UNPARSED}; got {unparsed!r}")
    comps = ds.comparisons if isinstance(ds, Dataset) else ds
    if attribute is not None and len(comps):
        comps = comps[comps["attribute"].astype(str) == str(attribute)]
    gold = gold if gold is not None else gold_pairs(comps)
    judged, outside = judgments(comps, gold, judges)
    outcomes = pair_outcomes(judged, unparsed)
    names = sorted(judged["judge"].astype(str).unique()) if len(judged) else []
    return Card(gold, judged, outcomes, outside, names, attribute, unparsed)


# ------------------------------------------------------------------------ the judge table


def has_probabilities(p) -> bool:
    """Whether a judge's p_first values are probabilities rather than verdicts: any value
    strictly between 0 and 1 other than 1/2."""
    v = np.asarray(p, dtype=np.float64)
    v = v[np.isfinite(v)]
    return bool(((v > 0) & (v < 1) & (v != 0.5)).any())


def _calibration_pairs(judged: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(p, y): each parsed judgment's p(first wins) and 1 when the gold winner was first."""
    j = judged[(judged["gold"] != "") & judged["p"].notna()]
    p = j["p"].to_numpy(dtype=np.float64)
    y = (j["gold"].astype(str) == j["first_id"].astype(str)).to_numpy(dtype=np.float64)
    return p, y


def _one_judge(c: Card, judge: str, confidence: float) -> dict:
    o = c.outcomes[c.outcomes["judge"] == judge]
    j = c.judged[c.judged["judge"] == judge]
    scored = o["score"].notna()
    n = int(scored.sum())
    k = float(o.loc[scored, "score"].sum())
    low, high = wilson_interval(k, n, confidence) if n else (_NAN, _NAN)
    prof = (
        position_profile(o["p_gold_order"], o["p_swapped"], n_boot=0)
        if len(o) and (o["p_gold_order"].notna() | o["p_swapped"].notna()).any()
        else None
    )
    p, y = _calibration_pairs(j)
    probs = has_probabilities(j["p"])
    both = o["both_right"].notna()
    judged_pairs = set(zip(o["context_id"], o["lo"], o["hi"], strict=True))
    n_gold = len(c.gold.scored)
    return {
        "judge": judge,
        "n": n,
        "accuracy": k / n if n else _NAN,
        "lower": low,
        "upper": high,
        "accuracy_gold_order": o["right_gold"].mean() if o["right_gold"].notna().any() else _NAN,
        "accuracy_swapped": o["right_swapped"].mean() if o["right_swapped"].notna().any() else _NAN,
        "positional_agreement": o.loc[both, "both_right"].mean() if both.any() else _NAN,
        "n_both_orders": int((o["n_orders"] >= 2).sum()),
        "consistency": prof.consistency if prof is not None else _NAN,
        "first_position_rate": prof.first_win_rate if prof is not None else _NAN,
        "n_one_order": int((o["n_orders"] == 1).sum()),
        "n_unparsed": int(o["n_unparsed"].sum()),
        "n_ties": int((j["decision"] == 0.5).sum()),
        "n_gold_not_judged": max(n_gold - len(judged_pairs), 0),
        "probabilities": probs,
        "ece": ece(p, y) if probs and len(p) else _NAN,
    }


def judge_table(c: Card, *, confidence: float = 0.95) -> pd.DataFrame:
    """One row per judge (see :data:`JUDGE_COLUMNS`), sorted by accuracy, best first.

    ``n`` counts the pairs with a gold winner the judge was scored on; ``accuracy`` is the
    mean pair score with its Wilson interval; ``accuracy_gold_order`` / ``accuracy_swapped``
    the accuracy of each order alone (LLMBar's ``correct_False`` / ``correct_True``);
    ``positional_agreement`` the share of the ``n_both_orders`` pairs right in both orders;
    ``consistency`` and ``first_position_rate`` from ``ranking.position_profile``;
    ``n_one_order`` pairs judged in one order only; ``n_unparsed`` orders without a
    verdict; ``n_ties`` tied orders (a tie is never right); ``n_gold_not_judged`` pairs with
    a gold winner the judge has no verdict on; ``ece`` the expected calibration error
    (``ranking.ece``) of p(first wins) against the gold, NaN for a judge of hard verdicts
    (``probabilities`` False).
    """
    rows = [_one_judge(c, j, confidence) for j in c.judges]
    table = pd.DataFrame(rows, columns=JUDGE_COLUMNS)
    return table.sort_values(
        ["accuracy", "judge"], ascending=[False, True], kind="stable"
    ).reset_index(drop=True)


def category_table(c: Card, *, level: str = "subset", confidence: float = 0.95) -> pd.DataFrame:
    """Accuracy of each judge in each category of the context ids (see
    :func:`data.report_card.pairs.category_of`).

    Returns
    -------
    pandas.DataFrame
        judge, category, n, accuracy, lower, upper, positional_agreement; empty when no
        context id carries a category.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}; got {level!r}")
    cols = ["judge", "category", "n", "accuracy", "lower", "upper", "positional_agreement"]
    o = c.outcomes[c.outcomes["score"].notna()]
    if not len(o):
        return pd.DataFrame(columns=cols)
    cat = category_of(o["context_id"], level).to_numpy()
    if not (cat != "").any():
        return pd.DataFrame(columns=cols)
    o = o.assign(category=cat)
    g = o.groupby(["judge", "category"], sort=True).agg(
        n=("score", "size"),
        k=("score", "sum"),
        positional_agreement=("both_right", "mean"),
    )
    g = g.reset_index()
    low, high = wilson_interval(g["k"].to_numpy(float), g["n"].to_numpy(float), confidence)
    g = g.assign(accuracy=g["k"] / g["n"], lower=low, upper=high)
    return g[cols]


def mode_table(cards: dict[str, Card], *, confidence: float = 0.95) -> pd.DataFrame:
    """Accuracy of each judge under each debias mode.

    Parameters
    ----------
    cards : dict of str to Card
        Mode -> the card of the comparisons as that mode decides them (the page builds them
        from ``pages.services.calibration.debiased_dataset``, the shared setting's rules).

    Returns
    -------
    pandas.DataFrame
        judge, mode, n, accuracy, lower, upper, positional_agreement, consistency, n_ties
        (orders the mode decides as a tie: a tie is never right, so a mode that maps every
        verdict of a judge to 1/2 scores 0).
    """
    cols = [
        "judge",
        "mode",
        "n",
        "accuracy",
        "lower",
        "upper",
        "positional_agreement",
        "consistency",
        "n_ties",
    ]
    parts = [judge_table(c, confidence=confidence).assign(mode=mode) for mode, c in cards.items()]
    if not parts:
        return pd.DataFrame(columns=cols)
    return pd.concat(parts, ignore_index=True)[cols]


# ------------------------------------------------------------------------ calibration


@dataclass(frozen=True)
class Calibration:
    """A judge's probabilities against the gold.

    Attributes
    ----------
    judge : str
    probabilities : bool
        Whether the judge gives probabilities (else every number below is NaN or empty).
    n : int
        Parsed judgments on pairs with a gold winner.
    ece : float
        ``ranking.ece(p, y)``: p = p(first wins), y = 1 when the gold winner was shown first.
    diagram : pandas.DataFrame
        The reliability diagram (``ranking.reliability``): bin_mid, mean_p, mean_y, count.
    confidence : pandas.DataFrame
        Accuracy against the judge's confidence max(p, 1 - p), in equal-width bins of
        [0.5, 1]: bin_mid, mean_confidence, accuracy, count, lower, upper (Wilson).
    """

    judge: str
    probabilities: bool
    n: int
    ece: float
    diagram: pd.DataFrame
    confidence: pd.DataFrame


def calibration(c: Card, judge: str, *, n_bins: int = 10, confidence: float = 0.95) -> Calibration:
    """The reliability diagram, ECE and accuracy-against-confidence of one judge."""
    j = c.judged[c.judged["judge"] == judge]
    p, y = _calibration_pairs(j)
    probs = has_probabilities(j["p"])
    r = reliability(p, y, n_bins=n_bins)
    diagram = pd.DataFrame(
        {"bin_mid": r.bin_mid, "mean_p": r.mean_p, "mean_y": r.mean_y, "count": r.count}
    )
    conf = np.maximum(p, 1.0 - p)
    right = ((p > 0.5) & (y == 1)) | ((p < 0.5) & (y == 0))
    decided = p != 0.5
    # confidence lies in [0.5, 1]: stretch it onto [0, 1] for the bins, then back
    rc = reliability((conf[decided] - 0.5) * 2.0, right[decided].astype(float), n_bins=n_bins)
    low, high = wilson_interval(
        np.nan_to_num(rc.mean_y * rc.count), rc.count.astype(float), confidence
    )
    conf_table = pd.DataFrame(
        {
            "bin_mid": 0.5 + rc.bin_mid / 2.0,
            "mean_confidence": 0.5 + rc.mean_p / 2.0,
            "accuracy": rc.mean_y,
            "count": rc.count,
            "lower": low,
            "upper": high,
        }
    )
    return Calibration(
        judge,
        probs,
        int(len(p)),
        ece(p, y, n_bins=n_bins) if probs and len(p) else _NAN,
        diagram,
        conf_table,
    )


# ------------------------------------------------------------------------ where it fails


def length_table(c: Card, candidates: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame:
    """Accuracy when the gold winner is the shorter answer, the longer, or as long (words).

    Returns
    -------
    pandas.DataFrame
        judge, gold_is ("shorter", "longer", "same length"), n, accuracy, lower, upper;
        empty when the candidates have no texts.
    """
    cols = ["judge", "gold_is", "n", "accuracy", "lower", "upper"]
    o = c.outcomes[c.outcomes["score"].notna()]
    if not len(o) or not len(candidates) or "text" not in candidates:
        return pd.DataFrame(columns=cols)
    words = candidates.assign(
        context_id=candidates["context_id"].astype(str),
        candidate_id=candidates["candidate_id"].astype(str),
        n_words=candidates["text"].fillna("").astype(str).str.split().str.len(),
    ).set_index(["context_id", "candidate_id"])["n_words"]
    words = words[~words.index.duplicated()]
    if not words.gt(0).any():
        return pd.DataFrame(columns=cols)
    loser = np.where(o["gold"] == o["lo"], o["hi"], o["lo"])
    w_gold = words.reindex(pd.MultiIndex.from_arrays([o["context_id"], o["gold"]])).to_numpy()
    w_other = words.reindex(pd.MultiIndex.from_arrays([o["context_id"], loser])).to_numpy()
    known = ~(np.isnan(w_gold.astype(float)) | np.isnan(w_other.astype(float)))
    kind = np.where(
        w_gold < w_other, "shorter", np.where(w_gold > w_other, "longer", "same length")
    )
    o = o.assign(gold_is=np.where(known, kind, ""))[known]
    g = o.groupby(["judge", "gold_is"], sort=True).agg(n=("score", "size"), k=("score", "sum"))
    g = g.reset_index()
    low, high = wilson_interval(g["k"].to_numpy(float), g["n"].to_numpy(float), confidence)
    return g.assign(accuracy=g["k"] / g["n"], lower=low, upper=high)[cols]


def failures(c: Card, judge: str) -> pd.DataFrame:
    """The pairs the judge got wrong in at least one order, worst first.

    Returns
    -------
    pandas.DataFrame
        context_id, attribute, category, gold, a, b (the gold order), score, chose_gold_order,
        chose_swapped (the candidate chosen in each order; "tie", "unparsed" or "" when the
        order was not judged), in the order of the score, then the context.
    """
    o = c.outcomes[(c.outcomes["judge"] == judge) & (c.outcomes["score"] < 1)]
    cols = [
        "context_id",
        "attribute",
        "category",
        "gold",
        "a",
        "b",
        "score",
        "chose_gold_order",
        "chose_swapped",
    ]
    if not len(o):
        return pd.DataFrame(columns=cols)
    j = c.judged[c.judged["judge"] == judge]
    key = ["context_id", "attribute", "lo", "hi"]

    def chose(order):
        part = j[j["order"] == order].set_index(key)
        text = np.where(
            part["decision"].isna(),
            "unparsed",
            np.where(part["decision"] == 0.5, "tie", part["winner"].astype(str)),
        )
        return pd.Series(text, index=part.index)

    o = o.set_index(key)
    a = c.gold.pairs.set_index(key)[["a", "b"]]
    o = o.join(a, how="left")
    o["chose_gold_order"] = chose("gold").reindex(o.index).fillna("")
    o["chose_swapped"] = chose("swapped").reindex(o.index).fillna("")
    o = o.reset_index().sort_values(["score", "context_id"], kind="stable")
    return o[cols].reset_index(drop=True)


# ------------------------------------------------------------------------ two judges


@dataclass(frozen=True)
class Comparison:
    """Two judges on the same items: McNemar's exact test and the accuracy difference.

    Attributes
    ----------
    judge_a, judge_b : str
    unit : str
        "pair" (right in every order shown) or "order" (each order of a pair an item).
    result : ranking.McNemarResult
    """

    judge_a: str
    judge_b: str
    unit: str
    result: object


def compare(c: Card, judge_a: str, judge_b: str, *, unit: str = "pair", confidence=0.95):
    """Is judge B right more often than judge A on the items both judged?

    Parameters
    ----------
    c : Card
    judge_a, judge_b : str
    unit : {"pair", "order"}
        "pair": an item is a pair, right when every order the judge saw is right (with both
        orders: LLMBar's "correct in both"); "order": an item is one order of a pair, matched
        between the judges (the two orders of a pair are then two items, which the test
        takes as independent).
    confidence : float
        Coverage of the interval of the difference.

    Returns
    -------
    Comparison
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}; got {unit!r}")
    key = ["context_id", "attribute", "lo", "hi"]
    if unit == "pair":
        o = c.outcomes
        a = o[o["judge"] == judge_a].set_index(key)["right_all"]
        b = o[o["judge"] == judge_b].set_index(key)["right_all"]
    else:
        j = c.judged[c.judged["gold"] != ""]
        right = j["correct"].to_numpy(dtype=np.float64)
        if c.unparsed == "wrong":
            right = np.where(np.isnan(right), 0.0, right)
        j = j.assign(_right=right)
        a = j[j["judge"] == judge_a].set_index([*key, "order"])["_right"]
        b = j[j["judge"] == judge_b].set_index([*key, "order"])["_right"]
    both = a.index.intersection(b.index)
    r = mcnemar(
        a.reindex(both).to_numpy(dtype=np.float64),
        b.reindex(both).to_numpy(dtype=np.float64),
        confidence,
    )
    return Comparison(judge_a, judge_b, unit, r)


# ------------------------------------------------------------------------ bad input, cost


def problems(c: Card, table: pd.DataFrame | None = None) -> list[str]:
    """What in the data the card could not use, each with its count, for the page.

    Covers: human verdicts that are not A, B or a tie (with their most frequent values),
    pairs whose gold is a tie or a conflict (left out), pairs with gold but no verdict of a
    judge, judges with pairs in one order only, unparsed verdicts, and judge verdicts on
    pairs without gold.
    """
    out = []
    g = c.gold
    if g.n_unread_rows:
        shown = ", ".join(f"{v!r} ({n})" for v, n in g.unread_values)
        out.append(
            f"{g.n_unread_rows:,} of {g.n_rows:,} human (gold) verdicts are not A, B or a tie "
            f"and were not read: {shown}. {g.count('unread'):,} pair(s) are left without gold."
        )
    if g.count("tie"):
        out.append(
            f"{g.count('tie'):,} pair(s) have a tie as their gold: left out of accuracy (no "
            "answer is right)."
        )
    if g.count("conflict"):
        out.append(
            f"{g.count('conflict'):,} pair(s) have human verdicts that disagree evenly: "
            "left out of accuracy."
        )
    table = judge_table(c) if table is None else table
    said: dict[str, list[str]] = {}  # what is said -> the judges it is said of, in order
    for rec in table.itertuples(index=False):
        if rec.n_gold_not_judged:
            said.setdefault(
                f"no verdict on {rec.n_gold_not_judged:,} of the {len(g.scored):,} pairs with "
                f"gold (scored on the {rec.n:,} it judged).",
                [],
            ).append(rec.judge)
        if rec.n_one_order:
            said.setdefault(
                f"{rec.n_one_order:,} pair(s) judged in one order only (positional agreement "
                f"and consistency use its {rec.n_both_orders:,} pair(s) judged in both orders).",
                [],
            ).append(rec.judge)
        if rec.n_unparsed:
            how = "counted as wrong" if c.unparsed == "wrong" else "left out"
            said.setdefault(f"{rec.n_unparsed:,} unparsed verdict(s), {how}.", []).append(rec.judge)
    for rec in c.outside.itertuples(index=False):
        said.setdefault(
            f"{int(rec.n_rows_without_gold):,} verdict row(s) on pairs without a human verdict "
            "(not scored).",
            [],
        ).append(rec.judge)
    # one line per thing said, naming every judge it holds for (LLMBar: 17 judges ran on
    # the same 419 of its 885 pairs, one line instead of 17)
    for text, judges in said.items():
        who = judges[0] if len(judges) == 1 else f"{len(judges)} judges ({', '.join(judges)})"
        out.append(f"{who}: {text}")
    return out


#: Columns of the usage table :func:`with_cost` reads (``judge.runs.usage`` builds it).
USAGE_COLUMNS = ["judge", "model", "n_calls", "prompt_tokens", "completion_tokens", "usd"]


def with_cost(table: pd.DataFrame, c: Card, usage: pd.DataFrame | None) -> pd.DataFrame:
    """``table`` with the calls, tokens and dollars per 1,000 judgments of each judge run here.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`judge_table`.
    c : Card
        The card (its judgments count the judge's judged orders).
    usage : pandas.DataFrame, optional
        :data:`USAGE_COLUMNS`, one row per judge (``judge.runs.usage.judge_usage``); usd NaN
        when the model has no price.

    Returns
    -------
    pandas.DataFrame
        Adds calls_per_1k, tokens_per_1k and usd_per_1k (NaN for a judge not run here).
    """
    out = table.copy()
    for col in ("calls_per_1k", "tokens_per_1k", "usd_per_1k"):
        out[col] = np.nan
    if usage is None or not len(usage) or not len(out):
        return out
    n_judg = c.judged.groupby("judge").size() if len(c.judged) else pd.Series(dtype=float)
    u = usage.set_index(usage["judge"].astype(str))
    for i, judge in enumerate(out["judge"].astype(str)):
        if judge not in u.index or not n_judg.get(judge, 0):
            continue
        rec = u.loc[judge]
        per = 1000.0 / float(n_judg[judge])
        tokens = float(rec["prompt_tokens"] or 0) + float(rec["completion_tokens"] or 0)
        out.loc[out.index[i], "calls_per_1k"] = float(rec["n_calls"]) * per
        out.loc[out.index[i], "tokens_per_1k"] = tokens * per
        out.loc[out.index[i], "usd_per_1k"] = (
            float(rec["usd"]) * per if pd.notna(rec["usd"]) else np.nan
        )
    return out

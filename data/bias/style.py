"""Length and style bias of a judge: P(prefers the longer), style coefficients, controlled ranks.

Everything starts from :func:`data.bias.pairs.pair_frame` (one row per judged pair with both
orders and the text features of each side). Each parsed order of a pair is one comparison
"first beats second" with the soft outcome p (the mean parsed p_first of that order); its
covariates are a constant 1 (the first-slot effect) and the Chatbot Arena normalised
differences (first - second) / (first + second) of words, markdown headers, list items and
bold spans (:func:`data.bias.features.normalized_diff`). The models are
``ranking.bradley_terry(..., features=...)`` (style-controlled Bradley–Terry) and
``ranking.controlled_win_rates`` (the AlpacaEval length-controlled win rate).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.bias.features import normalized_diff
from data.bias.pairs import frame_of, pair_frame, rating_pairs
from data.natural import natural_key, natural_sorted
from data.schema import DataError, Dataset
from ranking import bradley_terry, competition_ranks, controlled_win_rates

__all__ = [
    "STYLE_TERMS",
    "length_controlled_win_rate",
    "length_preference",
    "ordered_comparisons",
    "style_coefficients",
    "style_ranking",
]

#: The covariates of the style models, in column order, and the pair_frame feature of each.
STYLE_TERMS = ("first slot", "length", "headers", "lists", "bold")
_FEATURES = ("words", "headers", "lists", "bold")
_N_BOOT = 1000


def ordered_comparisons(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per parsed order of every pair of a :func:`pair_frame`.

    Columns: context_id, first, second (candidate ids), system_first, system_second, p (P(first
    wins), the mean parsed p_first of that order) and ``<feature>_first``,
    ``<feature>_second`` for words, headers, lists, bold.
    """
    parts = []
    for one, two, p in (("a", "b", "p_ab"), ("b", "a", "p_ba")):
        sub = pairs[np.isfinite(pairs[p].to_numpy(dtype=float))]
        cols = {
            "context_id": sub["context_id"].to_numpy(),
            "first": sub[one].to_numpy(),
            "second": sub[two].to_numpy(),
            "system_first": sub[f"system_{one}"].to_numpy(),
            "system_second": sub[f"system_{two}"].to_numpy(),
            "p": sub[p].to_numpy(dtype=float),
        }
        for f in _FEATURES:
            cols[f"{f}_first"] = sub[f"{f}_{one}"].to_numpy(dtype=float)
            cols[f"{f}_second"] = sub[f"{f}_{two}"].to_numpy(dtype=float)
        parts.append(pd.DataFrame(cols))
    return pd.concat(parts, ignore_index=True)


def _covariates(rows: pd.DataFrame, terms=STYLE_TERMS) -> np.ndarray:
    cols = {"first slot": np.ones(len(rows))}
    for term, f in zip(STYLE_TERMS[1:], _FEATURES, strict=True):
        cols[term] = normalized_diff(rows[f"{f}_first"], rows[f"{f}_second"])
    return np.column_stack([cols[t] for t in terms])


def _rows(ds: Dataset, attribute: str, judge: str, pairs=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    pairs = pair_frame(ds, attribute, judge) if pairs is None else frame_of(pairs)
    rows = ordered_comparisons(pairs)
    if rows.empty:
        raise DataError(
            f"dataset {ds.name!r}: judge {judge!r} has no parsed comparison for attribute "
            f"{attribute!r}; nothing to fit (check the judge's answers were parsed)"
        )
    return pairs, rows


def _mean_interval(
    values: np.ndarray, seed: int = 0, draws: dict | None = None
) -> tuple[float, float, float]:
    """Mean and percentile bootstrap interval (95 %, resampling the values); NaN if none.

    ``draws``: resampling indices already drawn with this seed, by sample size; filled and
    reused (the same seed and size draw the same indices, so two sources of one size share
    them, half the random numbers).
    """
    v = values[np.isfinite(values)]
    if v.size == 0:
        return np.nan, np.nan, np.nan
    draws = {} if draws is None else draws
    if v.size not in draws:
        draws[v.size] = np.random.default_rng(seed).integers(0, v.size, (_N_BOOT, v.size))
    means = np.take(v, draws[v.size]).mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(v.mean()), float(lo), float(hi)


def length_preference(
    ds: Dataset, attribute: str, judge: str, prompt_id: str | None = None, *, pairs=None
) -> pd.DataFrame:
    """How often the judge, and the humans, prefer the longer of two candidates.

    Over the pairs whose word counts differ. The judge's preference for the longer answer of
    a pair is the mean over its judged orders of P(longer wins) (p_ab or 1 - p_ba oriented
    to the longer); the humans' is ``human_pref`` oriented to the longer (pairs with a human
    preference only). A ratings judge (``prompt_id`` given) never saw the two together: its
    preference is P(it rates the longer higher) over pairs of its samples, ties counting
    1/2 (:func:`data.bias.pairs.rating_pairs`).

    Parameters
    ----------
    ds : Dataset
    attribute, judge : str
        The attribute and the judge (comparative, or a ratings judge with ``prompt_id``).
    prompt_id : str, optional
        The prompt of a ratings judge: read its ratings (``rating_pairs``) instead of
        pairwise verdicts (``pair_frame``).
    pairs : JudgedPairs or pandas.DataFrame, optional
        The prebuilt pair frame of this selection (``judged_pairs`` / ``pair_frame``, or
        ``rating_pairs`` with ``prompt_id``), used as is.

    Returns
    -------
    DataFrame
        One row per source ("judge", "humans"): source, n_pairs, p_longer, low, high (a 95 %
        percentile bootstrap over pairs, seeded). NaN with n_pairs 0 where no pair counts
        (e.g. no human preferences); ``attrs["reasons"]`` says why.

    Raises
    ------
    DataError
        ``judge`` has no comparisons (no ratings, with ``prompt_id``) in ``ds``.
    """
    if pairs is not None:
        pairs = frame_of(pairs)
    elif prompt_id is None:
        pairs = pair_frame(ds, attribute, judge)
    else:
        pairs = rating_pairs(ds, attribute, judge, prompt_id)
    wa, wb = pairs["words_a"].to_numpy(float), pairs["words_b"].to_numpy(float)
    differ = np.isfinite(wa) & np.isfinite(wb) & (wa != wb)
    a_longer = wa > wb
    pab, pba = pairs["p_ab"].to_numpy(float), pairs["p_ba"].to_numpy(float)
    both = np.column_stack([pab, 1.0 - pba])
    n_orders = np.isfinite(both).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        judge_a = np.where(n_orders > 0, np.nansum(both, axis=1) / n_orders, np.nan)
    human_a = pairs["human_pref"].to_numpy(float)
    out, reasons, draws = [], {}, {}
    for source, pref_a in (("judge", judge_a), ("humans", human_a)):
        v = np.where(a_longer, pref_a, 1.0 - pref_a)[differ]
        p, lo, hi = _mean_interval(v, draws=draws)
        n = int(np.isfinite(v).sum())
        if n == 0:
            reasons[source] = (
                "no pair of different lengths has a human preference"
                if source == "humans"
                else "no judged pair of candidates with different word counts"
            )
        out.append(dict(source=source, n_pairs=n, p_longer=p, low=lo, high=hi))
    df = pd.DataFrame(out)
    df.attrs["reasons"] = reasons
    return df


def style_coefficients(
    ds: Dataset, attribute: str, judge: str, *, items: str = "system", pairs=None
) -> pd.DataFrame:
    """The judge's first-slot, length and style effects, with 95 % Fisher intervals.

    Style-controlled Bradley–Terry with the covariates of :data:`STYLE_TERMS` (log-odds of
    "first beats second" per unit of the normalised difference; the first slot: per
    comparison). ``items="system"`` (default, the Chatbot Arena model): items are systems,
    and the effects are identified by how a system's answers vary across contexts.
    ``items="candidate"``: items are (context, candidate), controlling for every answer's own
    quality; as each candidate has one text, a text effect is then identified only through
    the non-linearity of the normalised difference, and not at all where a context's
    comparison graph is a tree (e.g. SummEval's ChatGPT verdicts: 11 pairs of 12 candidates).
    A term that cannot be identified (e.g. no markdown at all) is NaN, with a note in
    ``attrs["notes"]``. ``pairs``: the prebuilt pair frame (``judged_pairs`` or
    ``pair_frame`` of this selection), used as is.

    Returns
    -------
    DataFrame
        term, coef, low, high, se; ``attrs["notes"]``: the fit's notes.
    """
    if items not in ("system", "candidate"):
        raise ValueError(f"items must be 'system' or 'candidate'; got {items!r}")
    _, rows = _rows(ds, attribute, judge, pairs)
    if items == "system":
        res = _system_fit(rows, STYLE_TERMS)[1]
    else:
        key_f = rows["context_id"].astype(str) + "\x1f" + rows["first"].astype(str)
        key_s = rows["context_id"].astype(str) + "\x1f" + rows["second"].astype(str)
        codes, uniq = pd.factorize(pd.concat([key_f, key_s], ignore_index=True))
        m = len(rows)
        res = bradley_terry(
            first=codes[:m], second=codes[m:], outcome=rows["p"].to_numpy(), n_items=len(uniq),
            features=_covariates(rows),
        )  # fmt: skip
    df = pd.DataFrame(
        dict(term=STYLE_TERMS, coef=res.coef, low=res.coef_low, high=res.coef_high, se=res.coef_se)
    )
    df.attrs["notes"] = res.notes
    return df


def _system_fit(rows: pd.DataFrame, terms):
    # object arrays: iterating pandas' Arrow strings per element costs more than the fits
    sys_f = rows["system_first"].astype(str).to_numpy(dtype=object)
    sys_s = rows["system_second"].astype(str).to_numpy(dtype=object)
    systems = natural_sorted(pd.unique(np.concatenate([sys_f, sys_s])))
    index = pd.Index(systems, dtype=object)
    first, second = index.get_indexer(sys_f), index.get_indexer(sys_s)
    same = first == second  # two candidates of one system: nothing about the systems
    kw = dict(
        first=first[~same], second=second[~same], outcome=rows["p"].to_numpy()[~same],
        n_items=len(systems), intervals="fisher",
    )  # fmt: skip
    if terms:
        kw["features"] = _covariates(rows[~same], terms)
    if len(systems) < 2 or not (~same).any():
        raise DataError("fewer than two systems were compared: no system-level ranking")
    return systems, bradley_terry(**kw), first[~same], second[~same], rows["p"].to_numpy()[~same]


def style_ranking(ds: Dataset, attribute: str, judge: str, *, pairs=None) -> pd.DataFrame:
    """System ranking by Bradley–Terry without and with the style covariates.

    Items are systems; every parsed order of every pair is one comparison. "controlled" adds
    all of :data:`STYLE_TERMS` (the Chatbot Arena style control, plus the first slot): its
    scores are what the judge's preferences say once length and markdown are held equal.
    ``pairs``: the prebuilt pair frame of this selection, used as is.

    Returns
    -------
    DataFrame
        system, score_plain, low_plain, high_plain, score_controlled, low_controlled,
        high_controlled, rank_plain, rank_controlled (competition ranks, 1 = best), sorted by
        rank_controlled then system (natural order); ``attrs["coef"]``: the controlled fit's
        term -> (coef, low, high); ``attrs["notes"]``.
    """
    _, rows = _rows(ds, attribute, judge, pairs)
    systems, plain, *_ = _system_fit(rows, ())
    _, ctrl, *_ = _system_fit(rows, STYLE_TERMS)
    df = pd.DataFrame(
        dict(
            system=systems,
            score_plain=plain.scores, low_plain=plain.lower, high_plain=plain.upper,
            score_controlled=ctrl.scores, low_controlled=ctrl.lower, high_controlled=ctrl.upper,
            rank_plain=competition_ranks(plain.scores),
            rank_controlled=competition_ranks(ctrl.scores),
        )
    )  # fmt: skip
    df["_key"] = df["system"].map(natural_key)
    df = df.sort_values(["rank_controlled", "_key"], na_position="last", kind="stable")
    df = df.drop(columns="_key").reset_index(drop=True)
    df.attrs["coef"] = {
        t: (float(c), float(lo), float(hi))
        for t, c, lo, hi in zip(STYLE_TERMS, ctrl.coef, ctrl.coef_low, ctrl.coef_high, strict=True)
    }
    df.attrs["notes"] = tuple(dict.fromkeys((*plain.notes, *ctrl.notes)))
    return df


def length_controlled_win_rate(
    ds: Dataset, attribute: str, judge: str, baseline: str, *, pairs=None
) -> pd.DataFrame:
    """Win rate of every system against ``baseline``: raw and length-controlled (AlpacaEval).

    raw: the judge's mean P(system wins) over its direct comparisons with the baseline (soft
    p, so a tie counts 1/2), or the plain Bradley–Terry prediction where the two were never
    compared directly. lc: ``ranking.controlled_win_rates`` of the system-level Bradley–Terry
    with a first-slot and a length covariate, i.e. the predicted win rate at equal length and
    position; low/high its 95 % interval (delta method on the log-odds). ``pairs``: the
    prebuilt pair frame of this selection, used as is.

    Raises
    ------
    DataError
        ``baseline`` is not one of the compared systems (the message lists them).

    Returns
    -------
    DataFrame
        system, win_rate_raw, win_rate_lc, low, high (the baseline itself: 0.5), sorted by
        win_rate_lc descending then system.
    """
    _, rows = _rows(ds, attribute, judge, pairs)
    systems, lc_fit, first, second, p = _system_fit(rows, STYLE_TERMS[:2])
    if baseline not in systems:
        shown = ", ".join(systems[:20])
        raise DataError(
            f"baseline {baseline!r} is not a system compared by judge {judge!r} on "
            f"{attribute!r}; choose one of: {shown}"
        )
    b = systems.index(baseline)
    rate, low, high = controlled_win_rates(lc_fit, b)
    n = len(systems)
    # direct comparisons with the baseline, oriented to the other system
    won = np.where(second == b, p, 1.0 - p)
    other = np.where(second == b, first, second)
    direct = (first == b) | (second == b)
    cnt = np.bincount(other[direct], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.bincount(other[direct], won[direct], minlength=n) / cnt
    unseen = cnt == 0
    unseen[b] = False
    if unseen.any():  # the plain fit's prediction, only where it is needed
        plain = _system_fit(rows, ())[1]
        predicted = 1.0 / (1.0 + np.exp(-(plain.scores - plain.scores[b])))
        raw = np.where(unseen, predicted, raw)
    raw[b] = 0.5
    df = pd.DataFrame(dict(system=systems, win_rate_raw=raw, win_rate_lc=rate, low=low, high=high))
    df["_key"] = df["system"].map(natural_key)
    df["_neg"] = -df["win_rate_lc"]
    df = df.sort_values(["_neg", "_key"], na_position="last", kind="stable")
    df = df.drop(columns=["_key", "_neg"]).reset_index(drop=True)
    df.attrs["notes"] = lc_fit.notes
    return df

"""Systems ranked over every context pooled: the Rankings page's systems and the Leaderboard.

What the items are (:func:`system_items`): the candidates' systems when they recur across
contexts, else the candidate ids themselves when those recur (a pairwise-verdict upload whose
candidate ids are model names), else nothing, with the reason. :func:`system_ranking` fits
Bradley–Terry with intervals and Elo with a band over game orderings, under a debias rule
(``pages.services.bias.Debias``); :func:`compare_systems` sets a raw and a debiased ranking
side by side; :func:`leaderboard` ranks the systems by every judge of an attribute (model
judges and the human pool) under the shared debias mode, and :func:`win_rates` tallies one
judge's battles (``ranking.leaderboard``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.arrays import PMatrix
from data.flat import flat_comparisons
from data.natural import natural_key, natural_sorted
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset
from pages.services.calibration import DEBIAS_MODES, Debias, debiased_outcomes, resolve_debias
from pages.services.common import cache_data
from pages.services.comparisons import (
    HUMAN_POOL,
    Reference,
    human_reference,
    judge_options,
    pmatrix,
    select_comparisons,
)
from ranking import (
    RankChange,
    bradley_terry,
    competition_ranks,
    elo,
    rank_change,
    rank_intervals,
    spearman,
    win_matrix,
)

SOFT = ("soft", None)

#: How the bootstrap resamples: single comparisons, or whole contexts (all comparisons of a
#: context in or out together; respects that comparisons of one context are not independent).
RESAMPLE = ("comparisons", "contexts")


def _compared(pm: PMatrix) -> pd.DataFrame:
    """(context_id, candidate_id) of every candidate of ``pm``."""
    return pd.DataFrame(
        {
            "context_id": [
                c for c, cs in zip(pm.context_ids, pm.candidate_ids, strict=True) for _ in cs
            ],
            "candidate_id": [x for cs in pm.candidate_ids for x in cs],
        }
    )


def _system_lut(ds: Dataset) -> pd.DataFrame | None:
    """(context_id, candidate_id, system) as strings; None without a system column."""
    cands = ds.candidates
    if "system" not in cands.columns or not cands["system"].notna().any():
        return None
    lut = cands[["context_id", "candidate_id", "system"]].drop_duplicates(
        ["context_id", "candidate_id"]
    )
    return lut.astype({"context_id": str, "candidate_id": str})


@cache_data(show_spinner=False, max_entries=64)
def system_items(ds: Dataset, attribute: str, judge: str) -> tuple[str | None, str]:
    """What to rank across contexts: ("system" | "candidate" | None, why).

    "system" when every compared candidate has a system and fewer systems than compared
    candidates exist; else "candidate" when candidate ids recur across contexts (they name
    the systems, as in arena-style data); else None, with a sentence saying why.
    """
    pm = pmatrix(ds, attribute, judge)
    compared = _compared(pm)
    n = len(compared)
    lut = _system_lut(ds)
    why = "the candidates have no 'system' column"
    if lut is not None:
        merged = compared.merge(lut, on=["context_id", "candidate_id"], how="left")
        missing = int(merged["system"].isna().sum())
        n_sys = merged["system"].dropna().astype(str).nunique()
        if not missing and 2 <= n_sys < n:
            return "system", f"{n_sys} systems"
        why = (
            f"{missing} compared candidate(s) have no system"
            if missing
            else f"each of the {n_sys} systems appears in one context only"
        )
    n_ids = compared["candidate_id"].nunique()
    if 2 <= n_ids < n:
        return "candidate", f"{n_ids} candidate ids that recur across contexts ({why})"
    return None, (
        f"No system-level ranking: {why}, and no candidate id recurs across contexts, so "
        "nothing is compared in more than one context. Map a system column (the model that "
        "wrote each candidate) on the Data page."
    )


@dataclass(frozen=True)
class SystemRanking:
    """Systems ranked over the comparisons of every context pooled.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per system, best Bradley–Terry score first: ``system``, ``rank`` (1 = best,
        ties share), ``rank_low``, ``rank_high`` (the rank interval at 95 %, 1 = best),
        ``arena_rank`` (1 + the number of systems significantly better: Chatbot Arena's
        rule), ``bt_score``, ``lower``, ``upper`` (its interval), ``elo``,
        ``elo_lower``, ``elo_upper`` (the band over game orderings), ``n_comparisons`` (the
        battles: comparisons with a parsed answer between two different systems) and, with
        a human reference, ``human_mean`` (mean reference over its compared candidates).
    spearman_bt, spearman_elo : float
        Spearman between the systems' Bradley–Terry scores (Elo ratings) and their human
        means; NaN without a reference.
    notes : list of str
        Bradley–Terry's notes, and what the items are when they are candidate ids.
    reference : str or None
        What ``human_mean`` is (``Reference.source``).
    better : pandas.DataFrame or None
        System x system (the table's order, best first): True where the row system is
        significantly better than the column system at 95 % (``ranking.rank_intervals``).
    separability : float
        Share of system pairs whose Bradley–Terry intervals do not overlap.
    intervals : str
        How the intervals were made: "fisher", "bootstrap over comparisons" or "bootstrap
        over contexts".
    """

    table: pd.DataFrame
    spearman_bt: float
    spearman_elo: float
    notes: list
    reference: str | None = None
    better: pd.DataFrame | None = None
    separability: float = math.nan
    intervals: str = "fisher"
    #: the Bradley–Terry fit over the systems (``ranking.bradley_terry`` on flat input:
    #: ``samples`` with bootstrap intervals, ``fit`` for Fisher), its items in ``items`` order
    bt: object = dataclasses.field(default=None, repr=False, compare=False)
    items: tuple = ()


def _item_human_means(ds: Dataset, pm: PMatrix, ref: Reference, item: str) -> pd.Series:
    """Mean reference score per system (or candidate id) over the candidates of ``pm``."""
    flat = _compared(pm)
    flat["human"] = np.concatenate(
        [ref.scores[c, : len(cs)] for c, cs in enumerate(pm.candidate_ids)]
    )
    if item == "candidate":
        return flat.groupby("candidate_id")["human"].mean()
    merged = flat.merge(_system_lut(ds), on=["context_id", "candidate_id"], how="left")
    return merged.groupby(merged["system"].astype(str))["human"].mean()


def _natural_best_first(table: pd.DataFrame, score: str) -> pd.DataFrame:
    """Best score first; equal scores (and unranked systems, last) in natural order."""
    keyed = table.assign(_k=table["system"].map(natural_key))
    keyed = keyed.sort_values("_k").sort_values(
        score, ascending=False, kind="stable", na_position="last"
    )
    return keyed.drop(columns="_k").reset_index(drop=True)


@cache_data(show_spinner="Ranking the systems (Bradley–Terry and Elo)…", max_entries=64)
def system_ranking(
    ds: Dataset,
    attribute: str,
    judge: str,
    intervals: str = "fisher",
    n_boot: int = 200,
    random_state: int = 0,
    rule: tuple = SOFT,
    resample: str = "comparisons",
    elo_band: bool = True,
) -> SystemRanking | None:
    """Bradley–Terry and Elo over systems, the comparisons of all contexts pooled.

    Each comparison row's outcome follows the debias ``rule`` (``Debias.rule``; default
    the probability as it is: soft outcomes), and counts with its weight (the ``weight``
    column: Bradley–Terry's likelihood, its Fisher intervals and its bootstrap, where a
    weighted row is drawn as one comparison carrying its weight; Elo's step is scaled by
    it); ``n_comparisons`` counts rows, never weight. Bradley–Terry (``ranking.bradley_terry``) with
    Fisher or bootstrap (``n_boot`` refits) intervals at 95 %; the bootstrap resamples
    single comparisons or whole contexts (``resample``, one of :data:`RESAMPLE`). Rank
    intervals, Arena ranks, the "significantly better" matrix and separability come from
    ``ranking.rank_intervals`` (bootstrap replicates, or the Fisher intervals). Elo (``ranking.elo``, k = 4):
    the games are played in one seeded random order (their stored order, by context, is
    arbitrary), and the 95 % band comes from ``n_boot`` seeded shuffles of that order
    (``elo_band``; without it ``elo_lower`` and ``elo_upper`` are NaN: the Leaderboard shows
    no Elo, and on an arena's 75,000 games the band costs seconds).

    Returns None when there is nothing to rank across contexts (:func:`system_items` says
    why).
    """
    item, what = system_items(ds, attribute, judge)
    if item is None:
        return None
    pm = pmatrix(ds, attribute, judge)
    rows = debiased_outcomes(ds, attribute, judge, select_comparisons(ds, attribute, judge), rule)
    fc = flat_comparisons(
        rows, attribute=attribute, judge=judge, item=item, candidates=ds.candidates
    )
    n_items = len(fc.items)
    if n_items < 2 or not len(fc.p):
        return None
    if resample not in RESAMPLE:
        raise ValueError(f"resample must be one of {RESAMPLE}; got {resample!r}")
    by_context = intervals == "bootstrap" and resample == "contexts"
    groups = _contexts(rows, attribute, judge, item, ds.candidates) if by_context else None
    weights = fc.weight if fc.weighted else None
    bt = bradley_terry(
        first=fc.first,
        second=fc.second,
        outcome=fc.p,
        n_items=n_items,
        weights=weights,
        intervals=intervals,
        n_boot=n_boot,
        random_state=random_state,
        groups=groups,
    )
    ri = rank_intervals(bt.scores, bt.lower, bt.upper, samples=bt.samples)
    rng = np.random.default_rng(random_state)
    order = rng.permutation(len(fc.p))
    el = elo(
        fc.first[order],
        fc.second[order],
        fc.p[order],
        n_items,
        n_boot=n_boot if elo_band else 0,
        random_state=rng,
        weights=None if weights is None else weights[order],
    )
    table = pd.DataFrame(
        {
            "system": fc.items,
            "rank": competition_ranks(bt.scores),
            "rank_low": np.where(ri.rank > 0, ri.low, np.nan),
            "rank_high": np.where(ri.rank > 0, ri.high, np.nan),
            "arena_rank": np.where(ri.rank > 0, ri.arena_rank, np.nan),
            "bt_score": bt.scores,
            "lower": bt.lower,
            "upper": bt.upper,
            "elo": el.scores,
            "elo_lower": el.lower if el.lower is not None else np.nan,
            "elo_upper": el.upper if el.upper is not None else np.nan,
            "n_comparisons": np.bincount(fc.first, minlength=n_items)
            + np.bincount(fc.second, minlength=n_items),
        }
    )
    rho_bt = rho_elo = math.nan
    ref = human_reference(ds, attribute, judge)
    if ref is not None:
        table["human_mean"] = table["system"].map(_item_human_means(ds, pm, ref, item))
        human = table["human_mean"].to_numpy(float)
        rho_bt = float(spearman(table["bt_score"].to_numpy(), human))
        rho_elo = float(spearman(table["elo"].to_numpy(), human))
    notes = [f"Bradley–Terry over the systems: {n}" for n in bt.notes]
    if weights is not None:
        notes.append(weight_note(fc.weight))
    if item == "candidate":
        notes.insert(0, f"The systems are the {what}.")
    table = _natural_best_first(table, "bt_score")
    order = list(table["system"])
    better = pd.DataFrame(ri.better, index=fc.items, columns=fc.items).loc[order, order]
    better.index.name = better.columns.name = "system"
    how = "fisher" if intervals != "bootstrap" else f"bootstrap over {resample}"
    return SystemRanking(
        table,
        rho_bt,
        rho_elo,
        notes,
        None if ref is None else ref.source,
        better,
        float(ri.separability),
        how,
        bt,
        tuple(fc.items),
    )


def weight_note(weight: np.ndarray) -> str:
    """One line saying that comparisons carry weights and what they change (the pages)."""
    w = np.asarray(weight, dtype=np.float64)
    other = w != 1.0
    values = ", ".join(f"{v:g}" for v in np.unique(w[other])[:5])
    return (
        f"{int(other.sum())} of {w.size} comparisons carry a weight other than 1 ({values}; "
        "e.g. Arena-Hard's strong verdicts count 3 times): scores, win shares and Elo count "
        "each comparison with its weight; battles and comparison counts count rows."
    )


def _contexts(rows: pd.DataFrame, attribute: str, judge: str, item: str, candidates):
    """The context of every comparison ``flat_comparisons`` keeps, in its order.

    ``flat_comparisons`` keeps the rows with a finite p_first between different items; run
    on the row positions in place of p_first it returns exactly those positions.
    """
    p = rows["p_first"].to_numpy(dtype=np.float64)
    pos = rows.assign(p_first=np.where(np.isfinite(p), np.arange(len(rows), dtype=float), np.nan))
    kept = flat_comparisons(
        pos, attribute=attribute, judge=judge, item=item, candidates=candidates
    ).p.astype(np.int64)
    return rows["context_id"].astype(str).to_numpy()[kept]


def compare_systems(raw: SystemRanking, debiased: SystemRanking) -> tuple[pd.DataFrame, RankChange]:
    """The raw and debiased system rankings side by side, best debiased first.

    Columns: ``system``, ``raw rank``, ``debiased rank``, ``change`` ("↑ 2", "↓ 1", "="),
    ``raw score``, ``debiased score`` (Bradley–Terry) and ``human_mean`` when known; with the
    :class:`ranking.leaderboard.RankChange` of the Bradley–Terry scores.
    """
    both = raw.table[["system", "bt_score"]].merge(
        debiased.table[
            ["system", "bt_score"] + (["human_mean"] if "human_mean" in debiased.table else [])
        ],
        on="system",
        how="outer",
        suffixes=(" raw", " debiased"),
    )
    change = rank_change(
        both["bt_score raw"].to_numpy(float), both["bt_score debiased"].to_numpy(float)
    )

    def arrow(d: float) -> str:
        if not np.isfinite(d):
            return ""
        return "=" if d == 0 else (f"↑ {int(d)}" if d > 0 else f"↓ {int(-d)}")

    table = pd.DataFrame(
        {
            "system": both["system"],
            "raw rank": change.before,
            "debiased rank": change.after,
            "change": [arrow(d) for d in change.change],
            "raw score": both["bt_score raw"].round(4),
            "debiased score": both["bt_score debiased"].round(4),
        }
    )
    if "human_mean" in both:
        table["human_mean"] = both["human_mean"].round(4)
    table = table.assign(_k=table["system"].map(natural_key)).sort_values("_k")
    table = table.sort_values("debiased rank", kind="stable", na_position="last")
    return table.drop(columns="_k").reset_index(drop=True), change


@dataclass(frozen=True)
class Leaderboard:
    """Systems ranked by every judge of one attribute.

    Attributes
    ----------
    long : pandas.DataFrame
        One row per judge and system: ``judge``, ``system``, ``rank``, ``rank_low``,
        ``rank_high``, ``arena_rank`` (:class:`SystemRanking`), ``bt_score``, ``lower``,
        ``upper``, ``battles`` (and ``human_mean`` when known).
    ranks : pandas.DataFrame
        Systems x judges of ranks: rows best mean rank first (natural order on ties),
        columns judges in natural order.
    judges : list of str
        The judges ranked, in natural order.
    notes : list of str
        Judges that could not rank the systems, and why; what the systems are when they
        are candidate ids; Bradley–Terry's flags; judges for which the debias mode asked
        for is unavailable (ranked as off), and why.
    settings : dict
        Judge -> the :class:`~pages.services.calibration.Debias` its systems were ranked
        under (the human pool: always "off").
    """

    long: pd.DataFrame
    ranks: pd.DataFrame
    judges: list
    notes: list
    settings: dict = dataclasses.field(default_factory=dict)


def leaderboard_judges(ds: Dataset, attribute: str) -> list[str]:
    """Model judges and the human pool of ``attribute`` (not the annotators one by one)."""
    opts = judge_options(ds, attribute)
    return natural_sorted(j for j in opts if not j.startswith(HUMAN_JUDGE_PREFIX))


def judge_setting(ds: Dataset, attribute: str, judge: str, mode: str, tau: float) -> Debias:
    """The shared debias setting (``mode``, ``tau``) resolved for one judge of the
    leaderboard; the human pool is the reference, not a judge to debias: always "off"."""
    return resolve_debias(ds, attribute, judge, "off" if judge == HUMAN_POOL else mode, tau)


@cache_data(show_spinner="Ranking the systems by every judge…", max_entries=32)
def leaderboard(
    ds: Dataset, attribute: str, intervals: str = "fisher", mode: str = "off", tau: float = 0.5
) -> Leaderboard:
    """Bradley–Terry over systems (:func:`system_ranking`) for every judge of ``attribute``,
    each model judge's outcomes under the debias ``mode`` and ``tau`` shared by the pages
    (:func:`judge_setting`; :func:`~pages.services.calibration.debiased_outcomes`)."""
    frames, notes, judges, settings = [], [], [], {}
    for judge in leaderboard_judges(ds, attribute):
        try:
            setting = judge_setting(ds, attribute, judge, mode, tau)
            # called as the pages' win rates against a baseline call it (one cache entry)
            result = system_ranking(
                ds,
                attribute,
                judge,
                intervals,
                rule=setting.rule,
                resample="comparisons",
                elo_band=False,
            )
        except DataError as err:
            notes.append(f"{judge}: {'; '.join(err.problems[:3])}")
            continue
        if result is None:
            notes.append(f"{judge}: {system_items(ds, attribute, judge)[1]}")
            continue
        judges.append(judge)
        settings[judge] = setting
        if setting.unavailable:
            notes.append(
                f"{judge}: {DEBIAS_MODES[mode].lower()} is not available "
                f"({setting.unavailable}); ranked as off."
            )
        notes += [n for n in result.notes if n not in notes]
        cols = ["system", "rank", "rank_low", "rank_high", "arena_rank", "bt_score", "lower"]
        cols += ["upper", "n_comparisons"]
        cols += ["human_mean"] if "human_mean" in result.table else []
        frames.append(
            result.table[cols].rename(columns={"n_comparisons": "battles"}).assign(judge=judge)
        )
    if not frames:
        return Leaderboard(pd.DataFrame(), pd.DataFrame(), [], notes, settings)
    long = pd.concat(frames, ignore_index=True)
    long = long[["judge"] + [c for c in long.columns if c != "judge"]]
    ranks = long.pivot(index="system", columns="judge", values="rank")[judges]
    mean_rank = ranks.mean(axis=1)
    order = sorted(ranks.index, key=lambda s: (mean_rank[s], natural_key(s)))
    ranks = ranks.loc[order]
    ranks.columns.name = None
    ranks.index.name = "system"
    return Leaderboard(long, ranks, judges, notes, settings)


@cache_data(show_spinner=False, max_entries=32)
def win_rates(
    ds: Dataset, attribute: str, judge: str, rule: tuple = SOFT
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(share of battles won, number of battles): systems x opponents, one judge.

    Rows and columns in the judge's Bradley–Terry order under the debias ``rule`` (best
    first); a battle is won when the decision at 0.5 of its outcome under ``rule`` (see
    ``debiased_outcomes``) goes to the system (a tie counts half), in either position. The
    share is weighted (each battle counts with its ``weight``: weighted wins over weighted
    battles); the number of battles counts comparison rows.
    Both tables are empty when there is nothing to rank across contexts.
    """
    item, _ = system_items(ds, attribute, judge)
    if item is None:
        return pd.DataFrame(), pd.DataFrame()
    rows = debiased_outcomes(ds, attribute, judge, select_comparisons(ds, attribute, judge), rule)
    fc = flat_comparisons(
        rows, attribute=attribute, judge=judge, item=item, candidates=ds.candidates
    )
    if len(fc.items) < 2 or not len(fc.p):
        return pd.DataFrame(), pd.DataFrame()
    wm = win_matrix(
        fc.first,
        fc.second,
        fc.p,
        len(fc.items),
        tau=0.5,
        weights=fc.weight if fc.weighted else None,
    )
    rate = pd.DataFrame(wm.rate, index=fc.items, columns=fc.items)
    battles = pd.DataFrame(wm.battles, index=fc.items, columns=fc.items)
    # the order only: no Elo band (the Leaderboard's own call, one cache entry with Fisher)
    ranked = system_ranking(
        ds, attribute, judge, "fisher", rule=rule, resample="comparisons", elo_band=False
    )
    order = list(ranked.table["system"]) if ranked is not None else natural_sorted(fc.items)
    return rate.loc[order, order], battles.loc[order, order]

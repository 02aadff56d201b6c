"""Services of the Rankings page: every ranking method per context, with agreement.

Win-ratio, maximum likelihood and Bradley–Terry scores per context (``ranking``), their
agreement with the human reference, one context's table and slope chart, the padded-free P
block of a context, and the systems ranked over every context pooled: Bradley–Terry with
intervals beside Elo with a band over game orderings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.arrays import PMatrix, flat_comparisons
from data.schema import Dataset
from pages.services.common import cache_data, mean_finite
from pages.services.comparisons import (
    Reference,
    human_reference,
    pmatrix,
    select_comparisons,
)
from ranking.bradley_terry import bradley_terry
from ranking.elo import elo
from ranking.metrics import order_matrix, pairwise_accuracy, spearman
from ranking.ml import ml_ranking
from ranking.scores import win_ratio

#: Ranking methods, in display order.
METHODS = ("win-ratio", "maximum likelihood", "Bradley–Terry")


@dataclass(frozen=True)
class Rankings:
    """Scores of every ranking method in every context, and their agreement with humans.

    Attributes
    ----------
    scores : dict of str to ndarray (n_contexts, N_max)
        Per method in ``METHODS``; higher is better, NaN for candidates not ranked.
    agreement : pandas.DataFrame or None
        One row per method (and one for the judge's raw comparisons): ``spearman`` (mean over
        contexts), ``pairwise_accuracy``, ``n_contexts`` with a defined Spearman.
    notes : list of str
        What the user should know (heuristic ML contexts, Bradley–Terry flags).
    """

    scores: dict
    agreement: pd.DataFrame | None
    notes: list


def compute_rankings(pm: PMatrix, ref: Reference | None) -> Rankings:
    """Win-ratio, maximum-likelihood and Bradley–Terry scores per context, with agreement.

    A context of ``pm`` without any comparison gets NaN scores from every method (and no
    Spearman); equally likely maximum-likelihood orders come back as tied scores
    (``ranking.ml``), so an uninformative judge has no correlation with the humans, as with
    win-ratio and Bradley–Terry.

    Win-ratio counts hard wins at tau = 0.5; maximum likelihood and Bradley–Terry use the
    probabilities themselves (soft outcomes, ``tau=None``). The page's cached
    :func:`rankings` runs it on the judge's P; tests run it on hand-made ones.
    """
    ml = ml_ranking(pm.P)
    bt = bradley_terry(pm.P)
    scores = {
        "win-ratio": win_ratio(pm.P, tau=0.5),
        "maximum likelihood": ml.scores,
        "Bradley–Terry": bt.scores,
    }
    notes = [f"Bradley–Terry: {n}" for n in bt.notes]
    n_heur = sum(m == "heuristic" for m in ml.method)
    if n_heur:
        notes.append(
            f"Maximum likelihood: {n_heur} context(s) have too many candidates for the exact "
            "search and use local search from the Bradley–Terry order."
        )
    n_tied = int((ml.n_orders > 1).sum())
    if n_tied:
        notes.append(
            f"Maximum likelihood: in {n_tied} context(s) several orders are equally likely; "
            "candidates get their mean rank over those orders, so the ones the comparisons "
            "do not separate share a rank."
        )
    agreement = None
    if ref is not None:
        rows = []
        for method, s in scores.items():
            rho = spearman(s, ref.scores)
            rows.append(
                {
                    "method": method,
                    "spearman": mean_finite(rho),
                    "pairwise_accuracy": float(pairwise_accuracy(order_matrix(s), ref.scores)),
                    "n_contexts": int(np.isfinite(rho).sum()),
                }
            )
        rows.append(
            {
                "method": "judge comparisons (tau = 0.5)",
                "spearman": math.nan,
                "pairwise_accuracy": float(pairwise_accuracy(pm.P, ref.scores, tau=0.5)),
                "n_contexts": len(pm.context_ids),
            }
        )
        agreement = pd.DataFrame(rows)
    return Rankings(scores=scores, agreement=agreement, notes=notes)


def _ranks(values: pd.Series) -> pd.Series:
    """1 = best; ties share the best rank; missing stays missing."""
    return values.rank(ascending=False, method="min")


def context_frame(
    ds: Dataset, pm: PMatrix, rk: Rankings, ref: Reference | None, c: int, method: str
) -> pd.DataFrame:
    """One context's candidates ranked by ``method``, with every method's rank beside it."""
    n = len(pm.candidate_ids[c])
    df = pd.DataFrame({"candidate": pm.candidate_ids[c]})
    cands = ds.candidates
    if "system" in cands.columns and len(cands):
        sub = cands[cands["context_id"].astype(str) == pm.context_ids[c]]
        lut = dict(zip(sub["candidate_id"].astype(str), sub["system"], strict=True))
        df["system"] = [lut.get(x) for x in df["candidate"]]
    df[f"{method} score"] = np.round(rk.scores[method][c, :n], 4)
    for m in METHODS:
        df[f"rank: {m}"] = _ranks(pd.Series(rk.scores[m][c, :n]))
    if ref is not None:
        df["human score"] = np.round(ref.scores[c, :n], 4)
        df["rank: human"] = _ranks(pd.Series(ref.scores[c, :n]))
    block = np.asarray(pm.counts[c, :n, :n])
    df["comparisons"] = block.sum(axis=1) + block.sum(axis=0)  # as first + as second
    df = df.sort_values([f"rank: {method}", "candidate"], na_position="last")
    return df.reset_index(drop=True)


def bump_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Long table (candidate, method, rank) for the slope chart, from :func:`context_frame`."""
    cols = [c for c in frame.columns if c.startswith("rank: ")]
    long = frame.melt(id_vars="candidate", value_vars=cols, var_name="method", value_name="rank")
    long["method"] = long["method"].str.removeprefix("rank: ")
    return long.dropna(subset=["rank"])


def matrix_view(pm: PMatrix, c: int):
    """Context ``c`` without padding: (candidate ids, P block, counts block, long table).

    The long table (first, second, p_first, samples) holds the compared cells, for download.
    """
    n = len(pm.candidate_ids[c])
    ids = list(pm.candidate_ids[c])
    block = np.array(pm.P[c, :n, :n])
    counts = np.array(pm.counts[c, :n, :n])
    i, j = np.nonzero(np.isfinite(block))
    long = pd.DataFrame(
        {
            "first": [ids[k] for k in i],
            "second": [ids[k] for k in j],
            "p_first": block[i, j],
            "samples": counts[i, j],
        }
    )
    return ids, block, counts, long


@cache_data(show_spinner="Ranking every context…", max_entries=32)
def rankings(ds: Dataset, attribute: str, judge: str) -> Rankings:
    """Every ranking method in every context of the judge's P, with agreement with the
    human reference (see :func:`compute_rankings`)."""
    return compute_rankings(pmatrix(ds, attribute, judge), human_reference(ds, attribute, judge))


@dataclass(frozen=True)
class SystemRanking:
    """Systems ranked over the comparisons of every context pooled.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per system, best Bradley–Terry score first: ``system``, ``bt_score``,
        ``lower``, ``upper`` (its interval), ``elo``, ``elo_lower``, ``elo_upper`` (the
        band over game orderings), ``n_comparisons`` and, with a human reference,
        ``human_mean`` (mean reference over the compared candidates of the system).
    spearman_bt, spearman_elo : float
        Spearman between the systems' Bradley–Terry scores (Elo ratings) and their human
        means; NaN without a reference.
    notes : list of str
        Bradley–Terry's notes.
    """

    table: pd.DataFrame
    spearman_bt: float
    spearman_elo: float
    notes: list


def _system_human_means(ds: Dataset, pm: PMatrix, ref: Reference) -> pd.Series:
    """Mean reference score per system over the candidates of ``pm``."""
    flat = pd.DataFrame(
        {
            "context_id": [
                ctx for ctx, cs in zip(pm.context_ids, pm.candidate_ids, strict=True) for _ in cs
            ],
            "candidate_id": [x for cs in pm.candidate_ids for x in cs],
            "human": np.concatenate(
                [ref.scores[c, : len(cs)] for c, cs in enumerate(pm.candidate_ids)]
            ),
        }
    )
    lut = (
        ds.candidates[["context_id", "candidate_id", "system"]]
        .astype({"context_id": str, "candidate_id": str})
        .drop_duplicates(["context_id", "candidate_id"])
    )
    merged = flat.merge(lut, on=["context_id", "candidate_id"], how="left")
    return merged.groupby(merged["system"].astype(str))["human"].mean()


@cache_data(show_spinner="Ranking the systems (Bradley–Terry and Elo)…", max_entries=32)
def system_ranking(
    ds: Dataset,
    attribute: str,
    judge: str,
    intervals: str = "fisher",
    n_boot: int = 200,
    random_state: int = 0,
) -> SystemRanking | None:
    """Bradley–Terry and Elo over systems, the comparisons of all contexts pooled.

    Bradley–Terry (``ranking.bradley_terry``, soft outcomes) with Fisher or bootstrap
    (``n_boot`` refits) intervals at 95 %. Elo (``ranking.elo``, soft outcomes, k = 4):
    the games are played in one seeded random order (their stored order, by context, is
    arbitrary), and the 95 % band comes from ``n_boot`` seeded shuffles of that order.

    Returns None when candidates have no systems, or systems do not repeat across
    contexts (as many systems as compared candidates).
    """
    cands = ds.candidates
    if "system" not in cands.columns or not cands["system"].notna().any():
        return None
    pm = pmatrix(ds, attribute, judge)
    rows = select_comparisons(ds, attribute, judge)
    fc = flat_comparisons(rows, attribute=attribute, judge=judge, item="system", candidates=cands)
    n_items = len(fc.items)
    if n_items < 2 or n_items >= sum(len(c) for c in pm.candidate_ids):
        return None
    bt = bradley_terry(
        first=fc.first,
        second=fc.second,
        outcome=fc.p,
        n_items=n_items,
        intervals=intervals,
        n_boot=n_boot,
        random_state=random_state,
    )
    rng = np.random.default_rng(random_state)
    order = rng.permutation(len(fc.p))
    el = elo(
        fc.first[order],
        fc.second[order],
        fc.p[order],
        n_items,
        n_boot=n_boot,
        random_state=rng,
    )
    table = pd.DataFrame(
        {
            "system": fc.items,
            "bt_score": bt.scores,
            "lower": bt.lower,
            "upper": bt.upper,
            "elo": el.scores,
            "elo_lower": el.lower,
            "elo_upper": el.upper,
            "n_comparisons": np.bincount(fc.first, minlength=n_items)
            + np.bincount(fc.second, minlength=n_items),
        }
    )
    rho_bt = rho_elo = math.nan
    ref = human_reference(ds, attribute, judge)
    if ref is not None:
        table["human_mean"] = table["system"].map(_system_human_means(ds, pm, ref))
        human = table["human_mean"].to_numpy(float)
        rho_bt = float(spearman(table["bt_score"].to_numpy(), human))
        rho_elo = float(spearman(table["elo"].to_numpy(), human))
    table = table.sort_values("bt_score", ascending=False, na_position="last")
    return SystemRanking(table.reset_index(drop=True), rho_bt, rho_elo, list(bt.notes))

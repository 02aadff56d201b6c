"""How much a jury's members agree with each other, and the jury and its members with humans."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from data.jury.build import Jury, with_jury
from data.jury.votes import JuryVotes, jury_votes
from data.schema import Dataset
from ranking import AgreementResult, cohen_kappa, fleiss_kappa

#: Columns of :func:`human_comparison`'s table.
HUMAN_COLUMNS = ["rater", "is_jury", "versus", "measure", "value", "n"]


def agreement_statistic(votes: JuryVotes) -> str:
    """What :func:`judge_agreement` holds for these votes."""
    return "Cohen's kappa" if votes.categorical else "Spearman's rho"


def judge_agreement(ds: Dataset, attribute: str, judges, votes: JuryVotes | None = None):
    """Agreement of every pair of judges on the items both judged.

    Parameters
    ----------
    ds, attribute : Dataset, str
        The comparisons or ratings of ``attribute`` are read.
    judges : iterable of str
        At least 2 judges of one kind (:func:`data.jury.votes.jury_votes`).
    votes : JuryVotes, optional
        Already laid out (saves the work).

    Returns
    -------
    pandas.DataFrame
        judge x judge (natural order), 1 on the diagonal: Cohen's kappa
        (``ranking.cohen_kappa``, unweighted) of the verdicts / Likert points; for automatic
        measures (continuous) Spearman's rho of the scores. NaN where fewer than 2 items
        are shared or the coefficient is undefined.
    """
    votes = votes if votes is not None else jury_votes(ds, attribute, judges)
    m = len(votes.judges)
    out = np.eye(m)
    for a in range(m):
        for b in range(a + 1, m):
            if votes.categorical:
                la = votes.labels[:, a].astype(np.float64)
                lb = votes.labels[:, b].astype(np.float64)
                la[la < 0] = np.nan
                lb[lb < 0] = np.nan
                value = cohen_kappa(la, lb).value
            else:
                x = pd.Series(votes.values[:, a])
                y = pd.Series(votes.values[:, b])
                ok = x.notna() & y.notna()
                value = x[ok].corr(y[ok], method="spearman") if ok.sum() >= 2 else np.nan
            out[a, b] = out[b, a] = value
    return pd.DataFrame(out, index=list(votes.judges), columns=list(votes.judges))


def shared_items(votes: JuryVotes) -> pd.DataFrame:
    """judge x judge: how many items both judged (a parsed output from each)."""
    has = np.isfinite(votes.values)
    if votes.categorical:
        has = has | (votes.labels >= 0)
    n = has.T.astype(np.int64) @ has.astype(np.int64)
    return pd.DataFrame(n, index=list(votes.judges), columns=list(votes.judges))


def fleiss_overall(votes: JuryVotes) -> AgreementResult:
    """Fleiss' kappa of all members on the items every member labelled
    (``ranking.fleiss_kappa``); NaN with a reason for automatic measures."""
    if not votes.categorical:
        return AgreementResult(
            np.nan,
            0,
            reason="Fleiss' kappa needs categorical outputs; automatic measures are continuous",
        )
    complete = (votes.labels >= 0).all(axis=1)
    if complete.sum() < 2:
        return AgreementResult(
            np.nan,
            int(complete.sum()),
            int((~complete).sum()),
            "fewer than 2 items were labelled by every member",
        )
    res = fleiss_kappa(labels=votes.labels[complete])
    return dataclasses.replace(res, n_dropped_nan=int((~complete).sum()))


def _pairwise_humans(ds: Dataset, jury: Jury) -> pd.DataFrame:
    """Members and jury against each human annotator's verdicts (agreement, kappa)."""
    from data.agreement.verdicts import verdict_agreement_table

    comps = ds.comparisons
    comps = comps[comps["attribute"].astype(str) == jury.votes.attribute]
    sub = with_jury(dataclasses.replace(ds, comparisons=comps), jury)
    table = verdict_agreement_table(sub)
    if not len(table):
        return pd.DataFrame(columns=HUMAN_COLUMNS)
    raters = [*jury.votes.judges, jury.name]
    table = table[table["judge"].isin(raters)]
    # a human member is not compared with himself, nor the jury with a member
    table = table[~table["annotator"].isin(jury.votes.judges)]
    long = table.melt(
        id_vars=["judge", "annotator", "n_pairs"],
        value_vars=["agreement", "cohen_kappa"],
        var_name="measure",
    )
    long = long.rename(columns={"judge": "rater", "annotator": "versus", "n_pairs": "n"})
    long["is_jury"] = long["rater"] == jury.name
    return long.reindex(columns=HUMAN_COLUMNS).reset_index(drop=True)


def _absolute_humans(ds: Dataset, jury: Jury) -> pd.DataFrame:
    """Members and jury against the human mean (Spearman per item / system / overall)."""
    from data.agreement.correlations import correlation_table

    attr = jury.votes.attribute
    hs = ds.human_scores
    if not len(hs) or not (hs["attribute"].astype(str) == attr).any():
        return pd.DataFrame(columns=HUMAN_COLUMNS)
    sub = with_jury(ds, jury)
    table = correlation_table(
        sub,
        judge=[*jury.votes.judges, jury.name],
        attribute=attr,
        units=("item", "system", "overall"),
        methods=("spearman",),
        n_boot=0,
    )
    out = pd.DataFrame(
        dict(
            rater=table["judge"],
            is_jury=table["judge"] == jury.name,
            versus="human mean",
            measure="spearman (" + table["level"].astype(str) + ")",
            value=table["value"],
            n=table["n_used"],
        )
    )
    return out.reindex(columns=HUMAN_COLUMNS).reset_index(drop=True)


def human_comparison(ds: Dataset, jury: Jury) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The jury and each member against the humans, and whether the jury beats its best member.

    Parameters
    ----------
    ds : Dataset
        The dataset the jury was built on (its human verdicts or human scores).
    jury : Jury
        From :func:`data.jury.build_jury`.

    Returns
    -------
    detail : pandas.DataFrame
        :data:`HUMAN_COLUMNS`: rater (member or jury), is_jury, versus (a human annotator,
        "human majority" or "human mean"), measure (agreement and cohen_kappa for verdicts;
        spearman (item / system / overall) for scores), value, n. Empty without humans.
    summary : pandas.DataFrame
        One row per (versus, measure): jury, best_member, best_member_value, jury_minus_best.
    """
    if jury.votes.kind == "pairwise":
        detail = _pairwise_humans(ds, jury)
    else:
        detail = _absolute_humans(ds, jury)
    detail = detail[~detail["versus"].astype(str).eq(jury.name)]
    detail = detail.reset_index(drop=True)
    rows = []
    for (versus, measure), g in detail.groupby(["versus", "measure"], sort=False):
        members = g[~g["is_jury"]].dropna(subset=["value"])
        mine = g.loc[g["is_jury"], "value"]
        if not len(members) or not len(mine):
            continue
        best = members.loc[members["value"].idxmax()]
        rows.append(
            dict(
                versus=versus,
                measure=measure,
                jury=float(mine.iloc[0]),
                best_member=best["rater"],
                best_member_value=float(best["value"]),
                jury_minus_best=float(mine.iloc[0]) - float(best["value"]),
            )
        )
    cols = ["versus", "measure", "jury", "best_member", "best_member_value", "jury_minus_best"]
    return detail, pd.DataFrame(rows, columns=cols)

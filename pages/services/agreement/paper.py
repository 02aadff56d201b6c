"""Services of the Human agreement page for the papers' other analyses: annotator pairs
(Chiang & Lee Table 6), the Eval-Prompt effect on correlations (HANNA Figures 7/8) and a
judge's ratings per system and criterion (HANNA Tables 6/7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from data import agreement as dag
from data.schema import Dataset
from pages.services.common import cache_data, judge_model

#: Name of the column (and row) that pools every criterion in :func:`system_ratings`.
AVERAGE = "Average"


@cache_data(show_spinner="Correlations between annotators…", max_entries=16)
def annotator_pairs(
    ds: Dataset, group: str, annotators: tuple, method: str, variant: str, unit: str = "overall"
) -> pd.DataFrame:
    """``data.agreement.annotator_pairs_table`` of one annotator group: the correlation of
    every pair of its annotators, per attribute."""
    return dag.annotator_pairs_table(
        ds, groups={group: list(annotators)}, method=method, variant=variant, unit=unit
    )


def pairs_matrix(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(values, hover): attributes x annotator pairs ("a – b"), and the pairs' mean as a
    last row."""
    named = table.assign(pair=table["annotator_a"].astype(str) + " – " + table["annotator_b"])
    pairs = list(dict.fromkeys(named["pair"]))
    values = named.pivot_table(
        index="attribute", columns="pair", values="value", aggfunc="first", dropna=False
    ).reindex(columns=pairs)
    values.loc["mean over attributes"] = values.mean(axis=0, skipna=True)
    hover = pd.DataFrame("", index=values.index, columns=values.columns)
    for row in named.itertuples(index=False):
        n = int(row.n_used) if np.isfinite(row.n_used) else 0
        hover.loc[row.attribute, row.pair] = f"n = {n}" + (
            f"<br>{row.reason}" if row.reason else ""
        )
    return values, hover


def prompt_effect(corr: pd.DataFrame) -> pd.DataFrame:
    """The Eval-Prompt effect (HANNA Figures 7 and 8): for each model and prompt, the mean
    over attributes of the correlation with the humans, overall and system level.

    ``corr`` is a :func:`pages.services.agreement.correlations` table; automatic measures
    are left out. Columns: model, prompt_id, level, value, n_attributes."""
    cols = ["model", "prompt_id", "level", "value", "n_attributes"]
    sel = (
        corr[~corr["automatic"] & corr["level"].isin(["overall", "system"])] if len(corr) else corr
    )
    if not len(sel):
        return pd.DataFrame(columns=cols)
    models = [judge_model(j, p)[0] for j, p in zip(sel["judge"], sel["prompt_id"], strict=True)]
    out = (
        sel.assign(model=models)
        .groupby(["model", "prompt_id", "level"], sort=True, observed=True)["value"]
        .agg(value="mean", n_attributes="count")
        .reset_index()
    )
    return out[cols]


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float, float, int]:
    """(mean, standard deviation, half-width of the t interval of the mean, n)."""
    v = values[np.isfinite(values)]
    n = int(v.size)
    if n == 0:
        return np.nan, np.nan, np.nan, 0
    if n == 1:
        return float(v[0]), np.nan, np.nan, 1
    sd = float(v.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / np.sqrt(n))
    return float(v.mean()), sd, half, n


@cache_data(show_spinner="Ratings per system…", max_entries=16)
def system_ratings(
    ds: Dataset, judge: str, prompt_id: str, confidence: float = 0.95
) -> pd.DataFrame:
    """A judge's ratings per system and attribute (HANNA Tables 6 and 7): the mean over the
    system's items (each item's score is the mean of its samples) with a t interval of the
    mean; attribute :data:`AVERAGE` pools every attribute's ratings of the system.

    Columns: system, attribute, mean, sd, half_width, lower, upper, n."""
    cols = ["system", "attribute", "mean", "sd", "half_width", "lower", "upper", "n"]
    if "system" not in ds.candidates.columns:
        return pd.DataFrame(columns=cols)
    scores = dag.judge_scores(ds, judge=judge, prompt_id=prompt_id)
    sys_of = ds.candidates[["context_id", "candidate_id", "system"]].drop_duplicates(
        ["context_id", "candidate_id"]
    )
    scores = scores.merge(sys_of, on=["context_id", "candidate_id"], how="inner")
    scores = scores[scores["system"].notna()]
    order = [a for a in ds.attributes if a in set(scores["attribute"].astype(str))]
    rows = []
    for system, g in scores.groupby("system", sort=False, observed=True):
        attrs = g["attribute"].astype(str)
        for attribute in [*order, AVERAGE]:
            x = g["score"] if attribute == AVERAGE else g.loc[attrs == attribute, "score"]
            mean, sd, half, n = _interval(x.to_numpy(dtype=np.float64), confidence)
            rows.append(
                dict(
                    system=str(system),
                    attribute=attribute,
                    mean=mean,
                    sd=sd,
                    half_width=half,
                    lower=mean - half,
                    upper=mean + half,
                    n=n,
                )
            )
    return pd.DataFrame(rows, columns=cols)


def system_ratings_frames(
    table: pd.DataFrame, systems: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(means, hover, "mean ± half-width" text) frames: systems (in ``systems`` order) x
    attributes, :data:`AVERAGE` last."""
    attrs = list(dict.fromkeys(table["attribute"]))
    rows = [s for s in systems if s in set(table["system"])]
    means = table.pivot_table(
        index="system", columns="attribute", values="mean", aggfunc="first", dropna=False
    ).reindex(index=rows, columns=attrs)
    text = pd.DataFrame("", index=rows, columns=attrs)
    hover = pd.DataFrame("", index=rows, columns=attrs)
    for r in table.itertuples(index=False):
        if r.system not in text.index:
            continue
        half = f" ± {r.half_width:.2f}" if np.isfinite(r.half_width) else ""
        text.loc[r.system, r.attribute] = f"{r.mean:.2f}{half}" if np.isfinite(r.mean) else "–"
        hover.loc[r.system, r.attribute] = (
            f"mean {r.mean:.3f}, 95% interval [{r.lower:.3f}, {r.upper:.3f}]<br>n = {r.n}"
        )
    return means, hover, text

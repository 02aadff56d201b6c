"""Services of the Human agreement page for the papers' other analyses: annotator pairs
(Chiang & Lee Table 6), the Eval-Prompt effect on correlations (HANNA Figures 7/8) and a
judge's ratings per system and criterion (HANNA Tables 6/7)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from data import agreement as dag
from data.schema import Dataset
from pages.services.common import cache_data, judge_model


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


@cache_data(show_spinner="Ratings per system…", max_entries=16)
def system_ratings(
    ds: Dataset, judge: str, prompt_id: str, confidence: float = 0.95
) -> pd.DataFrame:
    """``data.agreement.system_ratings_table``, cached (HANNA Tables 6 and 7)."""
    return dag.system_ratings_table(ds, judge, prompt_id, confidence)


def system_ratings_frames(
    table: pd.DataFrame, systems: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(means, hover, "mean ± half-width" text) frames: systems (in ``systems`` order) x
    attributes, ``data.agreement.AVERAGE`` last."""
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

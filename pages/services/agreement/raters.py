"""The raters of the Human agreement page: prompted (LLM) judges and automatic measures.

A rater is one (judge, prompt_id) of the ratings table. Automatic measures (BLEU,
BERTScore, BARTScore, ...: ``prompt_id`` :data:`data.schema.AUTOMATIC`) are listed after the
prompted judges and named by the measure alone; a prompted judge is named by
:func:`pages.services.common.variant_label`.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from data.natural import natural_key
from data.schema import Dataset, is_automatic
from pages.services.common import cache_data, variant_label

#: Automatic measures shown by default beside the LLM judges (when the dataset has them): a
#: few common ones, so the correlation figures stay readable; the user adds more.
DEFAULT_MEASURES = ("BLEU", "ROUGE-1 F-Score", "BERTScore F1", "BARTScore-SH")


def rater_label(judge, prompt_id) -> str:
    """One readable name for a rater: the measure's name for an automatic measure, else
    :func:`~pages.services.common.variant_label`."""
    if is_automatic(str(prompt_id)):
        return str(judge)
    return variant_label(judge, prompt_id)


@cache_data(show_spinner=False, max_entries=16)
def raters(ds: Dataset) -> pd.DataFrame:
    """Every rater of ``ds.ratings``: columns label, judge, prompt_id, automatic; prompted
    judges first, then automatic measures, each in natural order. A label is unique (an
    automatic measure named like a prompted judge gets " (automatic)")."""
    cols = ["label", "judge", "prompt_id", "automatic"]
    if not len(ds.ratings):
        return pd.DataFrame(columns=cols)
    pairs = ds.ratings[["judge", "prompt_id"]].astype(str).drop_duplicates()
    auto = [is_automatic(p) for p in pairs["prompt_id"]]
    labels = [rater_label(j, p) for j, p in zip(pairs["judge"], pairs["prompt_id"], strict=True)]
    table = pd.DataFrame(
        {
            "label": labels,
            "judge": pairs["judge"],
            "prompt_id": pairs["prompt_id"],
            "automatic": auto,
        }
    )
    prompted = set(table.loc[~table["automatic"], "label"])
    clash = table["automatic"] & table["label"].isin(prompted)
    table.loc[clash, "label"] = table.loc[clash, "label"] + " (automatic)"
    order = sorted(range(len(table)), key=lambda i: (auto[i], natural_key(table["label"].iat[i])))
    return table.iloc[order].reset_index(drop=True)[cols]


def default_labels(table: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(prompted judges, automatic measures) shown by default: every prompted judge and the
    :data:`DEFAULT_MEASURES` the dataset has."""
    judges = table.loc[~table["automatic"], "label"].tolist()
    measures = table.loc[table["automatic"], "label"].tolist()
    return judges, [m for m in DEFAULT_MEASURES if m in measures]


def pairs_of(table: pd.DataFrame, labels) -> tuple[tuple[str, str], ...]:
    """The (judge, prompt_id) of the raters named ``labels``, in the table's order."""
    wanted = set(labels)
    sel = table[table["label"].isin(wanted)]
    return tuple(zip(sel["judge"], sel["prompt_id"], strict=True))


def with_raters(ds: Dataset, pairs: tuple | None) -> Dataset:
    """``ds`` with only the ratings of ``pairs`` ((judge, prompt_id) tuples; None: all).

    Used inside the cached services only: the copy is a new object, which the caches would
    not recognise."""
    if pairs is None or not len(ds.ratings):
        return ds
    r = ds.ratings
    key = pd.MultiIndex.from_arrays([r["judge"].astype(str), r["prompt_id"].astype(str)])
    keep = key.isin(list(pairs))
    if keep.all():
        return ds
    return dataclasses.replace(ds, ratings=r.loc[keep].reset_index(drop=True))


def labelled(table: pd.DataFrame, judge: str = "judge", prompt: str = "prompt_id") -> pd.DataFrame:
    """``table`` with a ``label`` column first (one name per rater) and ``automatic``."""
    if len(table):
        table.insert(
            0,
            "label",
            [rater_label(j, p) for j, p in zip(table[judge], table[prompt], strict=True)],
        )
        table["automatic"] = [is_automatic(str(p)) for p in table[prompt]]
    return table

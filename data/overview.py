"""What a dataset holds, table by table, for the Data page: rows, contexts covered,
attributes, judges or annotators, and the files each table came from."""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.natural import natural_sorted
from data.schema import HUMAN_JUDGE_PREFIX, TABLE_NAMES, Dataset

#: Names listed in one cell of the summary before the rest are counted.
MAX_LISTED = 6

SUMMARY_COLUMNS = ("table", "rows", "contexts", "attributes", "judges or annotators", "files")


def _listed(values) -> str:
    vals = natural_sorted(v for v in values if pd.notna(v))
    more = len(vals) - MAX_LISTED
    return ", ".join(vals[:MAX_LISTED]) + (f" (+{more} more)" if more > 0 else "")


def table_summary(ds: Dataset) -> pd.DataFrame:
    """One row per non-empty table of ``ds``: what it holds and where it came from.

    Parameters
    ----------
    ds : Dataset
        A validated dataset.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS`: the table name, its row count, the number of
        contexts it covers, its attributes, its judges (comparisons, ratings) or annotators
        (human scores), in natural order with long lists cut, and the files its rows came
        from (``ds.sources``, else ``ds.source``).
    """
    rows = []
    for name in TABLE_NAMES:
        t = ds.table(name)
        if not len(t):
            continue
        who = (
            t["annotator"]
            if name == "human_scores"
            else t["judge"]
            if name in ("comparisons", "ratings")
            else []
        )
        files = ds.sources.get(name) or ([ds.source] if ds.source else [])
        rows.append(
            {
                "table": name,
                "rows": len(t),
                "contexts": int(t["context_id"].nunique()),
                "attributes": _listed(t["attribute"].unique()) if "attribute" in t else "",
                "judges or annotators": _listed(pd.unique(np.asarray(who, dtype=object))),
                "files": ", ".join(files),
            }
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def human_verdicts(comparisons: pd.DataFrame) -> tuple[int, int]:
    """Comparisons made by human annotators (judge ``human:...``), and how many humans.

    Returns
    -------
    (int, int)
        The number of human verdict rows and of distinct human judges.
    """
    if not len(comparisons):
        return 0, 0
    human = comparisons["judge"].astype(str).str.startswith(HUMAN_JUDGE_PREFIX).to_numpy()
    return int(human.sum()), int(comparisons.loc[human, "judge"].nunique())


def both_orders_share(comparisons: pd.DataFrame) -> float:
    """Share of the judged pairs that were judged in both presentation orders.

    Returns
    -------
    float
        Over the unordered pairs of each context, attribute and judge, the share that have
        a row with each candidate shown first; NaN without comparisons.
    """
    if not len(comparisons):
        return float("nan")
    keys = comparisons[["context_id", "attribute", "judge", "first_id", "second_id"]].astype(str)
    ordered = keys.drop_duplicates()
    swapped = ordered.rename(columns={"first_id": "second_id", "second_id": "first_id"})
    both = ordered.merge(swapped, how="left", indicator=True)["_merge"].eq("both").to_numpy()
    lo = np.minimum(ordered["first_id"].to_numpy(), ordered["second_id"].to_numpy())
    hi = np.maximum(ordered["first_id"].to_numpy(), ordered["second_id"].to_numpy())
    pairs = ordered[["context_id", "attribute", "judge"]].assign(lo=lo, hi=hi)
    pair_both = pd.Series(both).groupby([pairs[c].to_numpy() for c in pairs.columns]).any()
    return float(pair_both.mean())

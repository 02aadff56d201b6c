"""Services of the Judge page for judge outputs: merging, importing, failure reasons.

Outputs of a run or an uploaded file go into a validated copy of a dataset (the loaded one
is never changed); every output without a value gets a visible reason.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pandas as pd

from data.schema import DataError, Dataset


def merge_outputs(ds: Dataset, table: str, rows: pd.DataFrame, name: str) -> Dataset:
    """A validated copy of ``ds`` with judge outputs ``rows`` added to ``table``.

    Rows of ``ds`` from the same judge and attribute (and prompt for ratings) are replaced,
    so running a judge again updates its outputs instead of doubling them. ``ds`` itself is
    never changed (benchmarks are shared between sessions).
    """
    from data.validate import validate_dataset

    if table not in ("comparisons", "ratings"):
        raise ValueError(f"judge outputs go to 'comparisons' or 'ratings', not {table!r}")
    old = ds.table(table)
    keys = ["judge", "attribute"] + (["prompt_id"] if table == "ratings" else [])
    if len(old) and len(rows):
        new_keys = rows[keys].astype(str).drop_duplicates()
        hit = old[keys].astype(str).merge(new_keys, how="left", on=keys, indicator=True)
        old = old[(hit["_merge"] == "left_only").to_numpy()]
    combined = (
        pd.concat([old, rows], ignore_index=True) if len(old) else rows.reset_index(drop=True)
    )
    merged = dataclasses.replace(ds, name=name, **{table: combined})
    return validate_dataset(merged)


def import_outputs(
    ds: Dataset, file_name: str, content: bytes, kind: str, name: str | None = None
) -> tuple[Dataset, str]:
    """Merge an uploaded pairwise or ratings file into a copy of ``ds`` named ``name``.

    ``kind`` is "pairwise" (context, first, second and a verdict or probability) or
    "ratings" (the canonical ratings columns). Returns (merged dataset, table name).

    Raises
    ------
    DataError
        Naming the file, row and column of each problem, or candidates unknown to ``ds``.
    """
    from data.io import read_upload

    if kind not in ("pairwise", "ratings"):
        raise ValueError(f"kind must be 'pairwise' or 'ratings'; got {kind!r}")
    from data.validate import validate_dataset

    up = read_upload(file_name, content, kind=kind)
    table = "comparisons" if kind == "pairwise" else "ratings"
    rows = up.table(table)
    if not len(rows):
        raise DataError(f"{file_name}: no {table} rows found in the file")
    # Checked against the active candidates on its own first, so that messages give the
    # row numbers of the file rather than of the merged table.
    alone = Dataset(name=file_name, contexts=ds.contexts, candidates=ds.candidates, **{table: rows})
    validate_dataset(alone, sources={table: file_name})
    return merge_outputs(ds, table, rows, name or f"{ds.name} + {file_name}"), table


_TAGGED = re.compile(r"^\[(?P<tag>[\w\-]+)\]")


def failure_reason(raw, template=None) -> str:
    """Why an output has no value: the stored error code, or the parser's reason code."""
    from data.parsing import reason_code

    if raw is None or (isinstance(raw, float) and math.isnan(raw)) or not str(raw).strip():
        return "no answer"
    m = _TAGGED.match(str(raw))
    if m is not None:
        return m.group("tag")
    if template is not None:
        code = reason_code(template.parse_answer(raw).reason)
        if code:
            return code
    return "unparsed answer"


def outputs_with_failures(rows: pd.DataFrame, table: str, template=None) -> pd.DataFrame:
    """``rows`` with a ``failure`` column: the reason for every row without a value, else ""."""
    value = "p_first" if table == "comparisons" else "score"
    out = rows.copy()
    failed = out[value].isna().to_numpy()
    raw = out["raw"] if "raw" in out.columns else pd.Series([None] * len(out), index=out.index)
    reasons = np.full(len(out), "", dtype=object)
    for pos in np.flatnonzero(failed):
        reasons[pos] = failure_reason(raw.iloc[pos], template)
    out["failure"] = reasons
    return out


def failure_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Number of failed outputs per reason (from :func:`outputs_with_failures`)."""
    failed = rows.loc[rows["failure"] != "", "failure"]
    counts = failed.value_counts().rename_axis("reason").reset_index(name="n_outputs")
    counts["share_of_all"] = counts["n_outputs"] / max(len(rows), 1)
    return counts

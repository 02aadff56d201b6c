"""Helpers shared by the papers' modules: one reproduction row, the page links, numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: Tolerance of a number printed with two decimals (half a unit of the last digit, plus
#: float noise): |computed - published| <= TOL2.
TOL2 = 0.006


def row(
    ref: str,
    quantity: str,
    published,
    computed,
    *,
    note: str = "",
    page: str = "",
    settings: dict | None = None,
    tolerance: float = TOL2,
    bound: str = "=",
) -> dict:
    """One reproduction record (see :data:`data.reproduce.ROW_COLUMNS`)."""
    return dict(
        ref=ref,
        quantity=quantity,
        published=_num(published),
        computed=_num(computed),
        note=note,
        page=page,
        settings=dict(settings or {}),
        tolerance=float(tolerance),
        bound=bound,
    )


def _num(value) -> float:
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def link(dataset: str, **params) -> dict:
    """The URL query parameters of a page: ``dataset`` first, then the given ones (a value
    None is left out; a list becomes comma-separated text, as the app's URL writes it)."""
    out = {"dataset": dataset}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        out[key] = str(value)
    return out


def fmt(value, digits: int = 3) -> str:
    """A number for a note ("nan" when not finite)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{v:.{digits}f}" if np.isfinite(v) else "nan"


def mean_by(table: pd.DataFrame, keys, value: str = "value") -> pd.Series:
    """Mean of ``value`` per ``keys`` (NaN cells left out, as the papers average criteria)."""
    return table.groupby(keys, sort=False, observed=True)[value].mean()

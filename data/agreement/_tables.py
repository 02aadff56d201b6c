"""What every agreement table is built with: selection, integer codes, item matrices, frames."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from data.schema import DataError

#: The columns that name one item (a candidate of a context).
ITEM = ["context_id", "candidate_id"]


def as_list(value) -> list[str] | None:
    """A selection as a list of names.

    Parameters
    ----------
    value : str, iterable or None
        One name, several names, or None (everything).

    Returns
    -------
    list of str or None
        ``[value]`` for one name, the names as text for several, None for None.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def pick(table: pd.DataFrame, column: str, wanted, what: str) -> pd.DataFrame:
    """The rows of ``table`` whose ``column`` is one of ``wanted``.

    Parameters
    ----------
    table : pandas.DataFrame
        A canonical table.
    column : str
        The column selected on (judge, prompt_id, attribute, annotator).
    wanted : str, iterable or None
        The names kept; None keeps every row.
    what : str
        The table, for the message.

    Returns
    -------
    pandas.DataFrame
        The rows kept, in table order (``table`` itself when ``wanted`` is None).

    Raises
    ------
    DataError
        A wanted name does not appear in ``column`` (the message lists the names that do).
    """
    return pick_rows(table, {column: wanted}, what)


def pick_rows(
    table: pd.DataFrame, selection: dict, what: str, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """The rows of ``table`` kept by every ``{column: wanted}`` of ``selection`` in turn, as
    :func:`pick` one after the other would keep them, with one copy of the rows at the end.

    Parameters
    ----------
    table : pandas.DataFrame
        A canonical table.
    selection : dict of str to (str, iterable or None)
        Column -> the names kept (None keeps every row), applied in order: a name is looked
        for among the rows the earlier columns kept.
    what : str
        The table, for the message.
    columns : sequence of str, optional
        The columns returned; default all (big tables: copy only what is needed).

    Returns
    -------
    pandas.DataFrame
        The rows kept, in table order (``table`` itself when nothing is selected and every
        column is wanted).

    Raises
    ------
    DataError
        A wanted name that does not appear in its column among the rows the earlier columns
        kept (the message lists the names that do).
    """
    keep = None
    for column, wanted in selection.items():
        wanted = as_list(wanted)
        if wanted is None:
            continue
        labels = table[column].astype(str)
        hit = labels.isin(wanted).to_numpy()
        sub = hit if keep is None else keep & hit
        found = set(labels[sub].unique())
        unknown = [w for w in wanted if w not in found]
        if unknown:
            known = labels if keep is None else labels[keep]
            raise DataError(
                f"{what}: {column} {', '.join(map(repr, unknown))} not found; available: "
                f"{', '.join(map(repr, sorted(set(known.unique()))))}"
            )
        keep = sub
    cols = list(columns) if columns is not None else None
    if keep is None:
        return table if cols is None else table[cols]
    return table.loc[keep] if cols is None else table.loc[keep, cols]


def table_frame(rows: list[dict], cols: list[str]) -> pd.DataFrame:
    """The rows of an agreement table as a frame with ``cols`` in order.

    Parameters
    ----------
    rows : list of dict
        One dict per row; a column a row does not set is missing there.
    cols : list of str
        The columns, in order.

    Returns
    -------
    pandas.DataFrame
        ``reason`` (when a column) is ``""`` where a row gives none. Counts stay plain
        numbers (float with NaN where a row has none, e.g. the "mean" row of the human
        baseline).
    """
    out = pd.DataFrame(rows).reindex(columns=cols)
    if "reason" in out.columns:
        out["reason"] = out["reason"].fillna("")
    return out


def codes(series: pd.Series) -> np.ndarray:
    """Integer codes of labels in first-seen order, -1 for a missing label.

    Parameters
    ----------
    series : pandas.Series
        Labels (contexts, systems).

    Returns
    -------
    numpy.ndarray of int
        One code per row.
    """
    out, _ = pd.factorize(series, use_na_sentinel=True)
    return out


def wide(
    frame: pd.DataFrame, column: str, value: str = "score", columns: Sequence | None = None
) -> tuple[np.ndarray, pd.DataFrame, list]:
    """An items x ``column`` matrix of ``value``: the mean of duplicates, NaN where absent.

    Faster than ``pivot_table`` for the many small tables built here.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with the :data:`ITEM` columns, ``column`` and ``value``.
    column : str
        The column whose labels become the matrix's columns (annotator, sample).
    value : str
        The column of numbers; NaN values are left out of the means.
    columns : sequence, optional
        The labels to lay out, in this order (a label absent from ``frame`` gives a NaN
        column; rows of other labels are dropped); default every label, sorted.

    Returns
    -------
    M : numpy.ndarray of float64
        Shape (items, labels).
    items : pandas.DataFrame
        The items (context_id, candidate_id) in first-seen order, one per row of ``M``.
    labels : list
        The column labels of ``M``.
    """
    item = frame.groupby(ITEM, sort=False, observed=True).ngroup().to_numpy()
    col_codes, col_labels = pd.factorize(frame[column], sort=True)
    col_labels = list(col_labels)
    if columns is not None:
        order = {c: i for i, c in enumerate(col_labels)}
        remap = np.array([order.get(c, -1) for c in columns])
        pos = np.full(len(col_labels), -1)
        pos[remap[remap >= 0]] = np.flatnonzero(remap >= 0)
        col_codes = pos[col_codes]
        col_labels = list(columns)
    n_items = int(item.max()) + 1 if len(item) else 0
    vals = frame[value].to_numpy(dtype=np.float64)
    keep = (col_codes >= 0) & np.isfinite(vals)
    flat = item[keep] * len(col_labels) + col_codes[keep]
    size = n_items * len(col_labels)
    sums = np.bincount(flat, vals[keep], size)
    counts = np.bincount(flat, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        M = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    first = np.unique(item, return_index=True)[1]
    items = frame.iloc[first][ITEM].reset_index(drop=True)
    return M.reshape(n_items, len(col_labels)), items, col_labels

"""Comparisons over one large item set as flat index arrays (Bradley–Terry over systems).

``data.arrays`` lays comparisons out per context (P); here every comparison is one entry of
``first``, ``second`` and ``p`` over a single list of items (candidates or systems), the flat
input of ``ranking.bradley_terry``, ``ranking.elo`` and ``ranking.win_matrix``, with each
comparison's weight (the ``weight`` column, 1 by default) beside it for their ``weights=``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from data.arrays import _need_columns, _select, row_weights
from data.schema import DEFAULT_WEIGHT, DataError


class FlatComparisons(NamedTuple):
    """Comparisons over one item set: ``first[k]`` was shown before ``second[k]``.

    Attributes
    ----------
    first : ndarray of int64
        Index into ``items`` of the item shown first, one entry per comparison.
    second : ndarray of int64
        Index into ``items`` of the item shown second.
    p : ndarray of float64
        p_first of each comparison.
    items : list of str
        The item names the indices refer to.
    weight : ndarray of float64
        How many games each comparison counts (the ``weight`` column; 1 where the table
        has none). A weighted comparison is still one comparison (one battle).
    """

    first: np.ndarray  # int64 index into items
    second: np.ndarray  # int64 index into items
    p: np.ndarray  # float64 p_first
    items: list[str]
    weight: np.ndarray  # float64 weight, > 0

    @property
    def weighted(self) -> bool:
        """Whether any comparison counts other than once (a weight other than 1)."""
        return bool((self.weight != DEFAULT_WEIGHT).any())


def flat_comparisons(
    comparisons: pd.DataFrame,
    *,
    attribute: str | None = None,
    judge: str | None = None,
    item: str = "candidate",
    candidates: pd.DataFrame | None = None,
    items: Sequence[str] | None = None,
) -> FlatComparisons:
    """Comparisons of all contexts as index pairs over one item set (for Bradley–Terry).

    Parameters
    ----------
    comparisons, attribute, judge
        The canonical comparisons table and the selection, as for
        :func:`data.arrays.comparisons_to_P`.
    item : {"candidate", "system"}
        What the items are: candidate ids pooled across contexts (right when candidate ids
        name models, as in arena-style data), or the systems of the candidates (needs
        ``candidates`` with a ``system`` column).
    candidates : pandas.DataFrame, optional
        Candidates table; required for ``item="system"``.
    items : sequence of str, optional
        Item order of the result; default sorted names. Every compared item must be in it.

    Returns
    -------
    FlatComparisons
        One entry per comparison row (each sample separately), rows with NaN p_first and
        comparisons between two candidates of the same system left out (they carry no
        information about the order of items).

    Raises
    ------
    DataError
        A required column missing; ambiguous or unknown attribute/judge; a weight that is
        not a number > 0 (``data.arrays.row_weights``); ``item="system"``
        without a candidates table that has a ``system`` column, or with a compared
        candidate that has no system there; a compared item missing from ``items``.
    ValueError
        ``item`` is neither ``"candidate"`` nor ``"system"``.
    """
    what = "comparisons"
    _need_columns(comparisons, ["context_id", "first_id", "second_id", "p_first"], what)
    table = _select(comparisons, "attribute", attribute, what, "attribute")
    table = _select(table, "judge", judge, what, "judge")
    p = table["p_first"].to_numpy(dtype=np.float64)
    w = row_weights(table, what)
    if item == "candidate":
        a = table["first_id"].astype(str).to_numpy()
        b = table["second_id"].astype(str).to_numpy()
    elif item == "system":
        if candidates is None or "system" not in candidates.columns:
            raise DataError("item='system' needs the candidates table with a 'system' column")
        lut = candidates.drop_duplicates(["context_id", "candidate_id"])
        sys_of = pd.MultiIndex.from_arrays(
            [lut["context_id"].astype(str).to_numpy(), lut["candidate_id"].astype(str).to_numpy()]
        )
        system = lut["system"].to_numpy(dtype=object)

        def to_system(col):
            keys = pd.MultiIndex.from_arrays(
                [table["context_id"].astype(str).to_numpy(), table[col].astype(str).to_numpy()]
            )
            idx = sys_of.get_indexer(keys)
            ok = idx >= 0
            ok[ok] = pd.notna(system[idx[ok]])
            if not ok.all():
                k = int(np.flatnonzero(~ok)[0])
                raise DataError(
                    f"{what}: {int((~ok).sum())} row(s) name a candidate without a system "
                    f"(e.g. {table[col].iloc[k]!r} in context {table['context_id'].iloc[k]!r}); "
                    "fill the 'system' column of the candidates table"
                )
            return system[idx].astype(str)

        a, b = to_system("first_id"), to_system("second_id")
    else:
        raise ValueError(f"item must be 'candidate' or 'system', got {item!r}")

    keep = np.isfinite(p) & (a != b)
    a, b, p, w = a[keep], b[keep], p[keep], w[keep]
    if items is None:
        names = sorted(set(a.tolist()) | set(b.tolist()))
    else:
        names = [str(x) for x in items]
        extra = sorted((set(a.tolist()) | set(b.tolist())) - set(names))
        if extra:
            raise DataError(
                f"{what}: compared item(s) {', '.join(map(repr, extra[:10]))} are not in items"
            )
    index = pd.Index(names)
    return FlatComparisons(
        first=index.get_indexer(a).astype(np.int64),
        second=index.get_indexer(b).astype(np.int64),
        p=p.astype(np.float64),
        items=names,
        weight=w.astype(np.float64),
    )

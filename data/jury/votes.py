"""What each member of a jury said about each item, laid out items x judges.

A jury combines judges of one attribute and one kind: pairwise judges (comparisons; an item
is an ordered pair (context, first, second), each presentation order its own item), absolute
judges (Likert ratings; an item is (context, candidate)) or automatic measures (ratings with
``prompt_id`` "automatic", on each measure's own scale). A judge's samples of one item are
first combined: averaged for the value, majority-voted for the label.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.agreement.verdicts import verdict_labels
from data.natural import natural_sorted
from data.schema import AUTOMATIC, DataError, Dataset

#: Kinds of jury: what its members produce.
KINDS = ("pairwise", "absolute", "automatic")
#: Item keys of each table.
PAIR_KEYS = ["context_id", "first_id", "second_id"]
ITEM_KEYS = ["context_id", "candidate_id"]
#: Pairwise class codes 0, 1, 2: the first wins, a tie, the second wins (an ordinal order).
PAIR_CLASSES = ("A", "tie", "B")
#: Scales with more whole points than this are read by their distinct values instead.
MAX_POINTS = 21


@dataclass(frozen=True)
class JuryVotes:
    """The members' outputs, one row per item, one column per judge.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    attribute : str
        The attribute judged.
    judges : tuple of str
        The members, in natural order (the columns of ``values`` and ``labels``).
    items : pandas.DataFrame
        The item keys (:data:`PAIR_KEYS` or :data:`ITEM_KEYS`), one row per item that at
        least one member judged.
    values : ndarray, shape (n_items, n_judges)
        Mean p_first (pairwise), mean score (absolute) or z-score of the mean score
        (automatic) per judge; NaN where the judge gave no parsed output.
    labels : ndarray of int, shape (n_items, n_judges) or None
        Class codes (into ``classes``), -1 where missing; None for automatic measures.
    classes : tuple
        The class of each code: :data:`PAIR_CLASSES`, or the scale's points.
    notes : tuple of str
        What was done to the data (rounded scores, dropped rows).
    """

    kind: str
    attribute: str
    judges: tuple[str, ...]
    items: pd.DataFrame
    values: np.ndarray
    labels: np.ndarray | None
    classes: tuple
    notes: tuple[str, ...] = ()

    @property
    def categorical(self) -> bool:
        """Whether the members' outputs are classes (majority and Dawid–Skene apply)."""
        return self.labels is not None


def judge_kinds(ds: Dataset, attribute: str) -> dict[str, str]:
    """Each judge of ``attribute`` and its kind ("pairwise", "absolute" or "automatic").

    Parameters
    ----------
    ds : Dataset
        Its comparisons and ratings.
    attribute : str
        The attribute.

    Returns
    -------
    dict of str to str
        Judges in natural order; a judge with comparisons is pairwise, else a judge whose
        ratings are all of ``prompt_id`` "automatic" is automatic, else absolute.
    """
    out: dict[str, str] = {}
    rat = ds.ratings
    if len(rat):
        rat = rat[rat["attribute"].astype(str) == attribute]
        auto = (rat["prompt_id"].astype(str) == AUTOMATIC).groupby(rat["judge"].astype(str)).all()
        for judge, is_auto in auto.items():
            out[judge] = "automatic" if is_auto else "absolute"
    comps = ds.comparisons
    if len(comps):
        comps = comps[comps["attribute"].astype(str) == attribute]
        for judge in comps["judge"].astype(str).unique():
            out[judge] = "pairwise"
    return {j: out[j] for j in natural_sorted(out)}


def jury_kind(ds: Dataset, attribute: str, judges) -> str:
    """The kind of a jury of ``judges``; a DataError that says what to change otherwise."""
    judges = list(dict.fromkeys(str(j) for j in judges))
    if len(judges) < 2:
        raise DataError(f"a jury needs at least 2 judges; got {len(judges)}: pick more judges")
    kinds = judge_kinds(ds, attribute)
    missing = [j for j in judges if j not in kinds]
    if missing:
        raise DataError(
            f"{ds.name}: no outputs for attribute {attribute!r} by judge(s) {missing}; "
            "pick judges of this attribute"
        )
    found = {kinds[j] for j in judges}
    if "pairwise" in found and len(found) > 1:
        pair = [j for j in judges if kinds[j] == "pairwise"]
        other = [j for j in judges if kinds[j] != "pairwise"]
        raise DataError(
            "a jury cannot mix pairwise judges ("
            + ", ".join(pair)
            + ") with absolute ones ("
            + ", ".join(other)
            + "): their outputs are of different kinds; pick judges of one kind"
        )
    return "automatic" if "automatic" in found else found.pop()


def _scale_points(ds: Dataset, attribute: str, scores: np.ndarray) -> np.ndarray:
    """The classes of absolute scores: the whole points of the attribute's scale, else the
    distinct values."""
    lo, hi = ds.scales.get(attribute, (np.nan, np.nan))
    if np.isfinite(lo) and np.isfinite(hi) and 0 < hi - lo <= MAX_POINTS:
        return np.arange(np.ceil(lo), np.floor(hi) + 1.0)
    return np.unique(np.round(scores[np.isfinite(scores)], 6))


def _layout(table: pd.DataFrame, keys: list[str], judges: tuple[str, ...]):
    """Items (unique keys, sorted) and each row's item and judge code."""
    items = table[keys].drop_duplicates().sort_values(keys, ignore_index=True)
    index = pd.MultiIndex.from_frame(items)
    row_item = index.get_indexer(pd.MultiIndex.from_frame(table[keys]))
    row_judge = pd.Index(judges).get_indexer(table["judge"].astype(str))
    return items, row_item, row_judge


def _mode_codes(row_item, row_judge, codes, shape, n_classes, tie_code=None):
    """Most common code per (item, judge), -1 where none; equally common codes give
    ``tie_code`` when given, else the lowest of them."""
    ok = codes >= 0
    counts = np.zeros((*shape, n_classes))
    np.add.at(counts, (row_item[ok], row_judge[ok], codes[ok]), 1.0)
    top = counts.max(axis=2)
    out = counts.argmax(axis=2)
    if tie_code is not None:
        out[(counts == top[..., None]).sum(axis=2) > 1] = tie_code
    out[top == 0] = -1
    return out


def _mean_values(row_item, row_judge, values, shape):
    """Mean of the finite values per (item, judge), NaN where none."""
    ok = np.isfinite(values)
    total = np.zeros(shape)
    n = np.zeros(shape)
    np.add.at(total, (row_item[ok], row_judge[ok]), values[ok])
    np.add.at(n, (row_item[ok], row_judge[ok]), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / n


def jury_votes(ds: Dataset, attribute: str, judges) -> JuryVotes:
    """The members' outputs on every item any of them judged.

    Parameters
    ----------
    ds, attribute : Dataset, str
        The comparisons or ratings of ``attribute`` are read.
    judges : iterable of str
        At least 2 judges of one kind (:func:`jury_kind`).

    Returns
    -------
    JuryVotes
        Values and labels per item and judge.

    Raises
    ------
    DataError
        Fewer than 2 judges, a judge without outputs for the attribute, a mix of pairwise
        and absolute judges, no item judged by two members, or a constant measure.
    """
    kind = jury_kind(ds, attribute, judges)
    judges = tuple(natural_sorted(set(map(str, judges))))
    notes: list[str] = []
    if kind == "pairwise":
        table = ds.comparisons
        table = table[(table["attribute"].astype(str) == attribute)]
        table = table[table["judge"].astype(str).isin(judges)]
        items, ri, rj = _layout(table, PAIR_KEYS, judges)
        shape = (len(items), len(judges))
        values = _mean_values(ri, rj, table["p_first"].to_numpy(np.float64), shape)
        lab = pd.Series(verdict_labels(table)).map({c: i for i, c in enumerate(PAIR_CLASSES)})
        codes = lab.fillna(-1).to_numpy(np.int64)
        labels = _mode_codes(ri, rj, codes, shape, 3, tie_code=1)
        classes: tuple = PAIR_CLASSES
    else:
        table = ds.ratings
        table = table[(table["attribute"].astype(str) == attribute)]
        table = table[table["judge"].astype(str).isin(judges)]
        items, ri, rj = _layout(table, ITEM_KEYS, judges)
        shape = (len(items), len(judges))
        scores = table["score"].to_numpy(np.float64)
        values = _mean_values(ri, rj, scores, shape)
        labels = None
        classes = ()
        if kind == "automatic":
            mean = np.nanmean(values, axis=0)
            std = np.nanstd(values, axis=0)
            flat = [j for j, s in zip(judges, std, strict=True) if not (s > 0)]
            if flat:
                raise DataError(
                    f"{ds.name}: measure(s) {flat} give one value throughout for {attribute!r}; "
                    "they cannot be standardised: leave them out of the jury"
                )
            values = (values - mean) / std
            notes.append(
                "automatic measures are on scales of their own: each is standardised "
                "(z-score over the items) and the jury is their mean (higher is better)"
            )
        else:
            points = _scale_points(ds, attribute, scores)
            ok = np.isfinite(scores)
            codes = np.full(scores.shape, -1, dtype=np.int64)
            nearest = np.abs(scores[ok, None] - points[None, :]).argmin(axis=1)
            codes[ok] = nearest
            off = int((np.abs(points[nearest] - scores[ok]) > 1e-9).sum())
            if off:
                notes.append(
                    f"{off:,} ratings between the scale's points were rounded to the nearest "
                    "point for the vote (the mean uses them as they are)"
                )
            labels = _mode_codes(ri, rj, codes, shape, points.size)
            classes = tuple(float(p) for p in points)
    n_judged = np.isfinite(values).sum(axis=1)
    if labels is not None:
        n_judged = np.maximum(n_judged, (labels >= 0).sum(axis=1))
    if not (n_judged >= 2).any():
        raise DataError(
            f"{ds.name}: no item of {attribute!r} was judged by two of the chosen judges "
            f"({', '.join(judges)}); a jury needs shared items: pick judges of the same items"
        )
    return JuryVotes(kind, attribute, judges, items, values, labels, classes, tuple(notes))

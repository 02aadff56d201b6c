"""Adding the tables of one file to a dataset: human scores, candidate texts, contexts,
comparisons or ratings uploaded separately become one dataset.

The dataset given is never changed (benchmarks are cached and shared): the result is a
validated copy that keeps its name and records the files added (``sources``,
``description``). The same checks as a fresh upload apply, with messages naming the added
file's rows: a row already in the dataset, a candidate or context it does not know, a text
that differs from the one it has.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from data.io.notes import row_ranges
from data.problems import Problems
from data.schema import ROW_KEYS, TABLE_NAMES, Dataset
from data.validate import validate_dataset

#: Tables of judge outputs: a file may replace the outputs of the same judge and attribute.
OUTPUT_KEYS = {
    "comparisons": ("judge", "attribute"),
    "ratings": ("judge", "attribute", "prompt_id"),
}
_NOUN = {
    "contexts": "context(s)",
    "candidates": "candidate(s)",
    "human_scores": "human score(s)",
    "comparisons": "comparison(s)",
    "ratings": "rating(s)",
}


def _keys(t: pd.DataFrame, cols) -> pd.MultiIndex:
    return pd.MultiIndex.from_arrays([t[c].astype(str).to_numpy() for c in cols])


def _blank(values: pd.Series) -> np.ndarray:
    return (values.isna() | (values.astype(str).str.strip() == "")).to_numpy()


def _upsert(old, new, table, fields, label, ds_name, problems):
    """Rows of ``new`` added to ``old``; empty fields of known rows filled from ``new``."""
    key = list(ROW_KEYS[table])
    if not len(old):
        return new.reset_index(drop=True), len(new), 0
    old = old.reset_index(drop=True).copy()
    where = pd.Series(np.arange(len(old)), index=_keys(old, key))
    hit = _keys(new, key).isin(where.index)
    filled = 0
    for f in fields:
        if f not in new.columns:
            continue
        if f not in old.columns:
            old[f] = np.nan
        pos = where.reindex(_keys(new[hit], key)).to_numpy()
        mine, theirs = old[f].iloc[pos], new.loc[hit, f]
        fill = _blank(mine) & ~_blank(theirs)
        clash = (
            ~_blank(mine)
            & ~_blank(theirs)
            & (mine.astype(str).to_numpy() != theirs.astype(str).to_numpy())
        )
        if clash.any():
            rows = np.flatnonzero(hit)[clash]
            problems.add(
                f"{label}, {row_ranges(rows)}: the {table} {', '.join(key)} are already in "
                f"{ds_name} with a different '{f}'; keep one version (fix the file or load it "
                "as a new dataset)"
            )
        old.loc[pos[fill], f] = theirs.to_numpy()[fill]
        filled += int(fill.sum())
    added = new[~hit]
    out = pd.concat([old, added], ignore_index=True) if len(added) else old
    return out, len(added), filled


def add_to_dataset(
    ds: Dataset, addition: Dataset, *, replace_outputs: bool = False
) -> tuple[Dataset, list[str]]:
    """A validated copy of ``ds`` with the tables of ``addition`` (one uploaded file) added.

    Parameters
    ----------
    ds : Dataset
        The dataset to add to; not changed.
    addition : Dataset
        What the file holds (as :func:`data.io.read_upload` gives it); its ``sources`` (or
        ``source``, or ``name``) names the file in messages.
    replace_outputs : bool
        True: comparisons and ratings of a judge and attribute (and prompt) that ``ds``
        already has are replaced by the file's (a judge run again); False: such rows are
        added, and a row already in ``ds`` is refused.

    Returns
    -------
    dataset : Dataset
        Named like ``ds``. Contexts and candidates already in ``ds`` keep their rows; an
        empty text (or system) is filled from the file. ``reference_systems``: those of
        ``ds`` then those of ``addition`` (union). ``sources`` lists the file under
        each table it added to, and ``description`` says what was added.
    notes : list of str
        One sentence per table: rows added, fields filled, outputs replaced.

    Raises
    ------
    DataError
        Naming the file and its rows: a row already in ``ds`` (same key), a context or
        candidate given a different text than ``ds`` has, a score, rating or comparison of a
        candidate (or context) that neither ``ds`` nor the file has, a scale that differs.
    """
    problems = Problems()
    files = {
        t: (addition.sources.get(t) or [addition.source or addition.name])[-1] for t in TABLE_NAMES
    }
    tables = {t: ds.table(t) for t in TABLE_NAMES}
    notes: list[str] = []
    added: dict[str, int] = {}
    for table, fields in (("contexts", ("text",)), ("candidates", ("text", "system"))):
        new = addition.table(table)
        if len(new):
            label = f"{files[table]} ({table})"
            tables[table], n, filled = _upsert(
                tables[table], new, table, fields, label, ds.name, problems
            )
            added[table] = n
            notes.append(
                f"{files[table]}: {n:,} new {_NOUN[table]}"
                + (f", {filled:,} empty field(s) filled" if filled else "")
                + f", {len(new) - n:,} already there"
            )
    problems.raise_if_any(files["candidates"])

    scales = dict(ds.scales)
    for attr, rng in addition.scales.items():
        if attr in scales and tuple(scales[attr]) != tuple(rng):
            problems.add(
                f"{addition.source or addition.name}: the scale of '{attr}' is {rng}, but "
                f"{ds.name} has {tuple(scales[attr])}; state the same scale"
            )
        scales[attr] = tuple(rng)

    for table in ("human_scores", "comparisons", "ratings"):
        new = addition.table(table).reset_index(drop=True)
        if not len(new):
            continue
        label = f"{files[table]} ({table})"
        # checked on their own against what the merged dataset knows: the file's row numbers
        alone = Dataset(
            name=label,
            contexts=tables["contexts"],
            candidates=tables["candidates"],
            **{table: new},
        )
        try:
            validate_dataset(alone, sources={table: label})
        except Exception as err:  # DataError: its lines name the file's rows
            for line in getattr(err, "problems", [str(err)]):
                problems.add(line)
            continue
        old = tables[table]
        if replace_outputs and table in OUTPUT_KEYS and len(old):
            keys = list(OUTPUT_KEYS[table])
            same = _keys(old, keys).isin(_keys(new, keys))
            if same.any():
                notes.append(f"{files[table]}: replaces {int(same.sum()):,} {_NOUN[table]}")
            old = old[~same]
        if len(old):
            dup = _keys(new, ROW_KEYS[table]).isin(_keys(old, ROW_KEYS[table]))
            if dup.any():
                problems.add(
                    f"{label}, {row_ranges(np.flatnonzero(dup))}: already in {ds.name} (same "
                    f"{', '.join(ROW_KEYS[table])}); remove these rows from the file, or load "
                    "it as a new dataset"
                )
                continue
        tables[table] = pd.concat([old, new], ignore_index=True) if len(old) else new
        added[table] = len(new)
        notes.append(f"{files[table]}: {len(new):,} {_NOUN[table]} added")
    problems.raise_if_any(addition.source or addition.name)

    sources = {t: list(v) for t, v in ds.sources.items()}
    for table in added:
        had = len(ds.table(table)) and not ds.sources
        got = sources.setdefault(table, [ds.source or ds.name] if had else [])
        if files[table] not in got:
            got.append(files[table])
    what = ", ".join(f"{n:,} {_NOUN[t]}" for t, n in added.items() if n)
    added_line = f"Added {files[next(iter(added), 'candidates')]}: {what or 'nothing new'}."
    description = f"{ds.description} {added_line}".strip()
    refs = tuple(dict.fromkeys((*ds.reference_systems, *addition.reference_systems)))
    merged = replace(
        ds,
        scales=scales,
        reference_systems=refs,
        sources=sources,
        description=description,
        **tables,
    )
    return validate_dataset(merged), notes

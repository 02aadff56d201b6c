"""Check canonical tables and bring them to their canonical dtypes.

Every problem found is collected and reported at once in one :class:`data.schema.DataError`
(:class:`data.problems.Problems`): each line names the file (or table), the row (the 1-based
data row as the user sees it in the file, header not counted), the column, what is wrong and
what to do. Checks are vectorised (a million-row table takes well under a second from
numbers, about one second from text); only the first few offending rows of each kind are
spelled out.

Canonical dtypes (``data.coerce``): identifiers, texts and verdicts are pandas ``str``
columns (identifiers stripped of surrounding spaces; a missing text is ``""``; a missing
verdict is NaN), floats are ``float64`` (NaN = missing or unparsed), ``sample`` is
``int64``. Nothing is read approximately: whole numbers are parsed exactly and refused
outside int64 (never wrapped or rounded through float64); an id given as a floating-point
number is refused when a float cannot hold it exactly (infinite, or a whole number from 2**53
on); two rows with the same key (``data.schema.ROW_KEYS``) are refused, naming both rows,
since they would be counted twice.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from data.coerce import bad_cell_message, coerce, normalise_column, outside
from data.problems import MAX_LISTED, Problems, row_label
from data.schema import AUTOMATIC, DEFAULT_WEIGHT, ROW_KEYS, TABLE_NAMES, TABLES, Dataset

#: Largest file the readers load (bytes); larger uploads are refused before parsing.
MAX_UPLOAD_BYTES = 200 * 1024 * 1024


# ---------------------------------------------------------------------------------------
# Column names


def self_comparisons(df: pd.DataFrame) -> np.ndarray:
    """0-based positions of the rows of a comparisons table (canonical or misspelled column
    names, as :func:`validate_table` matches them) whose first and second candidate are the
    same id: e.g. the baseline judged against itself in an arena-style file. An upload
    skips them with a count (``data.io.read_upload_result``); :func:`validate_table` refuses
    them. Empty when either id column is missing."""
    if not isinstance(df, pd.DataFrame) or not len(df):
        return np.empty(0, dtype=np.int64)
    found = _match_columns(df, "comparisons", "", Problems())
    if "first_id" not in found or "second_id" not in found:
        return np.empty(0, dtype=np.int64)
    first, _ = coerce("id", df[found["first_id"]])
    second, _ = coerce("id", df[found["second_id"]])
    first, second = first.reset_index(drop=True), second.reset_index(drop=True)
    same = (first == second) & first.notna() & first.astype(str).ne("")
    return np.flatnonzero(same.to_numpy(dtype=bool))


def _match_columns(df: pd.DataFrame, name: str, source: str, problems: Problems) -> dict:
    """Map canonical column -> column of ``df``; report missing and misspelled columns."""
    spec = TABLES[name]
    by_norm: dict[str, list] = {}
    for col in df.columns:
        by_norm.setdefault(normalise_column(col), []).append(col)

    found: dict[str, object] = {}
    for canon in spec:
        cols = by_norm.get(canon, [])
        if len(cols) > 1:
            shown = ", ".join(repr(str(c)) for c in cols)
            problems.add(
                f"{source}, column '{canon}': appears {len(cols)} times ({shown}); "
                "keep one column of that name"
            )
        if cols:
            found[canon] = cols[0]

    unknown = [c for c in df.columns if normalise_column(c) not in spec]
    absent = [c for c in spec if c not in found]
    claimed: set = set()
    for canon in absent:
        required = spec[canon][1]
        pool = {normalise_column(c): c for c in unknown if c not in claimed}
        close = difflib.get_close_matches(canon, list(pool), n=1, cutoff=0.6)
        if close:
            col = pool[close[0]]
            claimed.add(col)
            problems.add(
                f"{source}, column '{col}': not a column of the {name} table; did you mean "
                f"'{canon}'? Rename the column header to '{canon}'"
                + ("" if required else " or remove the column")
            )
        elif required:
            shown = ", ".join(repr(str(c)) for c in df.columns) or "none"
            problems.add(
                f"{source}, column '{canon}': required column is missing from the {name} table "
                f"(columns found: {shown}); add a '{canon}' column"
            )
    return found


# ---------------------------------------------------------------------------------------
# Tables


def validate_table(
    df: pd.DataFrame,
    name: str,
    source: str | None = None,
    scale: Mapping[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """Check one canonical table and return it with the canonical columns and dtypes.

    Parameters
    ----------
    df : pandas.DataFrame
        The table as read or built; column headers are matched ignoring case, surrounding
        spaces and ``-``/space versus ``_``. Absent optional columns are added (missing
        values). Columns that are not canonical are kept, after the canonical ones,
        unchanged (unless they look like a misspelled canonical column, which is an error).
    name : str
        One of ``data.schema.TABLE_NAMES``.
    source : str, optional
        The file or table name used in messages; defaults to ``name``.
    scale : mapping of attribute to (low, high), optional
        Allowed range of ``score`` per attribute (human scores, or prompted judges'
        ratings); attributes not listed, and ratings of automatic measures (``prompt_id``
        ``data.schema.AUTOMATIC``), are not range-checked.

    Returns
    -------
    pandas.DataFrame
        A new table with a fresh RangeIndex, canonical columns first in schema order.

    Raises
    ------
    DataError
        Listing every problem: missing or misspelled column, empty id cell (or a float id
        that cannot be exact), wrong type, a whole number outside int64, verdict not
        A/B/tie, score outside the scale, p_first outside [0, 1], a grade that is not a
        whole number from -2 to +2 or that contradicts p_first's side or the verdict, a
        weight that is not a finite number > 0 (an empty weight cell is the default 1),
        a repeated row key
        (``data.schema.ROW_KEYS``: context, candidate, human score, comparison or rating),
        a candidate compared with itself.
    """
    if name not in TABLES:
        raise ValueError(f"unknown table {name!r}; expected one of {', '.join(TABLE_NAMES)}")
    source = source or name
    problems = Problems()
    table = _check_table_into(df, name, source, scale, problems)
    problems.raise_if_any(source)
    return table


def _check_table_into(
    df: pd.DataFrame,
    name: str,
    source: str,
    scale: Mapping[str, tuple[float, float]] | None,
    problems: Problems,
) -> pd.DataFrame | None:
    """Body of :func:`validate_table` adding to ``problems``; None when columns are missing."""
    if not isinstance(df, pd.DataFrame):
        problems.add(f"{source}: expected a table (pandas DataFrame), got {type(df).__name__}")
        return None
    spec = TABLES[name]
    if len(df) == 0 and (len(df.columns) == 0 or list(df.columns) == list(spec)):
        # nothing at all, or no rows under the canonical header: the empty canonical table
        # (most tables of an upload are empty; checking them column by column costs more
        # than reading the file)
        return _empty_canonical(name).copy()
    return _checked(df, name, source, scale, problems)


def _checked(df, name, source, scale, problems: Problems) -> pd.DataFrame | None:
    spec = TABLES[name]
    found = _match_columns(df, name, source, problems)
    if any(spec[c][1] and c not in found for c in spec):
        # without the required columns the cell checks would only add noise
        return None

    original = df.reset_index(drop=True)
    out: dict[str, pd.Series] = {}
    for canon, (kind, required) in spec.items():
        if canon not in found:
            # an absent optional column is added empty (weights: the default 1) so every
            # table has the same columns
            if kind in ("grade", "weight"):
                fill = DEFAULT_WEIGHT if kind == "weight" else np.nan
                out[canon] = pd.Series(np.full(len(original), fill), dtype="float64")
                continue
            missing = "" if kind == "text" else np.nan
            out[canon] = pd.Series([missing] * len(original), dtype="str")
            continue
        raw = original[found[canon]]
        coerced, bad = coerce(kind, raw)
        coerced = coerced.reset_index(drop=True)
        if kind == "id" and not required:
            # an optional id (system) may be missing on some rows
            bad = np.empty(0, dtype=np.int64)
            coerced = coerced.where(coerced != "", np.nan)
        if len(bad):
            problems.add_rows(
                bad,
                lambda p, kind=kind, canon=canon, raw=raw: (
                    f"{source}, {row_label(p)}, " + bad_cell_message(kind, canon, raw.iloc[p])
                ),
            )
        out[canon] = coerced
    table = pd.DataFrame(out)
    extras = [c for c in original.columns if normalise_column(c) not in spec]
    for col in extras:
        table[col] = original[col].to_numpy()
    _check_values(table, name, source, scale, problems)
    return table


@functools.cache
def _empty_canonical(name: str) -> pd.DataFrame:
    """What the checks make of an empty table with the canonical columns (computed once)."""
    problems = Problems()
    out = _checked(pd.DataFrame({c: [] for c in TABLES[name]}), name, name, None, problems)
    assert out is not None and not problems, problems.lines
    return out


def _check_values(table, name, source, scale, problems: Problems) -> None:
    keys = list(ROW_KEYS[name])
    dup = table.duplicated(keys, keep=False).to_numpy()
    report_duplicates(table, keys, dup, source, problems, _ROW_NAMES[name])
    if name == "comparisons":
        same = np.flatnonzero((table["first_id"] == table["second_id"]).to_numpy())
        problems.add_rows(
            same,
            lambda p: (
                f"{source}, {row_label(p)}, column 'second_id': candidate "
                f"{table['first_id'].iloc[p]!r} is compared with itself (first_id == "
                "second_id); a comparison needs two different candidates, so fix or drop the row"
            ),
        )
        p_first = table["p_first"].to_numpy()
        out_of_range = np.flatnonzero(outside(p_first, 0, 1))
        problems.add_rows(
            out_of_range,
            lambda p: (
                f"{source}, {row_label(p)}, column 'p_first': {float(p_first[p])!r} is outside [0, 1]; "
                "p_first is the probability that the first candidate is better, so write a "
                "value between 0 and 1 (or leave it empty if the answer was not parsed)"
            ),
        )
        _check_grade_sides(table, source, problems)
    if scale and "score" in table.columns and "attribute" in table.columns:
        scores = table["score"].to_numpy()
        attrs = table["attribute"]
        # automatic measures (BLEU, BERTScore, ...) are on their own scale
        rated = np.ones(len(table), dtype=bool)
        if "prompt_id" in table.columns:
            rated = (table["prompt_id"] != AUTOMATIC).to_numpy()
        for attribute, (lo, hi) in scale.items():
            off_scale = (attrs == str(attribute)).to_numpy() & rated & outside(scores, lo, hi)
            problems.add_rows(
                np.flatnonzero(off_scale),
                lambda p, attribute=attribute, lo=lo, hi=hi: (
                    f"{source}, {row_label(p)}, column 'score': {scores[p]:g} is outside the "
                    f"scale of '{attribute}' ({lo:g} to {hi:g}); fix the score or state the "
                    "right scale for this attribute"
                ),
            )


_SIDE_WORDS = {1: "the first candidate better", 0: "a tie", -1: "the second candidate better"}


def _grade_text(grade: float) -> str:
    return f"{int(grade):+d}" if grade else "0"


def _check_grade_sides(table: pd.DataFrame, source: str, problems: Problems) -> None:
    """A grade whose side contradicts p_first's or the verdict's is a problem of its row.

    A grade above 0 says the first candidate is better, so p_first must not be below 0.5
    and the verdict must be A; below 0 the mirror; a grade of 0 (a tie) must not come with
    a certain p_first (0 or 1) or a verdict A / B. A p_first strictly between 0 and 1 may
    lean either way with a tie grade (a probability read from the judge's label tokens).
    """
    grade = table["grade"].to_numpy(dtype=np.float64)
    graded = np.isfinite(grade)
    if not graded.any():
        return
    side = np.sign(np.where(graded, grade, 0.0))
    p_first = table["p_first"].to_numpy(dtype=np.float64)
    has_p = np.isfinite(p_first)
    p_side = np.sign(np.where(has_p, p_first, 0.5) - 0.5)
    against_p = (
        graded
        & has_p
        & (((side != 0) & (p_side == -side)) | ((side == 0) & ((p_first == 0) | (p_first == 1))))
    )
    problems.add_rows(
        np.flatnonzero(against_p),
        lambda p: (
            f"{source}, {row_label(p)}, column 'grade': grade {_grade_text(grade[p])} says "
            f"{_SIDE_WORDS[int(side[p])]} but p_first {float(p_first[p]):g} says "
            f"{_SIDE_WORDS[int(p_side[p])]}; the grade and p_first come from the same verdict "
            "(+ = the first candidate better), so fix one of them (or leave the grade empty)"
        ),
    )
    verdict = table["verdict"]
    v_side = verdict.map({"A": 1.0, "B": -1.0, "tie": 0.0}).to_numpy(dtype=np.float64)
    against_v = graded & ~against_p & np.isfinite(v_side) & (v_side != side)
    problems.add_rows(
        np.flatnonzero(against_v),
        lambda p: (
            f"{source}, {row_label(p)}, column 'grade': grade {_grade_text(grade[p])} says "
            f"{_SIDE_WORDS[int(side[p])]} but the verdict is {verdict.iloc[p]!r}; fix one of "
            "them (A goes with a grade above 0, B below 0, tie with 0)"
        ),
    )


_ROW_NAMES = {
    "contexts": "context",
    "candidates": "candidate",
    "human_scores": "human score",
    "comparisons": "comparison",
    "ratings": "rating",
}
_REPEAT_ADVICE = {
    "human score": "keep one score per annotator, or give the annotators different names",
    "comparison": "keep one, or number repeated answers of the same judge with 'sample' (0, 1, 2, ...)",
    "rating": "keep one, or number repeated answers of the same judge with 'sample' (0, 1, 2, ...)",
}


def report_duplicates(
    table: pd.DataFrame,
    keys: list,
    dup_mask: np.ndarray,
    source: str,
    problems: Problems,
    what: str,
) -> None:
    """Add one problem per repeated key to ``problems``, naming its rows.

    Parameters
    ----------
    table : pandas.DataFrame
        The table, its rows in file order.
    keys : list
        The columns of ``table`` that make a row's key; the last one is the column named in
        the message.
    dup_mask : numpy.ndarray of bool
        True for each row whose key appears more than once
        (``table.duplicated(keys, keep=False)``).
    source : str
        The file or table, for the messages.
    problems : Problems
        Where the problems go.
    what : str
        What one row is ("comparison", "human score", "row key", ...); picks the advice.

    Notes
    -----
    Each message names the key, how often it appears and its first ten rows (1-based); once
    ``MAX_LISTED`` lines are listed the rest are only counted.
    """
    if not dup_mask.any():
        return
    positions = np.flatnonzero(dup_mask)
    sub = table.iloc[positions][keys]
    groups = sub.groupby(keys, sort=False, dropna=False).indices
    advice = _REPEAT_ADVICE.get(what, "remove the repeats or give them different ids")
    for key, local in groups.items():
        if len(problems.lines) >= MAX_LISTED:
            problems.n_total += 1
            continue
        rows = positions[local]
        key = key if isinstance(key, tuple) else (key,)
        shown = ", ".join(f"{k}={v!r}" for k, v in zip(keys, key, strict=True))
        row_list = ", ".join(str(r + 1) for r in rows[:10]) + (" ..." if len(rows) > 10 else "")
        problems.add(
            f"{source}, rows {row_list}, column '{keys[-1]}': the same {what} ({shown}) "
            f"appears {len(rows)} times; each {what} must appear once, so {advice}"
        )


# ---------------------------------------------------------------------------------------
# Datasets


def _check_scales(scales, problems: Problems, source: str) -> dict[str, tuple[float, float]]:
    checked: dict[str, tuple[float, float]] = {}
    for attribute, rng in (scales or {}).items():
        try:
            lo, hi = (float(v) for v in rng)
        except (TypeError, ValueError):
            problems.add(
                f"{source}, scale of '{attribute}': {rng!r} is not a (low, high) pair of numbers"
            )
            continue
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            problems.add(
                f"{source}, scale of '{attribute}': ({lo:g}, {hi:g}) needs finite low < high"
            )
            continue
        checked[str(attribute)] = (lo, hi)
    return checked


def _unknown_keys(table, cols, ref, ref_cols) -> np.ndarray:
    """Positions in ``table`` whose values in ``cols`` are not a key of ``ref[ref_cols]``."""
    if len(table) == 0:
        return np.empty(0, dtype=np.int64)
    keys = pd.MultiIndex.from_arrays([ref[c].to_numpy() for c in ref_cols])
    probe = pd.MultiIndex.from_arrays([table[c].to_numpy() for c in cols])
    return np.flatnonzero(~probe.isin(keys))


def validate_dataset(ds: Dataset, sources: Mapping[str, str] | None = None) -> Dataset:
    """Check every table of ``ds`` and the links between them.

    Parameters
    ----------
    ds : Dataset
        The dataset as built or read; not modified.
    sources : mapping of table name to file name, optional
        Names used in messages (e.g. the uploaded file); default ``"<dataset name>: <table>"``.

    Returns
    -------
    Dataset
        A copy with every table in canonical form (see :func:`validate_table`) and
        ``reference_systems`` a tuple of strings. Only human scores are checked against
        ``scales``; ratings are not (automatic measures, ``prompt_id`` "automatic", have
        their own scales).

    Raises
    ------
    DataError
        Listing all problems of all tables, plus cross-table ones: a candidate whose context
        is not in ``contexts``, and a human score, rating or comparison naming a candidate
        that is not in ``candidates`` (checked only where those tables are non-empty).
    """
    sources = dict(sources or {})
    problems = Problems()
    label = ds.source or ds.name or "dataset"
    src = {t: sources.get(t, f"{label}: {t}") for t in TABLE_NAMES}
    scales = _check_scales(ds.scales, problems, label)

    tables: dict[str, pd.DataFrame] = {}
    for name in TABLE_NAMES:
        checked = _check_table_into(
            ds.table(name), name, src[name], scales if name == "human_scores" else None, problems
        )
        if checked is not None:
            tables[name] = checked
    if problems:
        raise problems.error(label)

    contexts, candidates = tables["contexts"], tables["candidates"]
    if len(contexts) and len(candidates):
        bad = _unknown_keys(candidates, ["context_id"], contexts, ["context_id"])
        problems.add_rows(
            bad,
            lambda p: (
                f"{src['candidates']}, {row_label(p)}, column 'context_id': context "
                f"{candidates['context_id'].iloc[p]!r} is not in the contexts table; add it "
                "there or fix the id"
            ),
        )
    for name, cols in (
        ("human_scores", [("candidate_id", "candidate_id")]),
        ("ratings", [("candidate_id", "candidate_id")]),
        ("comparisons", [("first_id", "candidate_id"), ("second_id", "candidate_id")]),
    ):
        t = tables[name]
        if not len(t):
            continue
        if len(candidates):
            for col, _ref_col in cols:
                bad = _unknown_keys(
                    t, ["context_id", col], candidates, ["context_id", "candidate_id"]
                )
                problems.add_rows(
                    bad,
                    lambda p, t=t, col=col, name=name: (
                        f"{src[name]}, {row_label(p)}, column '{col}': unknown candidate "
                        f"{t[col].iloc[p]!r} (context {t['context_id'].iloc[p]!r}) is not in "
                        "the candidates table; add it there or fix the id"
                    ),
                )
        elif len(contexts):
            bad = _unknown_keys(t, ["context_id"], contexts, ["context_id"])
            problems.add_rows(
                bad,
                lambda p, t=t, name=name: (
                    f"{src[name]}, {row_label(p)}, column 'context_id': unknown context "
                    f"{t['context_id'].iloc[p]!r} is not in the contexts table; add it there "
                    "or fix the id"
                ),
            )
    problems.raise_if_any(label)
    return replace(ds, scales=scales, reference_systems=_reference_systems(ds), **tables)


def _reference_systems(ds: Dataset) -> tuple[str, ...]:
    """``ds.reference_systems`` as a tuple of distinct strings (one name given alone kept)."""
    refs = ds.reference_systems
    if isinstance(refs, str):
        refs = (refs,)
    return tuple(dict.fromkeys(str(s) for s in refs or () if str(s).strip()))

"""Guessing the columns of a wide table: by their names first, then by what they hold.

Names are matched with the aliases of ``data.io.wide.WIDE_ROLES``. With the file's cells,
the roles no name gave are read from the values:

- **context id**: a header ending in ``id`` whose values repeat (several rows per context);
- **system**: a short-text column whose values recur across contexts (the same values in
  most contexts: model names); when the candidate id column itself recurs across contexts,
  it names the system too, and a file with a system but no candidate id column takes the
  system as the candidate id;
- **context text**: the longest text column that is constant within each context;
- **candidate text**: the longest text column that varies within a context;
- **scores**: every other column holding numbers.
"""

from __future__ import annotations

import pandas as pd

from data.coerce import coerce_float, normalise_column, stacked_cells, to_str_series
from data.io.columns import find_alias
from data.io.wide import WIDE_ROLES, WideMapping

#: A text column whose cells are this long on average is text, not a label.
LONG_TEXT = 25
#: A value "recurs across contexts" when it is found in at least this share of them.
RECUR_SHARE = 0.5

_LABELS = {
    "context_id": "context id",
    "candidate_id": "candidate id",
    "system": "system",
    "context_text": "context text",
    "candidate_text": "candidate text",
    "annotator": "annotator",
}


#: Cells longer than this are text, never a number, for guessing roles.
_NUMBER_CHARS = 64


def _has_numbers(col: pd.Series) -> bool:
    """Whether any cell is a number. Only the distinct short cells with a digit (or "inf")
    are parsed: a column of long texts is told in milliseconds, not seconds."""
    if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
        return bool(col.notna().any())
    text = to_str_series(col).dropna()
    uniq = pd.Series(text.unique(), dtype="str")
    maybe = uniq[(uniq.str.len() <= _NUMBER_CHARS) & uniq.str.contains(r"[0-9]|inf", case=False)]
    if not len(maybe):
        return False
    num, _bad = coerce_float(maybe.reset_index(drop=True))
    return bool(num.notna().any())


def _number_columns(frame: pd.DataFrame, cols: list) -> set:
    """The columns of ``cols`` where any cell is a number (:func:`_has_numbers` of each),
    told for all of them at once: the distinct cells of every text column are parsed in one
    go, so a file of 1,000 columns costs one parse, not 1,000."""
    out, text_cols = set(), []
    for c in cols:
        col = frame[c]
        if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
            if col.notna().any():
                out.add(c)
        else:
            text_cols.append(c)
    if not text_cols or not len(frame):
        return out
    if len(text_cols) == 1:
        return out | ({text_cols[0]} if _has_numbers(frame[text_cols[0]]) else set())
    cells = stacked_cells(frame, text_cols, as_text=True)
    uniq = pd.Series(cells.dropna().unique(), dtype="str")
    maybe = uniq[(uniq.str.len() <= _NUMBER_CHARS) & uniq.str.contains(r"[0-9]|inf", case=False)]
    if not len(maybe):
        return out
    maybe = maybe.reset_index(drop=True)
    num, _bad = coerce_float(maybe)
    numbers = set(maybe[num.notna().to_numpy()].tolist())
    if not numbers:
        return out
    hit = cells.isin(numbers).to_numpy(dtype=bool).reshape(len(text_cols), len(frame))
    out.update(c for c, any_number in zip(text_cols, hit.any(axis=1), strict=True) if any_number)
    return out


def recurs_across_contexts(values: pd.Series, contexts: pd.Series) -> bool:
    """Whether the values of a column recur across contexts (as system names do).

    Parameters
    ----------
    values, contexts : pandas.Series
        The column and the context id of each row.

    Returns
    -------
    bool
        True when there are at least two contexts and the median value is found in at least
        two of them and in at least :data:`RECUR_SHARE` of them.
    """
    pairs = pd.DataFrame({"c": contexts.to_numpy(), "v": values.to_numpy()}).dropna()
    n_contexts = pairs["c"].nunique()
    if n_contexts < 2 or pairs["v"].nunique() < 2:
        return False
    found_in = pairs.drop_duplicates().groupby("v")["c"].size()
    return bool(found_in.median() >= max(2, RECUR_SHARE * n_contexts))


def _mean_length(col: pd.Series) -> float:
    text = to_str_series(col).dropna()
    return float(text.str.len().mean()) if len(text) else 0.0


def _by_name(cols: list) -> dict:
    roles: dict = {}
    for role, aliases in WIDE_ROLES.items():
        roles[role] = find_alias(cols, aliases, taken=[c for c in roles.values() if c])
    return roles


def guess_wide(frame: pd.DataFrame) -> tuple[WideMapping | None, list[str]]:
    """A :class:`WideMapping` guessed from a table's headers and cells, with what was guessed.

    Parameters
    ----------
    frame : pandas.DataFrame
        The file as read.

    Returns
    -------
    mapping : WideMapping or None
        None without a context id, a candidate id or a score column.
    notes : list of str
        One sentence saying what was read from which column ("read as a wide table: context
        id = 'doc', ..."), plus one per role guessed from the values rather than the name.
    """
    cols = list(frame.columns)
    roles = _by_name(cols)
    why: list[str] = []

    def free() -> list:
        return [c for c in cols if c not in roles.values()]

    if roles["context_id"] is None:
        for c in free():
            norm = normalise_column(c)
            if norm.endswith("id") and frame[c].nunique(dropna=True) < frame[c].notna().sum():
                roles["context_id"] = c
                why.append(f"'{c}' is taken as the context id: its values repeat over rows")
                break
    if roles["context_id"] is None:
        return None, []
    ctx = to_str_series(frame[roles["context_id"]])
    numeric = _number_columns(frame, free())
    texts = [c for c in free() if c not in numeric]

    if roles["system"] is None:
        for c in texts:
            if _mean_length(frame[c]) < LONG_TEXT and recurs_across_contexts(frame[c], ctx):
                if c == roles["annotator"]:
                    continue
                roles["system"] = c
                why.append(f"'{c}' is taken as the system: its values recur across contexts")
                break
    if roles["candidate_id"] is None:
        if roles["system"] is not None:
            roles["candidate_id"] = roles["system"]
            why.append(
                f"'{roles['system']}' names the candidates too: there is no candidate id column"
            )
        else:
            for c in free():
                if normalise_column(c).endswith("id"):
                    roles["candidate_id"] = c
                    break
    if roles["candidate_id"] is None:
        return None, []
    cand = roles["candidate_id"]
    if roles["system"] is None and recurs_across_contexts(to_str_series(frame[cand]), ctx):
        roles["system"] = cand
        why.append(
            f"the candidate ids in '{cand}' recur across contexts, so they name the systems too"
        )

    long_texts = [c for c in free() if c in texts and _mean_length(frame[c]) >= LONG_TEXT]
    long_texts.sort(key=lambda c: -_mean_length(frame[c]))
    if len(frame):
        constant = {
            c: bool((frame[c].groupby(ctx.to_numpy()).nunique(dropna=True) <= 1).all())
            for c in long_texts
        }
    else:
        constant = dict.fromkeys(long_texts, False)
    if roles["context_text"] is None:
        hit = next((c for c in long_texts if constant[c]), None)
        if hit is not None:
            roles["context_text"] = hit
            why.append(
                f"'{hit}' is taken as the context text: long text, the same within a context"
            )
    if roles["candidate_text"] is None:
        hit = next((c for c in long_texts if not constant[c] and c not in roles.values()), None)
        if hit is not None:
            roles["candidate_text"] = hit
            why.append(f"'{hit}' is taken as the candidate text: long text, varying in a context")

    taken = set(roles.values())
    numeric |= _number_columns(frame, [c for c in cols if c not in taken and c not in numeric])
    attributes = {c: normalise_column(c) for c in cols if c not in taken and c in numeric}
    if not attributes:
        return None, []
    mapping = WideMapping(attributes=attributes, **roles)
    return mapping, [describe_wide(mapping), *why]


def describe_wide(mapping: WideMapping) -> str:
    """One sentence naming the column of each role of ``mapping``.

    Parameters
    ----------
    mapping : WideMapping
        The mapping to describe.

    Returns
    -------
    str
        ``"read as a wide table: context id = 'doc', candidate id = 'model', ..., scores =
        coherence, fluency"``.
    """
    parts = [
        f"{label} = '{getattr(mapping, role)}'"
        for role, label in _LABELS.items()
        if getattr(mapping, role) is not None
    ]
    scores = ", ".join(
        str(t) if isinstance(t, str) else f"{t[0]} by {t[1]}" for t in mapping.attributes.values()
    )
    return f"read as a wide table: {', '.join(parts)}, scores = {scores or 'none'}"


def guess_wide_mapping(columns, frame: pd.DataFrame | None = None) -> WideMapping | None:
    """A :class:`WideMapping` guessed from the headers (and the cells), or None.

    Parameters
    ----------
    columns : iterable
        The file's headers.
    frame : pandas.DataFrame, optional
        The file's cells. With them, the roles no header names are read from the values
        (:func:`guess_wide`) and a column none of whose cells is a number (e.g. free-text
        notes) is left out rather than taken as an attribute.

    Returns
    -------
    WideMapping or None
        Context id and candidate id columns (``context_id``/``context``/``doc_id``...,
        ``candidate_id``/``candidate``...), system, text and annotator columns recognised by
        name, every other column an attribute named after its normalised header; None
        without a context id or a candidate id column, or without an attribute column.
    """
    if frame is not None:
        return guess_wide(frame)[0]
    cols = list(columns)
    roles = _by_name(cols)
    if roles["context_id"] is None or roles["candidate_id"] is None:
        return None
    taken = {c for c in roles.values() if c is not None}
    attributes = {c: normalise_column(c) for c in cols if c not in taken}
    if not attributes:
        return None
    return WideMapping(attributes=attributes, **roles)

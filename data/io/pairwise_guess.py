"""Guessing the columns of a pairwise-verdict table: by their names first, then by what they
hold, with a sentence for every guess that did not come from a column's own name.

Names are matched with the aliases of ``data.io.pairwise.PAIR_ROLES`` (``question_id``,
``instruction``, ``model_a``/``model_b``, ``output_1``/``output_2``, ``response_a``/``response_b``,
``winner``, ``verdict``, ``label``, ``judge``, ``weight``, ``game``, ...). With the cells:

- **two sides**: two columns whose names differ only in a final ``a``/``b`` or ``1``/``2``
  (``gen_a``, ``gen_b``) are the two candidates' texts when they hold long text, their
  systems when their short values recur;
- **verdicts**: a column most of whose values the verdict vocabulary reads (``A>>B``,
  ``[[B]]``, ``model_a``, ``tie``) is the judge's verdict, or the human verdict when its name
  says human, gold or label;
- **label**: read as the human (gold) verdict (the judge's when nothing else is);
- **systems**: first and second candidate ids that recur across contexts name the systems
  too;
- **context text**: long text the same within each context.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from data.coerce import (
    coerce_float,
    coerce_float_columns,
    dtype_groups,
    normalise_column,
    stacked_cells,
    to_str_series,
)
from data.io.guess import LONG_TEXT, recurs_across_contexts
from data.io.pairwise import (
    PairwiseMapping,
    complete,
    describe_pairwise,
    roles_by_name,
)
from data.parsing import read_verdict_value, verdict_map

#: A column is read as verdicts when the vocabulary understands this share of its cells.
VERDICT_SHARE = 0.9
#: ... and it has at most this many distinct values.
MAX_VERDICT_VALUES = 30

_SIDE_SUFFIX = re.compile(r"^(?P<stem>.+?)(?P<sep>_?)(?P<side>[ab12]|first|second)$")
_SIDE_PREFIX = re.compile(r"^(?P<side>first|second|[ab])_(?P<stem>.+)$")
_HUMAN_WORDS = ("human", "gold", "label", "annotat", "crowd", "expert")


def _mean_length(col: pd.Series) -> float:
    text = to_str_series(col).dropna()
    return float(text.str.len().mean()) if len(text) else 0.0


def _mean_lengths(frame: pd.DataFrame, cols: list) -> dict:
    """:func:`_mean_length` of each column of ``cols``, measured together."""
    if len(cols) < 2 or not len(frame):
        return {c: _mean_length(frame[c]) for c in cols}
    cells = stacked_cells(frame, cols, as_text=True)
    lengths = cells.str.len().to_numpy(dtype=np.float64, na_value=np.nan).reshape(len(cols), -1)
    present = ~np.isnan(lengths)
    totals = np.where(present, lengths, 0.0).sum(axis=1)
    counts = present.sum(axis=1)
    means = np.divide(totals, counts, out=np.zeros(len(cols)), where=counts > 0)
    return dict(zip(cols, means.tolist(), strict=True))


def _side_pairs(columns: list) -> list[tuple[str, str]]:
    """(first, second) column pairs whose names differ only in a side marker at the end
    (``_a``/``_b``, ``1``/``2``, ``_first``/``_second``) or the start (``first_``/``second_``,
    ``a_``/``b_``)."""
    by_key: dict = {}
    for c in columns:
        norm = normalise_column(c)
        for pattern, where in ((_SIDE_SUFFIX, "end"), (_SIDE_PREFIX, "start")):
            m = pattern.match(norm)
            if not m:
                continue
            side = m["side"]
            kind = "ab" if side in "ab" else "12" if side in "12" else "word"
            slot = 0 if side in ("a", "1", "first") else 1
            sep = m.groupdict().get("sep", "_")
            by_key.setdefault((m["stem"], sep, kind, where), [None, None])[slot] = c
    return [(a, b) for a, b in by_key.values() if a is not None and b is not None]


def _verdict_like(col: pd.Series) -> bool:
    """Whether the vocabulary reads most cells of ``col`` (few distinct values)."""
    m = verdict_map(col.reset_index(drop=True))
    m = m[~m["missing"]]
    if not len(m) or len(m) > MAX_VERDICT_VALUES:
        return False
    return bool(m.loc[m["known"], "count"].sum() >= VERDICT_SHARE * m["count"].sum())


def _verdict_like_columns(frame: pd.DataFrame, cols: list) -> set:
    """The columns of ``cols`` that are :func:`_verdict_like`, told for all of them at once:
    columns of one dtype (text, or one number type) are read together, each distinct value
    once (the vocabulary reads a value the same in any column), so a file of 1,000 columns costs one reading, not 1,000."""
    out: set = set()
    n = len(frame)
    for group, together in dtype_groups(frame, cols):
        if not together:
            # mixed Python values: 1, 1.0 and True are one value to factorize, but read
            # differently, so such columns are read one by one
            out.update(c for c in group if _verdict_like(frame[c]))
            continue
        cells = stacked_cells(frame, group)
        codes, uniques = pd.factorize(cells, use_na_sentinel=True)
        readings = [read_verdict_value(v) for v in uniques]
        missing = np.array([r.missing for r in readings] + [True])  # [-1]: a missing cell
        known = np.array([r.known for r in readings] + [False])
        codes = codes.reshape(len(group), n)
        for c, row in zip(group, codes, strict=True):
            present = row[~missing[row]]
            if not len(present) or len(np.unique(present)) > MAX_VERDICT_VALUES:
                continue
            if known[present].sum() >= VERDICT_SHARE * len(present):
                out.add(c)
    return out


def _numeric(col: pd.Series) -> bool:
    """Whether most non-empty cells are numbers (scores, not names)."""
    num, _bad = coerce_float(col)
    present = to_str_series(col).str.strip().replace("", pd.NA).notna().sum()
    return bool(present) and num.notna().sum() >= 0.5 * present


def _numeric_columns(frame: pd.DataFrame, cols: list) -> set:
    """The columns of ``cols`` that are :func:`_numeric`, told together."""
    if len(cols) < 2 or not len(frame):
        return {c for c in cols if _numeric(frame[c])}
    coerced = coerce_float_columns(frame, cols)
    text = stacked_cells(frame, cols, as_text=True).str.strip()
    present = (text.notna() & (text != "")).to_numpy(dtype=bool).reshape(len(cols), -1)
    out = set()
    for c, n_present in zip(cols, present.sum(axis=1), strict=True):
        if n_present and (~np.isnan(coerced[c][0])).sum() >= 0.5 * n_present:
            out.add(c)
    return out


def _says_human(name) -> bool:
    norm = normalise_column(name)
    return any(w in norm for w in _HUMAN_WORDS)


def guess_pairwise(frame: pd.DataFrame) -> tuple[PairwiseMapping | None, list[str]]:
    """A :class:`~data.io.pairwise.PairwiseMapping` guessed from a table's headers and cells,
    with what was guessed.

    Parameters
    ----------
    frame : pandas.DataFrame
        The file as read (any index: it is reset first).

    Returns
    -------
    mapping : PairwiseMapping or None
        None without a candidate on each side (id, system or text column) or without a
        verdict, probability or human verdict column.
    notes : list of str
        One sentence saying what was read from which column (:func:`describe_pairwise`),
        then one per role guessed from the values or by a rule rather than the name.
    """
    frame = frame.reset_index(drop=True)
    cols = list(frame.columns)
    roles = roles_by_name(cols)
    why: list[str] = []

    def free() -> list:
        taken = {c for c in roles.values() if c is not None}
        return [c for c in cols if c not in taken]

    lengths = _mean_lengths(frame, free())  # the cells never change: measured once
    pairs = _side_pairs(free())
    numeric = _numeric_columns(frame, [a for a, _ in pairs])
    # two columns that differ only by their side: texts or systems
    for a, b in pairs:
        if a not in free() or b not in free():
            continue
        long = min(lengths[a], lengths[b]) >= LONG_TEXT
        if long and roles["first_text"] is None and roles["second_text"] is None:
            roles["first_text"], roles["second_text"] = a, b
            why.append(
                f"'{a}' and '{b}' are taken as the first and second candidate texts: a pair of "
                "columns holding long text"
            )
        elif (
            not long
            and roles["first_system"] is None
            and roles["second_system"] is None
            and a not in numeric
            and not _verdict_like(frame[a])
            and pd.concat([frame[a], frame[b]]).nunique() < 2 * len(frame)
        ):
            roles["first_system"], roles["second_system"] = a, b
            why.append(
                f"'{a}' and '{b}' are taken as the first and second systems: a pair of columns "
                "whose short values recur"
            )

    # "label" (and anything named human/gold) is a human verdict; other verdict-like
    # columns are the judge's
    if roles["verdict"] is None and "score" in map(normalise_column, free()):
        score = next(c for c in free() if normalise_column(c) == "score")
        if _verdict_like(frame[score]):
            roles["verdict"] = score
            why.append(
                f"'{score}' is taken as the judge verdict: its values are verdicts "
                "(A>B, tie, ...), not numbers on a scale"
            )
    verdict_like = _verdict_like_columns(frame, free())
    for c in free():
        if roles["verdict"] is not None and roles["human_verdict"] is not None:
            break
        if c not in verdict_like:
            continue
        if _says_human(c) and roles["human_verdict"] is None:
            roles["human_verdict"] = c
            why.append(f"'{c}' is taken as the human verdict: verdict values, a human's by name")
        elif roles["verdict"] is None and not _says_human(c):
            roles["verdict"] = c
            why.append(f"'{c}' is taken as the judge verdict: most of its values are verdicts")
    hv = roles["human_verdict"]
    if hv is not None and normalise_column(hv) == "label":
        if roles["verdict"] is None and roles["probability"] is None:
            why.append(
                f"'{hv}' is read as the human (gold) verdict, by 'human:gold'; if a model gave "
                "it, map it as the judge verdict instead"
            )
        else:
            why.append(
                f"'{hv}' is read as the human (gold) verdict, by 'human:gold', and "
                f"'{roles['verdict'] or roles['probability']}' as the judge's"
            )

    # candidate ids that recur across contexts name the systems too
    if (
        roles["first"] is not None
        and roles["second"] is not None
        and roles["first_system"] is None
        and roles["second_system"] is None
        and roles["context_id"] is not None
    ):
        ctx = to_str_series(frame[roles["context_id"]])
        ids = pd.concat([frame[roles["first"]], frame[roles["second"]]], ignore_index=True)
        if _mean_length(ids) < LONG_TEXT and recurs_across_contexts(
            to_str_series(ids), pd.concat([ctx, ctx], ignore_index=True)
        ):
            roles["first_system"], roles["second_system"] = roles["first"], roles["second"]
            why.append(
                f"the candidate ids in '{roles['first']}' and '{roles['second']}' recur across "
                "contexts, so they name the systems too"
            )

    # context text: long text the same within each context
    if roles["context_text"] is None and roles["context_id"] is not None and len(frame):
        ctx = to_str_series(frame[roles["context_id"]]).to_numpy()
        texts = [
            c
            for c in free()
            if lengths.get(c, 0.0) >= LONG_TEXT
            and bool((frame[c].groupby(ctx).nunique(dropna=True) <= 1).all())
        ]
        if texts:
            hit = max(texts, key=lambda c: lengths[c])
            roles["context_text"] = hit
            why.append(
                f"'{hit}' is taken as the context text: long text, the same within a context"
            )

    if not complete(roles):
        return None, []
    mapping = PairwiseMapping(**{r: c for r, c in roles.items() if c is not None})
    # how the ids are made, when no id column gives them
    for side in ("first", "second"):
        role, col = mapping.side(side)
        if role == f"{side}_system" and side == "first":
            why.append(
                f"the candidate ids are the system names in '{mapping.first_system}' and "
                f"'{mapping.second_system}' (no candidate id column)"
            )
        elif role == f"{side}_text" and side == "first":
            why.append(
                "the candidate ids are made from a short hash of the texts ('text-…'): no id "
                "or system column"
            )
    if mapping.context_id is None and mapping.context_text is not None:
        why.append(
            f"the context ids are made from a short hash of '{mapping.context_text}' "
            "('ctx-…'): no context id column"
        )
    return mapping, [describe_pairwise(mapping), *why]


def guess_pairwise_mapping(columns, frame=None) -> PairwiseMapping | None:
    """A :class:`PairwiseMapping` guessed from the headers (and the cells), or None.

    Parameters
    ----------
    columns : iterable
        The file's headers.
    frame : pandas.DataFrame, optional
        The file's cells: with them, roles no header names are read from the values
        (:func:`guess_pairwise`).

    Returns
    -------
    PairwiseMapping or None
        Each role's column found by its aliases (``first``/``first_id``...,
        ``model_a``/``model_1``/``generator_1`` (systems), ``output_1``/``response_a``/
        ``answer_a`` (texts), ``verdict``/``winner``/``preference``/``score`` (judge),
        ``label``/``gold``/``human_verdict`` (human), ``p_first``/``probability``...,
        ``question_id``/``uid``/``context``..., ``instruction``/``prompt``/``input``/``turns``
        (context text), ``judge``, ``weight``, ``game``/``sample``...); None without a
        candidate on each side, or without a verdict, probability or human verdict column.
    """
    if frame is not None:
        return guess_pairwise(frame)[0]
    roles = roles_by_name(columns)
    if not complete(roles):
        return None
    return PairwiseMapping(**{r: c for r, c in roles.items() if c is not None})

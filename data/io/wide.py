"""The wide layout: one row per candidate (or per candidate and annotator), a column per
attribute, turned into contexts + candidates + human_scores with a :class:`WideMapping`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from data.coerce import coerce_float_columns, outside, to_str_series
from data.io.columns import id_column, number_column, resolve_column, resolve_columns
from data.problems import Problems, row_label
from data.schema import TABLE_NAMES, Dataset, empty_table
from data.validate import report_duplicates, validate_dataset

_CONTEXT_ALIASES = (
    "context_id",
    "context",
    "doc_id",
    "document_id",
    "item_id",
    "prompt_id",
    "story_id",
    "question_id",
    "instance_id",
    "example_id",
    "doc",
)
_CANDIDATE_ALIASES = ("candidate_id", "candidate", "response_id", "output_id")
_SYSTEM_ALIASES = ("system", "system_id", "model", "model_id", "model_name", "sys")
_CONTEXT_TEXT_ALIASES = ("context_text", "source_text", "document_text", "source", "document")
_CANDIDATE_TEXT_ALIASES = ("candidate_text", "text", "output", "response", "summary")
_ANNOTATOR_ALIASES = ("annotator", "annotator_id", "rater", "worker", "worker_id")


@dataclass(frozen=True)
class WideMapping:
    """Columns of a wide table: one row per candidate (or per candidate and annotator).

    Parameters
    ----------
    context_id, candidate_id : str
        Columns holding the ids.
    system, context_text, candidate_text : str, optional
        Columns with the system name, the context text and the candidate text.
    attributes : mapping of column to attribute, or to (attribute, annotator)
        Score columns. A plain attribute name takes the annotator from the ``annotator``
        column (or ``default_annotator``); a pair names the annotator of that column (e.g.
        ``{"coh_a1": ("coherence", "a1"), "coh_a2": ("coherence", "a2")}``).
    annotator : str, optional
        Column holding the annotator of each row (one row per candidate and annotator).
    default_annotator : str
        Annotator name when neither a column nor a pair names one.
    """

    context_id: str
    candidate_id: str
    system: str | None = None
    context_text: str | None = None
    candidate_text: str | None = None
    attributes: Mapping[str, str | tuple[str, str]] = field(default_factory=dict)
    annotator: str | None = None
    default_annotator: str = "human"


#: Role (a field of WideMapping) -> its aliases, most specific first.
WIDE_ROLES = {
    "context_id": _CONTEXT_ALIASES,
    "candidate_id": _CANDIDATE_ALIASES,
    "system": _SYSTEM_ALIASES,
    "context_text": _CONTEXT_TEXT_ALIASES,
    "candidate_text": _CANDIDATE_TEXT_ALIASES,
    "annotator": _ANNOTATOR_ALIASES,
}


def wide_to_dataset(
    frame: pd.DataFrame,
    mapping: WideMapping,
    *,
    name: str = "upload",
    source: str = "wide table",
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> Dataset:
    """Turn a wide table into contexts + candidates + human_scores.

    Rows are checked in the wide table itself, so messages name its rows and columns.

    Parameters
    ----------
    frame : pandas.DataFrame
        The wide table as read.
    mapping : WideMapping
        Which column holds what.
    name : str
        Name of the Dataset returned.
    source : str
        The file, for messages.
    scales : mapping of attribute to (low, high), optional
        Human score ranges, checked and stored in the Dataset.

    Returns
    -------
    Dataset
        Validated. Candidates in order of first appearance; the contexts table filled only
        when ``mapping.context_text`` is given; candidate texts default to ``""``; one
        human score per non-empty score cell, in file order (empty cells are skipped: not
        every annotator scores every attribute).

    Raises
    ------
    DataError
        Mapped column missing, no attribute mapped, two columns mapped to the same attribute
        and annotator, empty id, score that is not a number or is outside ``scales``, the
        same candidate (and annotator) on two rows.
    """
    problems = Problems()
    frame = frame.reset_index(drop=True)
    cols = resolve_columns(frame, mapping, WIDE_ROLES, source, problems)
    attr_cols = {}
    for col, target in mapping.attributes.items():
        found = resolve_column(frame, col, "attribute", source, problems)
        if found is not None:
            attr_cols[found] = target
    if not mapping.attributes:
        problems.add(
            f"{source}: the mapping names no attribute column; map at least one score column "
            "to an attribute"
        )
    by_target: dict = {}
    for col, target in attr_cols.items():
        key = (str(target), None) if isinstance(target, str) else tuple(map(str, target))
        by_target.setdefault(key, []).append(col)
    for (attribute, annotator), same in by_target.items():
        if len(same) > 1:
            problems.add(
                f"{source}, columns {' and '.join(repr(str(c)) for c in same)}: all hold the "
                f"scores of attribute '{attribute}'"
                + (f" by annotator '{annotator}'" if annotator else "")
                + ", so each candidate would be scored twice; keep one column or map them to "
                "different attributes or annotators"
            )
    problems.raise_if_any(source)

    ids = {
        role: id_column(frame, cols[role], source, problems)
        for role in ("context_id", "candidate_id", "annotator")
        if role in cols
    }
    scales = dict(scales or {})
    n_rows = len(frame)
    score_cols, attr_names, annotator_names = [], [], []
    coerced = coerce_float_columns(frame, list(attr_cols))
    for col, target in attr_cols.items():
        attribute, annotator = (target, None) if isinstance(target, str) else target
        vals = number_column(
            frame,
            col,
            source,
            problems,
            "write a number such as 4 or 3.5, or leave the cell empty",
            coerced[col],
        )
        if str(attribute) in scales:
            lo, hi = scales[str(attribute)]
            problems.add_rows(
                np.flatnonzero(outside(vals, lo, hi)),
                lambda p, col=col, attribute=attribute, lo=lo, hi=hi, vals=vals: (
                    f"{source}, {row_label(p)}, column '{col}': {vals[p]:g} is outside the "
                    f"scale of '{attribute}' ({lo:g} to {hi:g}); fix the score or state the "
                    "right scale"
                ),
            )
        score_cols.append(vals)
        attr_names.append(str(attribute))
        annotator_names.append(annotator)
    problems.raise_if_any(source)

    key_cols = ["context_id", "candidate_id"] + (["annotator"] if "annotator" in ids else [])
    keys = pd.DataFrame({k: ids[k] for k in key_cols})
    dup = keys.duplicated(keep=False).to_numpy()
    if dup.any():
        shown_cols = [cols[k] for k in key_cols]
        report_duplicates(
            keys.set_axis(shown_cols, axis=1), shown_cols, dup, source, problems, "row key"
        )
        raise problems.error(source)

    ctx_ids, cand_ids = ids["context_id"], ids["candidate_id"]
    first_of_candidate = ~keys[["context_id", "candidate_id"]].duplicated().to_numpy()
    cand = pd.DataFrame(
        {
            "context_id": ctx_ids[first_of_candidate],
            "candidate_id": cand_ids[first_of_candidate],
            "system": (
                to_str_series(frame[cols["system"]])[first_of_candidate]
                if "system" in cols
                else np.nan
            ),
            "text": (
                to_str_series(frame[cols["candidate_text"]])[first_of_candidate]
                if "candidate_text" in cols
                else ""
            ),
        }
    )
    contexts = empty_table("contexts")
    if "context_text" in cols:
        first_of_context = ~ctx_ids.duplicated().to_numpy()
        contexts = pd.DataFrame(
            {
                "context_id": ctx_ids[first_of_context],
                "text": to_str_series(frame[cols["context_text"]])[first_of_context],
            }
        )

    values = np.column_stack(score_cols) if score_cols else np.empty((n_rows, 0))
    rows, which = np.nonzero(np.isfinite(values))  # row-major: file order
    row_annotator = (
        ids["annotator"].to_numpy()[rows]
        if "annotator" in ids
        else np.full(len(rows), str(mapping.default_annotator), dtype=object)
    )
    col_annotator = np.array(annotator_names, dtype=object)[which]
    annotator = np.where(pd.isna(col_annotator), row_annotator, col_annotator)
    human = pd.DataFrame(
        {
            "context_id": ctx_ids.to_numpy()[rows],
            "candidate_id": cand_ids.to_numpy()[rows],
            "attribute": np.array(attr_names, dtype=object)[which],
            "annotator": annotator,
            "score": values[rows, which],
        }
    )
    ds = Dataset(
        name=name,
        contexts=contexts,
        candidates=cand,
        human_scores=human,
        scales={k: tuple(v) for k, v in scales.items()},
        source=source,
    )
    return validate_dataset(ds, sources={t: source for t in TABLE_NAMES})

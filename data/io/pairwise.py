"""The pairwise-verdict layout: context, first, second and a verdict (A/B/tie, 1/2/0,
first/second/tie) and/or a probability, turned into the comparisons table with a
:class:`PairwiseMapping`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.coerce import coerce_int, outside, to_str_series
from data.io.columns import alias_conflicts, find_alias, id_column, number_column, resolve_columns
from data.io.notes import grouped, named
from data.problems import Problems, row_label
from data.schema import VERDICT_P_FIRST, DataError
from data.validate import validate_table

_FIRST_ALIASES = ("first_id", "first", "a", "candidate_a", "first_candidate", "model_a", "system_a")
_SECOND_ALIASES = (
    "second_id",
    "second",
    "b",
    "candidate_b",
    "second_candidate",
    "model_b",
    "system_b",
)
_VERDICT_ALIASES = ("verdict", "winner", "label", "choice", "preference")
_PROB_ALIASES = ("p_first", "probability", "prob", "p", "p_a", "prob_a")
_PAIR_CONTEXT_ALIASES = (
    "context_id",
    "context",
    "question_id",
    "prompt_id",
    "doc_id",
    "document_id",
    "item_id",
    "story_id",
    "instance_id",
    "example_id",
)

#: Verdict spellings of the pairwise-verdict format (compared case-insensitively).
VERDICT_SPELLINGS = {
    "a": "A",
    "1": "A",
    "1.0": "A",
    "first": "A",
    "b": "B",
    "2": "B",
    "2.0": "B",
    "second": "B",
    "tie": "tie",
    "0": "tie",
    "0.0": "tie",
    "draw": "tie",
    "equal": "tie",
}


@dataclass(frozen=True)
class PairwiseMapping:
    """Columns of a pairwise-verdict table: one row per judged ordered pair (per sample).

    ``first`` was shown first (slot A). At least one of ``verdict`` and ``probability``
    must be given.

    Parameters
    ----------
    first, second : str
        Columns holding the ids of the candidate shown first and second.
    verdict : str, optional
        Column of verdicts (A/B/tie, 1/2/0, first/second/tie: :data:`VERDICT_SPELLINGS`);
        with only a verdict, p_first is 1 / 0 / 0.5.
    probability : str, optional
        Column of P(first is better), between 0 and 1.
    context_id, attribute, judge : str, optional
        Columns of the context, attribute and judge; without one, every row takes the
        default below.
    sample : str, optional
        Column numbering repeated answers; without it, repeated rows of the same pair become
        samples 0, 1, 2, ... in file order.
    raw : str, optional
        Column of the judge's raw answer.
    default_context, default_attribute, default_judge : str
        Values used when the column is not given.
    """

    first: str
    second: str
    verdict: str | None = None
    probability: str | None = None
    context_id: str | None = None
    attribute: str | None = None
    judge: str | None = None
    sample: str | None = None
    raw: str | None = None
    default_context: str = "all"
    default_attribute: str = "overall"
    default_judge: str = "uploaded"


#: Role (a column field of PairwiseMapping) -> its aliases, most specific first.
PAIR_ROLES = {
    "first": _FIRST_ALIASES,
    "second": _SECOND_ALIASES,
    "verdict": _VERDICT_ALIASES,
    "probability": _PROB_ALIASES,
    "context_id": _PAIR_CONTEXT_ALIASES,
    "attribute": ("attribute", "aspect", "criterion"),
    "judge": ("judge", "evaluator"),
    "sample": ("sample", "sample_id"),
    "raw": ("raw", "raw_output", "output_text"),
}


def guess_pairwise_mapping(columns) -> PairwiseMapping | None:
    """A :class:`PairwiseMapping` guessed from the headers, or None.

    Parameters
    ----------
    columns : iterable
        The file's headers.

    Returns
    -------
    PairwiseMapping or None
        Each role's column found by its aliases (``first``/``model_a``/``a``...,
        ``second``/``model_b``..., ``verdict``/``winner``..., ``p_first``/``probability``...,
        ``context``...); None without a first and a second column, or without a verdict
        and a probability column.
    """
    cols = list(columns)
    found = {}
    for role, aliases in PAIR_ROLES.items():
        found[role] = find_alias(cols, aliases, taken=(found.get("first"),))
    if found["first"] is None or found["second"] is None:
        return None
    if found["verdict"] is None and found["probability"] is None:
        return None
    return PairwiseMapping(**found)


def pairwise_to_comparisons(
    frame: pd.DataFrame,
    mapping: PairwiseMapping | None = None,
    *,
    source: str = "pairwise table",
    notes: list[str] | None = None,
) -> pd.DataFrame:
    """Turn a pairwise-verdict table into the canonical comparisons table.

    Parameters
    ----------
    frame : pandas.DataFrame
        The pairwise-verdict table as read.
    mapping : PairwiseMapping, optional
        Which column holds what; guessed from the headers (:func:`guess_pairwise_mapping`)
        when omitted, after refusing two headers that could play the same role.
    source : str
        The file, for messages.
    notes : list of str, optional
        Given, a verdict that is not understood does not refuse the file: its row becomes
        an unparsed comparison (p_first NaN, verdict missing, the text kept in ``raw``) and
        the list gets what the user should know (data.io.notes): how many verdicts were not
        understood, one line per distinct verdict with its rows ("verdict 'garbage' not
        understood: rows 19–24"), and the contexts left with no usable verdict. Without
        it (the strict reading), such a verdict is a problem that refuses the file.

    Returns
    -------
    pandas.DataFrame
        The canonical comparisons table (validated). Rows map one to one, in order, so
        messages name the rows of ``frame``. ``verdict`` is canonical (A/B/tie, NaN when
        empty); ``p_first`` is the probability column, or 1 / 0 / 0.5 from the verdict;
        ``raw`` is the raw column, or the verdict as written when there is none.

    Raises
    ------
    DataError
        No usable columns, empty ids, a verdict not understood (without ``notes``), a
        probability that is not a number or outside [0, 1], a sample that is not a whole
        number, a candidate compared with itself.
    """
    frame = frame.reset_index(drop=True)
    if mapping is None:
        alias_conflicts(frame.columns, PAIR_ROLES, source)
        mapping = guess_pairwise_mapping(frame.columns)
        if mapping is None:
            raise DataError(
                f"{source}: not a pairwise-verdict table; it needs columns for the first and "
                "second candidate (first, second) and a verdict (A/B/tie) or a probability "
                f"(p_first); columns found: {', '.join(map(str, frame.columns))}"
            )
    if mapping.verdict is None and mapping.probability is None:
        raise DataError(
            f"{source}: the mapping needs a verdict column, a probability column or both"
        )
    problems = Problems()
    cols = resolve_columns(frame, mapping, PAIR_ROLES, source, problems)
    problems.raise_if_any(source)
    n = len(frame)

    def ids(role, default):
        if role not in cols:
            return pd.Series([str(default)] * n, dtype="str")
        return id_column(frame, cols[role], source, problems)

    first = ids("first", None)
    second = ids("second", None)
    context = ids("context_id", mapping.default_context)
    attribute = ids("attribute", mapping.default_attribute)
    judge = ids("judge", mapping.default_judge)

    same = np.flatnonzero(((first == second) & first.notna()).to_numpy())
    problems.add_rows(
        same,
        lambda p: (
            f"{source}, {row_label(p)}, column '{cols['second']}': candidate {first.iloc[p]!r} "
            "is compared with itself; a comparison needs two different candidates"
        ),
    )

    verdict = pd.Series([np.nan] * n, dtype="str")
    unparsed = np.zeros(n, dtype=bool)
    verdict_text = None
    if "verdict" in cols:
        verdict_text = to_str_series(frame[cols["verdict"]])
        text = verdict_text.str.strip()
        missing = (text.isna() | (text == "")).to_numpy()
        verdict = text.str.lower().map(VERDICT_SPELLINGS).astype("str")
        unparsed = verdict.isna().to_numpy() & ~missing
        if notes is not None and unparsed.any():
            bad = np.flatnonzero(unparsed)
            notes.append(
                f"{source}: {len(bad)} of {n} verdict(s) in column '{cols['verdict']}' not "
                "understood; kept as unparsed comparisons (no p_first, the text in 'raw'). "
                "Verdicts are A / B / tie, 1 / 2 / 0 or first / second / tie"
            )
            notes.extend(
                grouped(
                    [f"verdict {text.iloc[p]!r} not understood" for p in bad],
                    bad,
                )
            )
        elif notes is None:
            problems.add_rows(
                np.flatnonzero(unparsed),
                lambda p: (
                    f"{source}, {row_label(p)}, column '{cols['verdict']}': verdict "
                    f"{frame[cols['verdict']].iloc[p]!r} is not understood; write A / B / tie "
                    "(or 1 / 2 / 0, or first / second / tie) or leave the cell empty"
                ),
            )
    if "probability" in cols:
        p_first = number_column(
            frame,
            cols["probability"],
            source,
            problems,
            "write a probability between 0 and 1 or leave the cell empty",
        )
        problems.add_rows(
            np.flatnonzero(outside(p_first, 0, 1)),
            lambda p: (
                f"{source}, {row_label(p)}, column '{cols['probability']}': {p_first[p]:g} is "
                "outside [0, 1]; the probability that the first candidate is better must lie "
                "between 0 and 1"
            ),
        )
    else:
        p_first = verdict.map(VERDICT_P_FIRST).to_numpy(dtype=np.float64, na_value=np.nan)

    if "sample" in cols:
        sample_series, bad = coerce_int(frame[cols["sample"]])
        problems.add_rows(
            bad,
            lambda p: (
                f"{source}, {row_label(p)}, column '{cols['sample']}': "
                f"{frame[cols['sample']].iloc[p]!r} is not a whole number"
            ),
        )
        sample = sample_series.to_numpy()
    problems.raise_if_any(source)
    if "sample" not in cols:
        keys = pd.DataFrame({"c": context, "a": attribute, "j": judge, "f": first, "s": second})
        sample = keys.groupby(list(keys.columns), sort=False).cumcount().to_numpy()
    if "raw" in cols:
        raw = to_str_series(frame[cols["raw"]]).fillna("")
    elif verdict_text is not None:
        raw = verdict_text.fillna("")  # the verdict as written: an unparsed one stays readable
    else:
        raw = ""
    out = pd.DataFrame(
        {
            "context_id": context,
            "attribute": attribute,
            "judge": judge,
            "first_id": first,
            "second_id": second,
            "p_first": p_first,
            "verdict": verdict,
            "sample": sample,
            "raw": raw,
        }
    )
    out = validate_table(out, "comparisons", source)
    if notes is not None:
        usable = out["p_first"].notna().groupby(out["context_id"], sort=False).any()
        empty = usable.index[~usable.to_numpy()]
        if len(empty):
            notes.append(
                f"{source}: {len(empty)} of {len(usable)} context(s) have no usable verdict "
                f"and cannot be ranked: {named(empty, 'contexts')}"
            )
    return out

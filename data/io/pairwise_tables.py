"""A pairwise-verdict table turned into contexts, candidates and comparisons.

:func:`pairwise_to_dataset` reads every role of a :class:`~data.io.pairwise.PairwiseMapping`:
contexts from the context texts, candidates (ids, systems, texts) from both sides of every
row, one judge comparison per row (verdict read with the vocabulary, the strength policy
applied, the row's weight) and one human comparison per row with a human verdict.
:func:`pairwise_to_comparisons` gives the comparisons alone.

Rows are checked in the file itself, so messages name its rows and columns. What does not
refuse the file (with ``notes``): a verdict not understood (kept unparsed: p_first NaN, the
text in ``raw``), a row comparing a candidate with itself (the baseline against itself:
skipped and counted).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from data.coerce import coerce_int, coerce_weight, outside, to_str_series
from data.io.columns import (
    alias_conflicts,
    id_column,
    number_column,
    resolve_columns,
)
from data.io.notes import grouped, named, row_ranges
from data.io.pairwise import PAIR_ROLES, ROLE_LABELS, PairwiseMapping
from data.io.pairwise_guess import guess_pairwise_mapping
from data.io.verdict_map import read_verdicts
from data.problems import Problems, row_label
from data.schema import HUMAN_JUDGE_PREFIX, TABLE_NAMES, DataError, Dataset
from data.validate import validate_dataset, validate_table

#: Roles whose columns a guess must not choose between silently (see
#: :func:`data.io.columns.alias_conflicts`).
CONFLICT_ROLES = (
    "first",
    "second",
    "first_system",
    "second_system",
    "verdict",
    "human_verdict",
    "probability",
    "context_id",
    "judge",
    "weight",
    "sample",
)

#: Characters of the hash in ids made from texts.
HASH_CHARS = 8


def text_id(text: str, prefix: str) -> str:
    """A short stable id for a text: ``prefix`` + the first :data:`HASH_CHARS` hex digits of
    its SHA-1 (the same text always gets the same id)."""
    return prefix + hashlib.sha1(str(text).encode("utf-8")).hexdigest()[:HASH_CHARS]


def _texts(frame, col) -> pd.Series:
    return to_str_series(frame[col]).fillna("")


def _hash_ids(texts: pd.Series, prefix: str) -> pd.Series:
    cache: dict[str, str] = {}
    return pd.Series(
        [cache.setdefault(t, text_id(t, prefix)) if t not in cache else cache[t] for t in texts],
        dtype="str",
    )


def _conflicting(keys: pd.DataFrame, values: pd.Series) -> list[tuple[tuple, np.ndarray]]:
    """Keys whose non-empty values differ, each with the positions of its rows."""
    frame = keys.assign(_v=values.to_numpy())
    frame = frame[frame["_v"].notna() & (frame["_v"] != "")]
    if not len(frame):
        return []
    cols = list(keys.columns)
    n = frame.groupby(cols, sort=False)["_v"].nunique()
    bad = n[n > 1]
    out = []
    for key in bad.index:
        key = key if isinstance(key, tuple) else (key,)
        hit = np.ones(len(frame), dtype=bool)
        for c, v in zip(cols, key, strict=True):
            hit &= (frame[c] == v).to_numpy()
        out.append((key, frame.index.to_numpy()[hit]))
    return out


def _aliases(role: str) -> tuple[str, ...]:
    return PAIR_ROLES[role]


def _shown(value) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _both(values: dict, n: int, missing) -> pd.Series:
    """The first side's values then the second's (``missing`` where a side has none)."""
    dtype = "str"
    return pd.concat(
        [
            values[s] if values[s] is not None else pd.Series([missing] * n, dtype=dtype)
            for s in ("first", "second")
        ],
        ignore_index=True,
    )


def _first_of_each(rows: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """One row per ``key`` in order of first appearance (``_pos``), each other column its
    first non-empty value."""
    rows = rows.sort_values("_pos", kind="stable")
    blank = {c: rows[c].where(rows[c] != "", np.nan) for c in rows.columns if c not in key}
    out = rows[key].assign(**blank).groupby(key, sort=False).first().reset_index()
    out = out.sort_values("_pos", kind="stable").drop(columns="_pos").reset_index(drop=True)
    if "text" in out.columns:
        out["text"] = out["text"].fillna("")
    return out


def _note_unparsed(notes: list[str], mask, head: Callable[[int], str], what, texts, where):
    """Where ``mask`` (the rows whose ``texts`` were not understood) has any row: the note
    ``head(number of rows)``, then those rows grouped by text ("<what> 'text' not
    understood"), added to ``notes``."""
    if not mask.any():
        return
    bad = np.flatnonzero(mask)
    notes.append(head(len(bad)))
    notes.extend(grouped([f"{what} {texts.iloc[p]!r} not understood" for p in bad], bad, where))


def pairwise_to_dataset(
    frame: pd.DataFrame,
    mapping: PairwiseMapping | None = None,
    *,
    name: str = "upload",
    source: str = "pairwise table",
    notes: list[str] | None = None,
    scales=None,
    where: Callable[[Sequence[int]], str] = row_ranges,
) -> Dataset:
    """Turn a pairwise-verdict table into contexts, candidates and comparisons.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read.
    mapping : PairwiseMapping, optional
        Which column holds what; guessed from the headers and cells
        (:func:`data.io.pairwise_guess.guess_pairwise`) when omitted, after refusing two
        headers that could play the same role.
    name : str
        The Dataset's name.
    source : str
        The file, for messages.
    notes : list of str, optional
        Given, what does not refuse the file is reported here (data.io.notes): verdicts not
        understood (one line per distinct value with its rows: "verdict 'garbage' not
        understood: rows 19–24"), rows comparing a candidate with itself (skipped), contexts
        left without a usable verdict. Without it (the strict reading), such a verdict or
        row is a problem that refuses the file.
    scales : mapping, optional
        Stored in the Dataset.
    where : callable, optional
        0-based rows of ``frame`` -> where they are, for notes and messages (default
        :func:`data.io.notes.row_ranges`, "rows 19–24"; the importers of published formats
        name file lines instead).

    Returns
    -------
    Dataset
        Validated. ``contexts``: one row per context with a text (when ``context_text`` is
        mapped). ``candidates``: every candidate either side names, in order of first
        appearance, with its system and text (``""`` when none is mapped). ``comparisons``:
        the judge's comparisons in file order (rows skipped as self-comparisons left out),
        then the human verdicts (judge ``human:<annotator>``). Columns ``grade`` (-2..+2,
        NaN when the verdict has none) and ``weight`` (the row's weight times the strength
        policy's) are filled.

    Raises
    ------
    DataError
        No usable columns; empty ids; a verdict not understood (strict reading only); a
        probability that is not a number or outside [0, 1]; a weight that is not a
        positive number; a sample that is not a whole number; one candidate id given two
        different systems or texts, or one context two texts (naming the rows); a
        candidate compared with itself (strict reading only).
    """
    frame = frame.reset_index(drop=True)
    if mapping is None:
        alias_conflicts(frame.columns, {r: _aliases(r) for r in CONFLICT_ROLES}, source)
        mapping = guess_pairwise_mapping(frame.columns, frame)
        if mapping is None:
            raise DataError(
                f"{source}: not a pairwise-verdict table; it needs, for each of the two "
                "candidates, an id, a system or a text column (first / second, model_a / "
                "model_b, output_1 / output_2) and a verdict, probability or human verdict "
                f"column (verdict, winner, p_first, label); columns found: "
                f"{', '.join(map(str, frame.columns))}"
            )
    first_side, second_side = mapping.side("first"), mapping.side("second")
    if first_side is None or second_side is None:
        raise DataError(
            f"{source}: the mapping needs, for each candidate, an id, a system or a text column"
        )
    if mapping.verdict is None and mapping.probability is None and mapping.human_verdict is None:
        raise DataError(
            f"{source}: the mapping needs a verdict, a probability or a human verdict column"
        )
    problems = Problems()
    cols = resolve_columns(frame, mapping, ROLE_LABELS, source, problems)
    problems.raise_if_any(source)
    n = len(frame)
    notes_given = notes is not None
    notes = notes if notes is not None else []

    def ids(role, default):
        if role not in cols:
            return pd.Series([str(default)] * n, dtype="str")
        return id_column(frame, cols[role], source, problems)

    # ---- contexts
    if "context_id" in cols:
        context = ids("context_id", None)
    elif "context_text" in cols:
        context = _hash_ids(_texts(frame, cols["context_text"]), "ctx-")
    else:
        context = ids("context_id", mapping.default_context)
    attribute = ids("attribute", mapping.default_attribute)
    judge = ids("judge", mapping.default_judge)

    # ---- candidates: ids from the id, else system, else text column
    side_ids, side_system, side_text = {}, {}, {}
    for side in ("first", "second"):
        role, _col = mapping.side(side)
        if role == side:
            side_ids[side] = ids(side, None)
        elif role == f"{side}_system":
            side_ids[side] = ids(role, None)
        else:
            side_ids[side] = _hash_ids(_texts(frame, cols[role]), "text-")
        sys_role = f"{side}_system"
        side_system[side] = (
            to_str_series(frame[cols[sys_role]]).str.strip() if sys_role in cols else None
        )
        txt_role = f"{side}_text"
        side_text[side] = _texts(frame, cols[txt_role]) if txt_role in cols else None
    first, second = side_ids["first"], side_ids["second"]
    problems.raise_if_any(source)

    # ---- weights
    row_weight = np.ones(n)
    if "weight" in cols:
        wcol = cols["weight"]
        num, bad = coerce_weight(frame[wcol])  # an empty cell is the default 1
        row_weight = num.to_numpy(dtype=np.float64)
        problems.add_rows(
            bad,
            lambda p: (
                f"{source}, {row_label(p)}, column '{wcol}': weight "
                f"{_shown(frame[wcol].iloc[p])} is not a positive number; a weight counts the "
                "row as that many games (Arena-Hard counts a strong verdict as 3): write a "
                "number above 0, leave the cell empty for 1, or leave the weight column out "
                "to count every row once"
            ),
        )

    # ---- the judge's verdicts, read with the vocabulary and the strength policy
    grade = np.full(n, np.nan)
    p_first = np.full(n, np.nan)
    policy_weight = np.ones(n)
    verdict = pd.Series([np.nan] * n, dtype="str")
    unparsed = np.zeros(n, dtype=bool)
    verdict_text = None
    if "verdict" in cols:
        read, unparsed, verdict_text = read_verdicts(
            frame[cols["verdict"]], mapping.strength, mapping.verdict_map
        )
        grade = read["grade"].to_numpy(dtype=np.float64)
        p_first = read["p_first"].to_numpy(dtype=np.float64)
        policy_weight = read["weight"].to_numpy(dtype=np.float64)
        verdict = read["verdict"].astype("str")
        if not notes_given:
            problems.add_rows(
                np.flatnonzero(unparsed),
                lambda p: (
                    f"{source}, {row_label(p)}, column '{cols['verdict']}': verdict "
                    f"{frame[cols['verdict']].iloc[p]!r} is not understood; write A / B / tie "
                    "(or A>>B ... B>>A, 1 / 2 / 0, first / second / tie), give its reading in "
                    "the verdict map, or leave the cell empty"
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
        policy_weight = np.ones(n)
    weight = row_weight * policy_weight

    # ---- samples
    sample = None
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

    # ---- candidates, systems and texts that contradict themselves
    cand_keys = pd.DataFrame(
        {
            "context_id": pd.concat([context, context], ignore_index=True),
            "candidate_id": pd.concat([first, second], ignore_index=True),
        }
    )
    rows_of = np.concatenate([np.arange(n), np.arange(n)])
    for what, values in (("system", side_system), ("text", side_text)):
        if values["first"] is None and values["second"] is None:
            continue
        both = pd.concat(
            [
                values[s] if values[s] is not None else pd.Series([np.nan] * n, dtype="str")
                for s in ("first", "second")
            ],
            ignore_index=True,
        )
        for (ctx, cand), pos in _conflicting(cand_keys, both)[:20]:
            shown = sorted(set(both.iloc[pos]))
            where = "; ".join(
                f"{_shown(v)} on {where(rows_of[pos[both.iloc[pos].to_numpy() == v]])}"
                for v in shown[:3]
            )
            problems.add(
                f"{source}, candidate {cand!r} of context {ctx!r}: {len(shown)} different "
                f"{what}s ({where}); one candidate id has one {what}: fix the {what}, or give "
                "the candidates their own ids (an id column per side)"
            )
    context_texts = None
    if "context_text" in cols:
        context_texts = _texts(frame, cols["context_text"])
        for (ctx,), pos in _conflicting(pd.DataFrame({"c": context}), context_texts)[:20]:
            problems.add(
                f"{source}, context {ctx!r}, {where(pos)}: the context text in column "
                f"'{cols['context_text']}' differs between these rows; one context has one "
                "text: fix the text, or give the rows different context ids"
            )
    problems.raise_if_any(source)

    # ---- self-comparisons: skipped (the baseline against itself), or refused when strict
    same = ((first == second) & first.notna()).to_numpy()
    if same.any() and not notes_given:
        problems.add_rows(
            np.flatnonzero(same),
            lambda p: (
                f"{source}, {row_label(p)}, column '{cols[second_side[0]]}': candidate "
                f"{first.iloc[p]!r} is compared with itself; a comparison needs two different "
                "candidates"
            ),
        )
        problems.raise_if_any(source)
    elif same.any():
        shown = named(pd.unique(first[same]), "candidates")
        notes.append(
            f"{source}: {int(same.sum())} of {n} row(s) compare a candidate with itself "
            f"({shown}: first = second, e.g. the baseline against itself) and are skipped: "
            f"{where(np.flatnonzero(same))}"
        )
    keep = ~same

    # ---- unparsed verdicts: kept, counted and grouped
    if notes_given:
        _note_unparsed(
            notes,
            unparsed & keep,
            lambda k: (
                f"{source}: {k} of {n} verdict(s) in column '{cols['verdict']}' not "
                "understood; kept as unparsed comparisons (no p_first, the text in 'raw'). "
                "Change their reading in the verdict map, or see data.parsing for the forms read"
            ),
            "verdict",
            verdict_text,
            where,
        )

    # ---- the judge's comparisons
    tables = {}
    if "verdict" in cols or "probability" in cols:
        if sample is None:
            keys = pd.DataFrame({"c": context, "a": attribute, "j": judge, "f": first, "s": second})
            judge_sample = keys[keep].groupby(list(keys.columns), sort=False).cumcount()
            judge_sample = judge_sample.reindex(range(n), fill_value=0).to_numpy()
        else:
            judge_sample = sample
        if "raw" in cols:
            raw = to_str_series(frame[cols["raw"]]).fillna("")
        elif "verdict" in cols:
            raw = to_str_series(frame[cols["verdict"]]).fillna("")
        else:
            raw = pd.Series([""] * n, dtype="str")
        judged = pd.DataFrame(
            {
                "context_id": context,
                "attribute": attribute,
                "judge": judge,
                "first_id": first,
                "second_id": second,
                "p_first": p_first,
                "verdict": verdict,
                "sample": judge_sample,
                "raw": raw,
                "grade": grade,
                "weight": weight,
            }
        )[keep]
    else:
        judged = None

    # ---- the human verdicts
    human = None
    if "human_verdict" in cols:
        h_read, h_unparsed, h_text = read_verdicts(
            frame[cols["human_verdict"]], mapping.strength, mapping.verdict_map
        )
        present = ~h_read["missing"].to_numpy() & keep
        if notes_given:
            _note_unparsed(
                notes,
                h_unparsed & keep,
                lambda k: (
                    f"{source}: {k} human verdict(s) in column '{cols['human_verdict']}' "
                    "not understood; kept as unparsed comparisons. Change their reading in the "
                    "verdict map"
                ),
                "human verdict",
                h_text,
                where,
            )
        elif (h_unparsed & keep).any():
            problems.add_rows(
                np.flatnonzero(h_unparsed & keep),
                lambda p: (
                    f"{source}, {row_label(p)}, column '{cols['human_verdict']}': human verdict "
                    f"{frame[cols['human_verdict']].iloc[p]!r} is not understood"
                ),
            )
        hj = HUMAN_JUDGE_PREFIX + (str(mapping.annotator).strip() or "gold")
        human = pd.DataFrame(
            {
                "context_id": context,
                "attribute": attribute,
                "judge": hj,
                "first_id": first,
                "second_id": second,
                "p_first": h_read["p_first"].to_numpy(dtype=np.float64),
                "verdict": h_read["verdict"].astype("str"),
                "raw": h_text.fillna(""),
                "grade": h_read["grade"].to_numpy(dtype=np.float64),
                "weight": h_read["weight"].to_numpy(dtype=np.float64),
                "_value": h_text,
            }
        )[present]
        # the same gold label repeated on several rows (one per judge, say) counts once
        human = human.drop_duplicates(
            ["context_id", "attribute", "first_id", "second_id", "_value"]
        ).drop(columns="_value")
        human["sample"] = human.groupby(
            ["context_id", "attribute", "first_id", "second_id"], sort=False
        ).cumcount()
    problems.raise_if_any(source)

    parts = [t for t in (judged, human) if t is not None]
    comparisons = pd.concat(parts) if parts else None
    comparisons = validate_table(comparisons.reset_index(drop=True), "comparisons", source)
    comparisons.index = pd.RangeIndex(len(comparisons))
    tables["comparisons"] = comparisons

    # ---- candidates and contexts, in order of first appearance
    tables["candidates"] = _first_of_each(
        pd.DataFrame(
            {
                "context_id": cand_keys["context_id"],
                "candidate_id": cand_keys["candidate_id"],
                "system": _both(side_system, n, np.nan),
                "text": _both(side_text, n, ""),
                # a row's first candidate before its second
                "_pos": np.concatenate([2 * np.arange(n), 2 * np.arange(n) + 1]),
            }
        ),
        ["context_id", "candidate_id"],
    )
    if context_texts is not None:
        tables["contexts"] = _first_of_each(
            pd.DataFrame({"context_id": context, "text": context_texts, "_pos": np.arange(n)}),
            ["context_id"],
        )

    if notes_given:
        usable = comparisons["p_first"].notna().groupby(comparisons["context_id"], sort=False).any()
        empty = usable.index[~usable.to_numpy()]
        if len(empty):
            notes.append(
                f"{source}: {len(empty)} of {len(usable)} context(s) have no usable verdict "
                f"and cannot be ranked: {named(empty, 'contexts')}"
            )
    ds = Dataset(name=name, scales=dict(scales or {}), source=source, **tables)
    return validate_dataset(ds, sources={t: source for t in TABLE_NAMES})


def pairwise_to_comparisons(
    frame: pd.DataFrame,
    mapping: PairwiseMapping | None = None,
    *,
    source: str = "pairwise table",
    notes: list[str] | None = None,
) -> pd.DataFrame:
    """Turn a pairwise-verdict table into the canonical comparisons table.

    The comparisons of :func:`pairwise_to_dataset` (same parameters and checks): the judge's
    comparisons in file order (self-comparisons skipped when ``notes`` is given), then the
    human verdicts. ``verdict`` is canonical (A/B/tie, NaN when empty or not understood);
    ``p_first`` is the probability column, or the verdict's under the strength policy;
    ``grade`` and ``weight`` are filled; ``raw`` is the raw column, or the verdict as written.

    Parameters
    ----------
    frame : pandas.DataFrame
        The pairwise-verdict table as read.
    mapping : PairwiseMapping, optional
        Which column holds what; guessed when omitted.
    source : str
        The file, for messages.
    notes : list of str, optional
        Where what does not refuse the file is reported; without it, the strict reading.

    Returns
    -------
    pandas.DataFrame
        The canonical comparisons table (validated).
    """
    return pairwise_to_dataset(frame, mapping, source=source, notes=notes).comparisons

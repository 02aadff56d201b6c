"""AlpacaEval annotations (tatsu-lab/alpaca_eval), read as published.

File: ``results/<model>/<annotator>/annotations.json``, a JSON list with one record per
instruction: ``instruction``, ``output_1`` by ``generator_1`` (the reference, e.g.
``gpt4_1106_preview``), ``output_2`` by ``generator_2`` (the model evaluated),
``annotator``, ``preference``, and optionally ``dataset``, ``raw_completion``,
``price_per_example``, ``time_per_example``.

``preference`` (``annotators/pairwise_evaluator.py``, ``metrics/winrate.py``): 1 when
output_1 is preferred, 2 when output_2 is, 1.5 (or 0 in older files) a draw, and with the
weighted (logprob) annotators a number between 1 and 2 that is ``2 - P(output_1 better)``
(``completion_parsers.logprob_parser``); null when the annotator gave nothing usable. The
verdict vocabulary reads all of these (``data.parsing``).

Presentation order: AlpacaEval shows the two outputs in a random order and stores them back
as output_1 / output_2 (``RandomSwitchTwoColumnsProcessor``: the preference is switched back
with ``3 - x``), so ``first_id`` here is generator_1, not the output shown first; a record
that keeps ``is_switched_outputs`` is read in the order shown. ``raw_completion``, when
present, is in the order shown (its "m" may be output_2).

Read into: one context per instruction (id: a short hash of the text, ``ctx-…``; the text
kept), candidates named by their generators with their outputs, one comparison per record
(judge: the ``annotator``; ``raw``: ``raw_completion`` or the preference as written);
the baseline is generator_1 when every record has the same one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pandas as pd

from data.importers._common import (
    Fields,
    Imported,
    ImportOptions,
    as_id,
    base_name,
    flat_to_dataset,
    lines_where,
    read_records,
)
from data.io.verdict_map import verdict_table
from data.schema import DataError

FORMAT = "alpaca-eval"
TITLE = "AlpacaEval annotations"
_NEEDED = ("instruction", "output_1", "generator_1", "output_2", "generator_2", "preference")


def looks_like(record: dict) -> bool:
    """Whether a record is an AlpacaEval annotation."""
    return all(k in record for k in ("output_1", "output_2", "generator_1", "generator_2")) and (
        "preference" in record
    )


def _switched(preference):
    """AlpacaEval's own switch of a preference (``3 - x``; 0, a draw, stays 0)."""
    if isinstance(preference, int | float) and not isinstance(preference, bool):
        return preference if preference == 0 else 3 - preference
    return preference


def read(
    files: Mapping[str, bytes],
    companions: Mapping[str, bytes] | None = None,
    options: ImportOptions | None = None,
    *,
    name: str = "alpaca-eval",
    max_bytes: float | None = None,
) -> Imported:
    """AlpacaEval ``annotations.json`` files read into a Dataset.

    Parameters
    ----------
    files : mapping of str to bytes
        One or more annotations files (several models against the same reference share
        the contexts and the reference's candidates).
    companions : mapping, optional
        Not used (the records carry their texts); named in a note when given.
    options : ImportOptions, optional
        Strength policy and verdict map (AlpacaEval has no graded verdicts), judge for
        records without an ``annotator``.
    name, max_bytes
        The Dataset's name; each file's size limit (default: the upload limit).

    Returns
    -------
    Imported
        See the module docstring.

    Raises
    ------
    DataError
        A record without one of instruction, output_1, generator_1, output_2, generator_2,
        preference (or with a field of the wrong kind), naming the file, line and field;
        everything a pairwise upload checks.
    """
    options = options or ImportOptions()
    rows: list[dict] = []
    n_switched = 0
    for file_name, data in files.items():
        source = base_name(file_name)
        f = Fields(source, "AlpacaEval annotation")
        for rec in read_records(file_name, data, max_bytes=max_bytes):
            obj = rec[2]
            instruction = f.need(rec, "instruction", (str,), "the instruction (text)")
            out1 = f.need(rec, "output_1", (str,), "the first output (text)")
            out2 = f.need(rec, "output_2", (str,), "the second output (text)")
            gen1 = f.need(rec, "generator_1", (str, int), "the first output's generator")
            gen2 = f.need(rec, "generator_2", (str, int), "the second output's generator")
            if "preference" not in obj:
                f.bad(rec, "preference", "missing; an AlpacaEval annotation has a preference")
                continue
            pref = obj["preference"]
            if pref is not None and (
                isinstance(pref, bool) or not isinstance(pref, int | float | str)
            ):
                f.bad(rec, "preference", f"{pref!r} is not a number (1, 2, 1.5, or in 1..2)")
                continue
            if None in (instruction, out1, out2, gen1, gen2):
                continue
            gen1, gen2 = as_id(gen1), as_id(gen2)
            switched = bool(obj.get("is_switched_outputs", False))
            n_switched += switched
            first, second = (gen2, gen1) if switched else (gen1, gen2)
            t1, t2 = (out2, out1) if switched else (out1, out2)
            raw = obj.get("raw_completion")
            rows.append(
                {
                    "context_text": instruction,
                    "first_system": first,
                    "second_system": second,
                    "first_text": t1,
                    "second_text": t2,
                    "preference": _switched(pref) if switched else pref,
                    "judge": as_id(obj.get("annotator") or options.judge or "alpaca_eval"),
                    "raw": raw if isinstance(raw, str) else ("" if pref is None else str(pref)),
                    "_gen1": gen1,
                    "_file": source,
                    "_line": rec[1],
                }
            )
        f.raise_if_any()
    if not rows:
        raise DataError(f"{', '.join(map(base_name, files))}: no annotation records")
    flat = pd.DataFrame(rows)
    where = lines_where(flat["_file"].tolist(), flat["_line"].tolist())
    ds, read_notes = flat_to_dataset(flat, "preference", options, name=name, files=files)
    refs = Counter(flat["_gen1"])
    baseline = refs.most_common(1)[0][0] if len(refs) == 1 else None
    models = sorted(set(flat["first_system"]) | set(flat["second_system"]) - set(refs))
    notes = [
        f"Read as {TITLE}: {len(flat):,} annotation(s) of {len(models)} model(s) against "
        + (f"the reference '{baseline}'" if baseline else f"{len(refs)} references")
        + f", by {', '.join(repr(j) for j in pd.unique(flat['judge']))}",
        "AlpacaEval shows the two outputs in a random order and stores them back as output_1 "
        "/ output_2: first_id is generator_1 (the reference), not the output shown first, so "
        "these comparisons say nothing about position bias"
        + (
            f" ({n_switched} record(s) that keep is_switched_outputs are read as shown)"
            if n_switched
            else ""
        ),
        "The contexts are named by a short hash of the instruction (ctx-…), the candidates by "
        "their generators",
    ]
    n_null = int(flat["preference"].isna().sum())
    if n_null:
        notes.append(
            f"{n_null} annotation(s) have no preference (null): kept as unparsed comparisons — "
            f"{where(flat.index[flat['preference'].isna()])}"
        )
    if companions:
        notes.append(
            f"{', '.join(map(base_name, companions))}: not used; AlpacaEval annotations carry "
            "their texts"
        )
    return Imported(
        dataset=ds,
        format=FORMAT,
        title=TITLE,
        notes=notes + read_notes,
        baseline=baseline,
        verdicts=verdict_table({"preference": flat["preference"]}, options.verdict_map),
    )

"""Stored rows to canonical tables: the comparisons and ratings tables of a run, parsed from
the raw answers the run store keeps (so that a run can be read again with another rule)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from judge.store.rows import RunItem, StoredResult, error_code


def _no_answer_text(row: StoredResult) -> str:
    """What the raw column shows when there is no answer text (error kept visible)."""
    code = error_code(row.error) or "error"
    tag = code if row.status == "answer-error" else "error"
    return f"[{tag}] {row.error}"


def _answer_text(row: StoredResult) -> str | None:
    """The text of a sampled answer; None for a failure or an answer without text."""
    if row.raw is not None and row.kind == "generate" and row.error is None:
        return row.raw
    return None


#: (column, where its values come from, dtype): "item" the planned item, "settings" the run's
#: settings (one value for every row), "answer" what the reader made of the stored result
_COMPARISONS = (
    ("context_id", "item", object),
    ("attribute", "settings", object),
    ("judge", "settings", object),
    ("first_id", "item", object),
    ("second_id", "item", object),
    ("p_first", "answer", np.float64),
    ("verdict", "answer", object),
    ("sample", "item", np.int64),
    ("raw", "answer", object),
)
_RATINGS = (
    ("context_id", "item", object),
    ("candidate_id", "item", object),
    ("attribute", "settings", object),
    ("judge", "settings", object),
    ("prompt_id", "settings", object),
    ("sample", "item", np.int64),
    ("score", "answer", np.float64),
    ("raw", "answer", object),
)


def _table(
    items: Sequence[RunItem],
    rows: Mapping[str, StoredResult],
    settings: Mapping,
    layout,
    read: Callable[[StoredResult], dict],
) -> pd.DataFrame:
    """One row per item that has a stored result, in item order; columns as ``layout`` says,
    the answer columns from ``read(stored result)``."""
    done = [(it, rows[it.key]) for it in items if it.key in rows]
    answers = [read(row) for _, row in done]
    columns = {}
    for name, source, dtype in layout:
        if source == "item":
            values = [getattr(it, name) for it, _ in done]
        elif source == "settings":
            values = [settings[name]] * len(done)
        else:
            values = [answer[name] for answer in answers]
        if dtype is object:
            columns[name] = pd.Series(values, dtype=object)
        else:
            columns[name] = np.asarray(values, dtype=dtype)
    return pd.DataFrame(columns)


def comparisons_from_rows(
    items: Sequence[RunItem], rows: Mapping[str, StoredResult], settings: Mapping
) -> pd.DataFrame:
    """Canonical comparisons table from planned items and their stored results.

    ``settings``: ``judge``, ``attribute``, ``mode`` ("probs" or "samples"), ``labels``,
    ``tie_labels`` and optional ``aliases``. In probs mode p_first = P(A) + P(tie) / 2 over
    the normalised label probabilities, sample 0, verdict missing. In samples mode each sample
    is a row with p_first 1 (A), 0 (B), 0.5 (tie) or NaN (unparsed) and its verdict; the mean
    over a pair's samples (what ``data.arrays`` averages) is the share of A, ties half.
    Items without a stored result (a cancelled run) are left out; failed calls are rows with
    NaN p_first and the error in ``raw``.
    """
    from data.parsing import parse_verdict

    labels = list(settings.get("labels") or ("A", "B"))
    tie_labels = list(settings.get("tie_labels") or ())
    aliases = settings.get("aliases")
    mode = settings["mode"]

    def probs(row: StoredResult) -> dict:
        if not row.probs:
            return {"p_first": math.nan, "verdict": None, "raw": _no_answer_text(row)}
        p = float(row.probs.get(labels[0], 0.0))
        p += 0.5 * sum(float(row.probs.get(t, 0.0)) for t in tie_labels)
        return {"p_first": p, "verdict": None, "raw": None}

    def samples(row: StoredResult) -> dict:
        text = _answer_text(row)
        if text is None:
            return {"p_first": math.nan, "verdict": None, "raw": _no_answer_text(row)}
        verdict = parse_verdict(
            text, labels=labels[:2], tie_labels=tie_labels, aliases=aliases
        ).value
        p = {"A": 1.0, "B": 0.0, "tie": 0.5}.get(verdict, math.nan)
        return {"p_first": p, "verdict": verdict, "raw": text}

    readers = {"probs": probs, "samples": samples}
    if mode not in readers:
        raise ValueError(f"mode must be 'probs' or 'samples', got {mode!r}")
    return _table(items, rows, settings, _COMPARISONS, readers[mode])


def ratings_from_rows(
    items: Sequence[RunItem], rows: Mapping[str, StoredResult], settings: Mapping
) -> pd.DataFrame:
    """Canonical ratings table from planned items and their stored results.

    ``settings``: ``judge``, ``attribute``, ``prompt_id``, ``mode`` ("samples" or
    "expected"), ``scale`` and, for samples, ``parse_rule`` and optional ``drop``. Samples
    are parsed with ``data.parsing.parse_likert`` (NaN when unparsed, raw text kept);
    expected = sum over s of s * P(s) over the score tokens (G-Eval), sample 0.
    """
    from data.parsing import expected_score, parse_likert

    mode = settings["mode"]
    scale = tuple(settings["scale"])
    rule = settings.get("parse_rule") or "chiang_lee"
    drop = tuple(settings.get("drop") or ())

    def samples(row: StoredResult) -> dict:
        text = _answer_text(row)
        if text is None:
            return {"score": math.nan, "raw": _no_answer_text(row)}
        value = parse_likert(text, scale=scale, rule=rule, drop=drop).value
        return {"score": math.nan if value is None else float(value), "raw": text}

    def expected(row: StoredResult) -> dict:
        if not row.probs:
            return {"score": math.nan, "raw": _no_answer_text(row)}
        score = float(expected_score({float(k): v for k, v in row.probs.items()}))
        return {"score": score, "raw": json.dumps({k: round(v, 6) for k, v in row.probs.items()})}

    readers = {"samples": samples, "expected": expected}
    if mode not in readers:
        raise ValueError(f"mode must be 'samples' or 'expected', got {mode!r}")
    return _table(items, rows, settings, _RATINGS, readers[mode])


__all__ = ["comparisons_from_rows", "ratings_from_rows"]

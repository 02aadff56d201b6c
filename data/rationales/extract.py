"""The rationale of each judge answer: the ``raw`` text with its bare label or score taken out.

A judge answer such as ``"B: Summary #2 is more coherent."`` or ``"The summary repeats the
same fact twice. Final score: 3."`` carries an explanation beside the verdict or score.
:func:`explanation` strips the label/score phrases; :func:`rationales` returns one row per
judge answer whose explanation is not empty, with the judged candidate(s), the score or
verdict, the system and how it compares with the humans.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from data.schema import DataError, Dataset

#: Phrases that only state the label or score (case-insensitive), removed by :func:`explanation`.
_NUM = r"(?:\d+(?:\.\d+)?|one|two|three|four|five|zero)"
_STRIP = [
    # a leading bare verdict: "A", "B:", "Tie -", "Output (a)."
    re.compile(r"^\s*(?:output\s*)?\(?(?:[AB]|tie)\)?(?:\s*[:.)\-–]|\s*$)\s*", re.I),
    # "- Groundedness: 0", "Coherence - 4", "Score: 3", "Final score: 4 out of 5."
    re.compile(
        rf"(?:^|\n)\s*-?\s*(?:final\s+)?(?:score|rating|[a-z]+ness|coherence|fluency|"
        rf"consistency|relevance)\s*[:=\-]\s*{_NUM}(?:\s*(?:/|out of)\s*{_NUM})?\s*\.?",
        re.I,
    ),
    re.compile(
        rf"\b(?:final\s+)?(?:score|rating)\s*(?:[:=]|of|is)?\s*{_NUM}(?:\s*(?:/|out of)\s*{_NUM})?"
        r"\s*\.?",
        re.I,
    ),
    # "One star.", "Four stars" (StarEval), "(score: 1)", "4/5", "4 out of 5"
    re.compile(rf"\b{_NUM}\s+stars?\b\.?", re.I),
    re.compile(rf"\b{_NUM}\s*(?:/|out of)\s*{_NUM}\b\.?", re.I),
    re.compile(r"^\s*(?:reason|explanation|rationale)\s*:\s*", re.I | re.M),
]
#: An explanation needs at least this many words to be kept.
MIN_WORDS = 3
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
ERROR_PREFIX = "[error]"


def explanation(raw) -> str:
    """The explanation part of one judge answer ("" when there is none).

    Parameters
    ----------
    raw : object
        A ``raw`` cell of the comparisons or ratings table (NaN / None: no answer).

    Returns
    -------
    str
        The answer with its bare label and score phrases removed (a leading ``A``/``B``/
        ``tie``, ``Score: 3``, ``4 out of 5``, ``Two stars``, ``- Groundedness: 0``),
        whitespace collapsed; "" when fewer than :data:`MIN_WORDS` words remain or the
        answer is a failed request (``[error] ...``).
    """
    if raw is None or (isinstance(raw, float) and np.isnan(raw)):
        return ""
    text = str(raw).strip()
    if not text or text.lower().startswith(ERROR_PREFIX):
        return ""
    for pattern in _STRIP:
        text = pattern.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip(" \t\n,;:-–.")
    return text if len(_WORD.findall(text)) >= MIN_WORDS else ""


def _human_means(ds: Dataset) -> pd.Series:
    h = ds.human_scores
    if not len(h):
        return pd.Series(dtype=float)
    keys = [h["context_id"].astype(str), h["candidate_id"].astype(str), h["attribute"].astype(str)]
    return h["score"].astype(float).groupby(keys).mean()


def _systems(ds: Dataset) -> dict[tuple[str, str], str]:
    c = ds.candidates
    if not len(c) or "system" not in c:
        return {}
    return {
        (str(a), str(b)): ("" if pd.isna(s) else str(s))
        for a, b, s in zip(c["context_id"], c["candidate_id"], c["system"], strict=True)
    }


def _scale(ds: Dataset, attribute: str, values: np.ndarray) -> tuple[float, float]:
    if attribute in ds.scales:
        lo, hi = ds.scales[attribute]
        return float(lo), float(hi)
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)


#: Agreement labels of :func:`rationales`.
AGREES, HIGHER, LOWER, DISAGREES, HUMAN_TIE, NO_HUMAN = (
    "agrees",
    "judge higher",
    "judge lower",
    "disagrees",
    "humans tie",
    "no human score",
)


def _rating_rows(ds: Dataset, attribute: str | None, judge: str, prompt_id) -> pd.DataFrame:
    r = ds.ratings
    keep = r["judge"].astype(str) == judge
    if prompt_id is not None:
        keep &= r["prompt_id"].astype(str) == str(prompt_id)
    if attribute is not None:
        keep &= r["attribute"].astype(str) == attribute
    r = r[keep]
    out = pd.DataFrame(
        {
            "context_id": r["context_id"].astype(str).to_numpy(),
            "candidate_id": r["candidate_id"].astype(str).to_numpy(),
            "attribute": r["attribute"].astype(str).to_numpy(),
            "judge": judge,
            "prompt_id": r["prompt_id"].astype(str).to_numpy(),
            "sample": r["sample"].to_numpy(),
            "score": r["score"].astype(float).to_numpy(),
            "raw": (r["raw"] if "raw" in r else pd.Series([""] * len(r))).to_numpy(),
        }
    )
    systems, means = _systems(ds), _human_means(ds)
    out["system"] = [
        systems.get(k, "") for k in zip(out["context_id"], out["candidate_id"], strict=True)
    ]
    out["human"] = [
        means.get(k, np.nan)
        for k in zip(out["context_id"], out["candidate_id"], out["attribute"], strict=True)
    ]
    out["agreement"] = NO_HUMAN
    for attr, idx in out.groupby("attribute").groups.items():
        part = out.loc[idx]
        lo, hi = _scale(ds, str(attr), part["human"].to_numpy(float))
        width = max(hi - lo, 1e-12)
        diff = (part["score"].to_numpy(float) - part["human"].to_numpy(float)) / width
        labels = np.where(diff > 0.25, HIGHER, np.where(diff < -0.25, LOWER, AGREES))
        labels = np.where(np.isfinite(diff), labels, NO_HUMAN)
        out.loc[idx, "agreement"] = labels
    return out


def _comparison_rows(ds: Dataset, attribute: str | None, judge: str) -> pd.DataFrame:
    c = ds.comparisons
    keep = c["judge"].astype(str) == judge
    if attribute is not None:
        keep &= c["attribute"].astype(str) == attribute
    c = c[keep]
    p = c["p_first"].astype(float).to_numpy()
    verdict = c["verdict"] if "verdict" in c else pd.Series([None] * len(c))
    verdict = np.where(
        pd.notna(verdict.to_numpy()),
        verdict.astype(object).to_numpy(),
        np.where(p > 0.5, "A", np.where(p < 0.5, "B", np.where(p == 0.5, "tie", None))),
    )
    out = pd.DataFrame(
        {
            "context_id": c["context_id"].astype(str).to_numpy(),
            "first_id": c["first_id"].astype(str).to_numpy(),
            "second_id": c["second_id"].astype(str).to_numpy(),
            "attribute": c["attribute"].astype(str).to_numpy(),
            "judge": judge,
            "sample": c["sample"].to_numpy(),
            "verdict": verdict,
            "p_first": p,
            "raw": (c["raw"] if "raw" in c else pd.Series([""] * len(c))).to_numpy(),
        }
    )
    systems, means = _systems(ds), _human_means(ds)
    first = [systems.get(k, "") for k in zip(out["context_id"], out["first_id"], strict=True)]
    second = [systems.get(k, "") for k in zip(out["context_id"], out["second_id"], strict=True)]
    out["system"] = [
        f if v == "A" else s if v == "B" else "tie" if v == "tie" else ""
        for f, s, v in zip(first, second, out["verdict"], strict=True)
    ]
    h1 = np.array(
        [
            means.get(k, np.nan)
            for k in zip(out["context_id"], out["first_id"], out["attribute"], strict=True)
        ]
    )
    h2 = np.array(
        [
            means.get(k, np.nan)
            for k in zip(out["context_id"], out["second_id"], out["attribute"], strict=True)
        ]
    )
    out["human"] = h1 - h2
    human = np.where(h1 > h2, "A", np.where(h1 < h2, "B", "tie"))
    agree = np.where(human == out["verdict"].to_numpy(object), AGREES, DISAGREES)
    agree = np.where(human == "tie", HUMAN_TIE, agree)
    out["agreement"] = np.where(np.isfinite(h1 - h2), agree, NO_HUMAN)
    return out


def rationales(
    ds: Dataset, attribute: str | None, judge: str, prompt_id: str | None = None
) -> pd.DataFrame:
    """One row per answer of ``judge`` that gives an explanation beside its verdict or score.

    Parameters
    ----------
    ds : Dataset
    attribute : str or None
        The criterion; None: every criterion the judge answered.
    judge : str
        The judge as named in the comparisons or ratings table.
    prompt_id : str, optional
        For a ratings judge, its prompt (a pairwise judge has none). With a prompt the
        judge is read from the ratings table; without one from the comparisons table when
        the judge is found there (a name in both tables, as the demo's judges are, is the
        pairwise judge: its rows have verdicts, not scores), otherwise from the ratings
        table (every prompt).

    Returns
    -------
    pandas.DataFrame
        Ratings judge: context_id, candidate_id, attribute, judge, prompt_id, sample, score,
        raw, system, human (the mean human score of the candidate), agreement (``agrees``
        when the judge's score is within a quarter of the attribute's scale of the human
        mean, else ``judge higher`` / ``judge lower``; ``no human score``), rationale.
        Pairwise judge: context_id, first_id, second_id, attribute, judge, sample, verdict,
        p_first, raw, system (of the preferred candidate; ``tie``), human (human mean of
        the first minus the second), agreement (``agrees`` / ``disagrees`` with the human
        preference, ``humans tie``, ``no human score``), rationale.
        ``attrs["counts"]``: answers (rows of the judge), errors (failed requests), empty
        (bare labels or scores: no explanation), kept.

    Raises
    ------
    DataError
        The judge has no answers (for this attribute / prompt) in ``ds``.
    """
    judge = str(judge)
    c = ds.comparisons
    in_comparisons = len(c) and (c["judge"].astype(str) == judge).any()
    if prompt_id is not None or not in_comparisons:
        rows = _rating_rows(ds, attribute, judge, prompt_id)
    else:  # a name in both tables (the demo's judges) without a prompt: the pairwise judge
        rows = _comparison_rows(ds, attribute, judge)
    if not len(rows):
        where = f" on {attribute!r}" if attribute else ""
        raise DataError(
            f"{ds.name}: judge {judge!r}{where} has no answers in the comparisons or ratings "
            "table; pick another judge or run it on the Judge page."
        )
    raw = rows["raw"].astype(object)
    errors = raw.map(lambda x: isinstance(x, str) and x.strip().lower().startswith(ERROR_PREFIX))
    rows["rationale"] = raw.map(explanation)
    kept = rows[rows["rationale"] != ""].reset_index(drop=True)
    kept.attrs["counts"] = {
        "answers": int(len(rows)),
        "errors": int(errors.sum()),
        "empty": int(len(rows) - errors.sum() - len(kept)),
        "kept": int(len(kept)),
    }
    return kept

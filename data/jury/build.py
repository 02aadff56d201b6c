"""A jury's verdicts and its members' reliability; the jury added to a dataset as a judge."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.jury.votes import PAIR_CLASSES, JuryVotes, jury_kind, jury_votes
from data.natural import natural_sorted
from data.schema import AUTOMATIC, DataError, Dataset
from ranking import DawidSkeneResult, dawid_skene, majority_vote

#: How the members' outputs are combined.
JURY_METHODS = ("majority", "mean", "dawid-skene")
#: Every jury's judge name starts with this.
JURY_PREFIX = "jury:"
#: prompt_id of an absolute jury's ratings (an automatic jury's keep "automatic").
JURY_PROMPT = "jury"
#: Columns of :attr:`Jury.reliability`.
RELIABILITY_COLUMNS = ["judge", "reliability", "measure", "n_items"]
_NAME_LIMIT = 60


def jury_name(method: str, judges) -> str:
    """The judge name of a jury: "jury:<method>(<judges>)", the same for any order of judges.

    Long lists are shortened to the first two judges, how many more, and a short hash of
    the whole list (so two different juries never share a name).
    """
    if method not in JURY_METHODS:
        raise ValueError(f"method must be one of {list(JURY_METHODS)}; got {method!r}")
    names = natural_sorted(set(map(str, judges)))
    inner = ", ".join(names)
    if len(inner) > _NAME_LIMIT and len(names) > 2:
        digest = hashlib.sha1("\n".join(names).encode()).hexdigest()[:6]
        inner = f"{names[0]}, {names[1]}, +{len(names) - 2} more; #{digest}"
    return f"{JURY_PREFIX}{method}({inner})"


def is_jury(judge) -> bool:
    """Whether a judge name is a jury's (:data:`JURY_PREFIX`)."""
    return str(judge).startswith(JURY_PREFIX)


def jury_methods(kind: str) -> tuple[tuple[str, ...], str]:
    """The methods offered for a jury of ``kind`` and a note on those that are not."""
    if kind == "automatic":
        return ("mean",), (
            "Majority vote and Dawid–Skene need categorical outputs; automatic measures give "
            "continuous scores, so their jury is the mean of the measures' z-scores."
        )
    return JURY_METHODS, ""


@dataclass(frozen=True)
class Jury:
    """A jury's outputs, ready to be added to a dataset.

    Attributes
    ----------
    name : str
        Its judge name (:func:`jury_name`).
    method : str
        One of :data:`JURY_METHODS`.
    votes : JuryVotes
        The members' outputs it combines.
    rows : pandas.DataFrame
        Comparison rows (pairwise) or rating rows (absolute, automatic) of the jury, one per
        item at least one member judged.
    reliability : pandas.DataFrame
        :data:`RELIABILITY_COLUMNS`, one row per member: Dawid–Skene's P(answer = true
        class), else the member's agreement with the jury (share of equal verdicts / labels,
        or Pearson's r for scores); ``measure`` names which.
    dawid_skene : DawidSkeneResult or None
        The fit, for the Dawid–Skene method.
    notes : tuple of str
        What to know when reading it.
    """

    name: str
    method: str
    votes: JuryVotes
    rows: pd.DataFrame
    reliability: pd.DataFrame
    dawid_skene: DawidSkeneResult | None = None
    notes: tuple[str, ...] = ()


def _pair_codes(p: np.ndarray) -> np.ndarray:
    """A / tie / B codes (0, 1, 2) of probabilities, -1 for NaN."""
    out = np.where(p > 0.5, 0, np.where(p < 0.5, 2, 1))
    out[~np.isfinite(p)] = -1
    return out


def _combine(votes: JuryVotes, method: str):
    """(jury value per item, jury class code per item or None, Dawid–Skene fit or None)."""
    if method == "mean":
        value = np.nanmean(np.where(np.isfinite(votes.values), votes.values, np.nan), axis=1)
        code = _pair_codes(value) if votes.kind == "pairwise" else None
        return value, code, None
    if not votes.categorical:
        raise DataError(jury_methods(votes.kind)[1])
    K = len(votes.classes)
    if method == "majority":
        shares = majority_vote(votes.labels, K)
        fit = None
    else:
        fit = dawid_skene(votes.labels, K)
        shares = fit.posterior.copy()
        shares[(votes.labels < 0).all(axis=1)] = np.nan
    top = np.nanmax(shares, axis=1, initial=-1.0)
    tied = (np.abs(shares - top[:, None]) < 1e-12).sum(axis=1) > 1
    code = np.where(
        np.isnan(shares).all(axis=1), -1, np.nanargmax(np.nan_to_num(shares, nan=-1), axis=1)
    )
    if votes.kind == "pairwise":
        value = shares[:, 0] + 0.5 * shares[:, 1]
        code = np.where(tied & (code >= 0), 1, code)  # A and B equally likely: a tie
    else:
        points = np.asarray(votes.classes)
        if method == "majority":
            # equally common points: their mean
            is_top = np.abs(shares - top[:, None]) < 1e-12
            value = (is_top * points).sum(axis=1) / np.maximum(is_top.sum(axis=1), 1)
        else:
            value = shares @ points  # the posterior mean score
        value = np.where(code >= 0, value, np.nan)
    return value, code, fit


def _reliability(votes: JuryVotes, method: str, value, code, fit) -> pd.DataFrame:
    """Each member's reliability (see :attr:`Jury.reliability`)."""
    n = np.isfinite(votes.values).sum(axis=0)
    if fit is not None:
        n = (votes.labels >= 0).sum(axis=0)
        rel = fit.reliability
        measure = "P(answer = true class), Dawid–Skene"
    elif code is not None and votes.labels is not None:
        labels = votes.labels if method == "majority" else _pair_codes(votes.values)
        ok = (labels >= 0) & (code[:, None] >= 0)
        n = ok.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = ((labels == code[:, None]) & ok).sum(axis=0) / n
        measure = "share of items where it gives the jury's verdict"
    else:
        rel = np.array(
            [pd.Series(votes.values[:, j]).corr(pd.Series(value)) for j in range(len(votes.judges))]
        )
        measure = "Pearson's r with the jury's score"
    return pd.DataFrame(
        dict(judge=list(votes.judges), reliability=rel, measure=measure, n_items=n)
    ).reindex(columns=RELIABILITY_COLUMNS)


def _rows(votes: JuryVotes, name: str, value, code) -> pd.DataFrame:
    """The jury's comparison or rating rows."""
    keep = np.isfinite(value)
    items = votes.items[keep].reset_index(drop=True)
    base = dict(attribute=votes.attribute, judge=name)
    if votes.kind == "pairwise":
        verdict = np.asarray(PAIR_CLASSES, dtype=object)[np.maximum(code[keep], 0)]
        return items.assign(**base, p_first=value[keep], verdict=verdict, sample=0, raw="")[
            ["context_id", "attribute", "judge", "first_id", "second_id", "p_first", "verdict"]
            + ["sample", "raw"]
        ]
    prompt = AUTOMATIC if votes.kind == "automatic" else JURY_PROMPT
    out = items.assign(**base, prompt_id=prompt, sample=0, score=value[keep], raw="")
    cols = ["context_id", "candidate_id", "attribute", "judge", "prompt_id", "sample", "score"]
    return out[cols + ["raw"]]


def build_jury(ds: Dataset, attribute: str, judges, method: str) -> Jury:
    """Combine ``judges`` of ``attribute`` into one jury.

    Parameters
    ----------
    ds, attribute : Dataset, str
        The comparisons or ratings of ``attribute`` are read.
    judges : iterable of str
        At least 2 judges of one kind with shared items.
    method : {"majority", "mean", "dawid-skene"}
        Majority vote (ties between A and B: a tie; between Likert points: their mean),
        mean (of p_first, of scores, of the automatic measures' z-scores) or Dawid–Skene
        (posterior of the true class; p_first = P(A) + P(tie) / 2, score = posterior mean).

    Returns
    -------
    Jury

    Raises
    ------
    DataError
        Bad choice of judges (see :func:`data.jury.votes.jury_votes`) or a method that does
        not apply to automatic measures.
    """
    if method not in JURY_METHODS:
        raise DataError(f"unknown jury method {method!r}; use one of {list(JURY_METHODS)}")
    votes = jury_votes(ds, attribute, judges)
    name = jury_name(method, votes.judges)
    value, code, fit = _combine(votes, method)
    notes = list(votes.notes)
    if fit is not None and not fit.converged:
        notes.append(f"Dawid–Skene did not converge in {fit.n_iter} iterations")
    if method != "dawid-skene":
        notes.append(
            "reliability here is agreement with the jury, which each member is part of "
            "(it flatters members of a small jury)"
        )
    return Jury(
        name=name,
        method=method,
        votes=votes,
        rows=_rows(votes, name, value, code),
        reliability=_reliability(votes, method, value, code, fit),
        dawid_skene=fit,
        notes=tuple(notes),
    )


def with_jury(ds: Dataset, jury: Jury) -> Dataset:
    """A copy of ``ds`` with ``jury``'s rows added (an earlier jury of the same name and
    attribute replaced)."""
    table = "comparisons" if jury.votes.kind == "pairwise" else "ratings"
    old = ds.table(table)
    same = (old["judge"].astype(str) == jury.name) & (
        old["attribute"].astype(str) == jury.votes.attribute
    )
    rows = jury.rows.reindex(columns=old.columns)
    for col in old.columns:
        if col in jury.rows.columns and len(old):
            rows[col] = rows[col].astype(old[col].dtype, errors="ignore")
    new = pd.concat([old[~same], rows], ignore_index=True) if len(old) else rows
    return dataclasses.replace(ds, **{table: new})


def add_jury(ds: Dataset, attribute: str, judges, method: str) -> Dataset:
    """A copy of ``ds`` with the jury of ``judges`` (:func:`build_jury`) as a judge of its own.

    Its rows go into the comparisons (pairwise members) or ratings (absolute or automatic
    members) under :func:`jury_name`, so every page that lists the dataset's judges offers it.
    """
    return with_jury(ds, build_jury(ds, attribute, judges, method))


__all__ = [
    "JURY_METHODS",
    "JURY_PREFIX",
    "Jury",
    "add_jury",
    "build_jury",
    "is_jury",
    "jury_kind",
    "jury_methods",
    "jury_name",
    "with_jury",
]

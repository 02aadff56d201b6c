"""Keywords of rationales per group (criterion, score, verdict, system, cluster), by TF-IDF.

Each rationale is a TF-IDF vector (scikit-learn's ``TfidfVectorizer``: words and word pairs,
English stop words and numbers left out). A group's keywords are the terms whose mean TF-IDF
weight in the group most exceeds their mean weight in the other rationales: the words the
judge uses *more* when it rates coherence 5 than otherwise, not merely the common words.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer

from data.schema import DataError

#: Words (letters, apostrophes, inner hyphens) of two letters or more; numbers never count.
TOKEN_PATTERN = r"(?u)\b[A-Za-z][A-Za-z'’-]*[A-Za-z]\b"


def vectorizer(n_texts: int) -> TfidfVectorizer:
    """The TF-IDF settings shared by the keyword tables and the map (min_df 2 from 20 texts)."""
    return TfidfVectorizer(
        stop_words="english",
        token_pattern=TOKEN_PATTERN,
        ngram_range=(1, 2),
        min_df=2 if n_texts >= 20 else 1,
        max_features=20000,
        sublinear_tf=True,
    )


def distinctive_terms(matrix, terms: np.ndarray, member: np.ndarray, n: int) -> list[tuple]:
    """(term, lift, share) of the ``n`` terms most over-used by the rows in ``member``.

    ``lift``: the group's mean TF-IDF weight minus the other rows' (the group's own mean
    when it is every row); ``share``: the fraction of the group's rows that use the term.
    Only terms with a positive lift are returned.
    """
    inside = np.asarray(matrix[member].mean(axis=0)).ravel()
    lift = inside
    if (~member).any():
        lift = inside - np.asarray(matrix[~member].mean(axis=0)).ravel()
    order = np.argsort(-lift, kind="stable")[:n]
    order = order[lift[order] > 0]
    used = np.asarray((matrix[member] > 0).mean(axis=0)).ravel()
    return [(str(terms[i]), float(lift[i]), float(used[i])) for i in order]


def keyword_table(frame: pd.DataFrame, by: str, n: int = 10) -> pd.DataFrame:
    """The top keywords of the rationales of each group of ``frame[by]``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of :func:`data.rationales.rationales` (a ``rationale`` column).
    by : str
        The grouping column: ``attribute``, ``score``, ``verdict``, ``system``,
        ``agreement``, ``cluster``...
    n : int
        Keywords per group.

    Returns
    -------
    pandas.DataFrame
        One row per (group, keyword): ``by``, rank (1 = most distinctive), keyword, lift
        (mean TF-IDF in the group minus in the rest), share (of the group's rationales that
        use it), rationales (the group's size). Groups in sorted order; rows whose group is
        missing are left out.

    Raises
    ------
    DataError
        No rationale, or no word left after the stop words.
    """
    columns = [by, "rank", "keyword", "lift", "share", "rationales"]
    frame = frame[frame[by].notna()]
    if not len(frame):
        raise DataError(f"No rationale with a {by!r} to find keywords in.")
    vec = vectorizer(len(frame))
    try:
        matrix = vec.fit_transform(frame["rationale"].astype(str))
    except ValueError as err:  # empty vocabulary
        raise DataError(f"The rationales have no words left to count ({err}).") from err
    terms = vec.get_feature_names_out()
    groups = frame[by].to_numpy()
    rows = []
    for group in sorted(pd.unique(groups), key=_sort_key):
        member = groups == group
        for rank, (term, lift, share) in enumerate(
            distinctive_terms(matrix, terms, member, n), start=1
        ):
            rows.append((group, rank, term, lift, share, int(member.sum())))
    return pd.DataFrame(rows, columns=columns)


def _sort_key(value):
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def wide(table: pd.DataFrame, by: str) -> pd.DataFrame:
    """The keyword table as one row per group: ``by``, rationales, keywords (comma-joined)."""
    if not len(table):
        return pd.DataFrame(columns=[by, "rationales", "keywords"])
    out = table.groupby(by, sort=False).agg(
        rationales=("rationales", "first"), keywords=("keyword", ", ".join)
    )
    return out.reset_index()

r"""Text features of candidates for length and style bias: words, characters, markdown.

Every feature is a count over a whole candidates table at once (pandas ``.str`` methods;
the markdown patterns only on the texts that hold their marker):

* ``words``: whitespace-separated tokens (``str.split()``, which splits on exactly the
  characters the regex ``\s`` matches, at a third of the cost of counting ``\S+``);
* ``chars``: characters;
* ``headers``: markdown header lines (``#`` to ``######`` at the start of a line, then a
  space or the line end);
* ``lists``: list-item lines (``-``, ``*`` or ``+``, or ``1.`` / ``1)`` style numbers at the
  start of a line, then a space);
* ``bold``: bold spans ``**x**`` or ``__x__``.

A missing text (None / NaN) has NaN features; an empty text has zeros.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["FEATURES", "normalized_diff", "text_features"]

#: The feature columns of :func:`text_features`, in order.
FEATURES = ("words", "chars", "headers", "lists", "bold")

_WORD = r"\S+"
_HEADER = r"(?m)^[ \t]{0,3}#{1,6}(?:[ \t]|$)"
_LIST = r"(?m)^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S"
_BOLD = r"\*\*(?=\S)(?:.+?)(?<=\S)\*\*|__(?=\S)(?:.+?)(?<=\S)__"


def _count(s: pd.Series, pattern: str, markers) -> np.ndarray:
    """``s.str.count(pattern)``, run only on the texts holding one of ``markers`` (0 else)."""
    has = np.zeros(len(s), dtype=bool)
    for m in markers:
        has |= s.str.contains(m, regex=False).to_numpy(dtype=bool)
    out = np.zeros(len(s))
    if has.any():
        out[has] = s[has].str.count(pattern).to_numpy(dtype=np.float64)
    return out


def text_features(texts: Sequence[str] | pd.Series) -> pd.DataFrame:
    """Count words, characters, headers, list items and bold spans of each text.

    Parameters
    ----------
    texts : sequence of str or pandas.Series
        The texts; None / NaN entries are allowed (missing text).

    Returns
    -------
    pandas.DataFrame
        One row per text (the index of ``texts`` when it is a Series, else 0..n-1), float64
        columns :data:`FEATURES` (``words``, ``chars``, ``headers``, ``lists``, ``bold``);
        NaN in every column of a missing text.

    Examples
    --------
    >>> text_features(["# Title\\n- one **two**", "plain words"])["words"].tolist()
    [5.0, 2.0]
    """
    s = texts if isinstance(texts, pd.Series) else pd.Series(list(texts), dtype="object")
    missing = s.isna().to_numpy()
    s = s.astype("object").where(~missing, "").astype(str)
    out = pd.DataFrame(
        {
            "words": np.fromiter((len(t.split()) for t in s), np.float64, len(s)),
            "chars": s.str.len().to_numpy(dtype=np.float64),
            "headers": _count(s, _HEADER, ("#",)),
            "lists": s.str.count(_LIST).to_numpy(dtype=np.float64),
            "bold": _count(s, _BOLD, ("**", "__")),
        },
        index=s.index,
    ).astype(np.float64)
    if missing.any():
        out.loc[missing, :] = np.nan
    return out


def normalized_diff(x_a, x_b) -> np.ndarray:
    """The normalised difference ``(x_a - x_b) / (x_a + x_b)``, 0 where both are 0.

    The style-control covariate of Chatbot Arena: in [-1, 1] for non-negative counts, 0
    when the two candidates have the same count.

    Parameters
    ----------
    x_a, x_b : array_like of float
        Non-negative feature values of the two candidates (broadcastable).

    Returns
    -------
    ndarray of float64
        NaN where either input is NaN.

    Examples
    --------
    >>> normalized_diff([30, 0, 5], [10, 0, 5]).tolist()
    [0.5, 0.0, 0.0]
    """
    a = np.asarray(x_a, dtype=np.float64)
    b = np.asarray(x_b, dtype=np.float64)
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total != 0, (a - b) / total, 0.0)
    return np.where(np.isnan(total), np.nan, out)

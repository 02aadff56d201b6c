"""Pooled statistics over contexts, and how many contexts they had to skip.

Real judge outputs have holes: a judge may refuse every comparison of one item, or every
answer for one item may fail to parse, which leaves that context's block of P all NaN. The
pooled statistics of ``ranking`` (``position_bias``, ``swap_consistency``,
``balanced_threshold``, ``pairwise_accuracy``) skip every context that has nothing usable
for them and say how many they skipped, with one convention:

* the pooled value is a :class:`PooledStat`, a ``float`` that also carries ``n_contexts``
  (contexts that contributed) and ``n_skipped`` (contexts left out because they had nothing
  usable for that statistic); ``n_contexts + n_skipped`` is the number of contexts of P.
  It is used like any float (arithmetic and formatting give plain floats);
* with ``per_context=True`` the statistics return one value per context, NaN exactly for the
  contexts the pooled value skips;
* when no context at all is usable the pooled value is undefined and a ValueError says why.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PooledStat", "per_context", "pooled"]


class PooledStat(float):
    """A pooled statistic (a float) with the number of contexts used and skipped.

    Attributes
    ----------
    n_contexts : int
        Contexts that contributed at least one usable comparison.
    n_skipped : int
        Contexts skipped because nothing in them was usable for this statistic (for example
        every comparison of the context unparsed, i.e. an all-NaN block of P).
    """

    n_contexts: int
    n_skipped: int

    def __new__(cls, value: float, n_contexts: int, n_skipped: int) -> PooledStat:
        obj = super().__new__(cls, value)
        obj.n_contexts = int(n_contexts)
        obj.n_skipped = int(n_skipped)
        return obj

    def __reduce__(self):
        return (PooledStat, (float(self), self.n_contexts, self.n_skipped))


def pooled(num: np.ndarray, den: np.ndarray, undefined: str) -> PooledStat:
    """sum(num) / sum(den) over the contexts with den > 0, as a :class:`PooledStat`.

    ``num`` and ``den`` hold one total per context (e.g. first-position wins and
    comparisons). Raises ValueError with ``undefined`` (plus the number of contexts) when
    no context has den > 0.
    """
    used = den > 0
    n_used = int(used.sum())
    if n_used == 0:
        raise ValueError(f"{undefined} (none of the {den.shape[0]} context(s) has any)")
    return PooledStat(float(num[used].sum() / den[used].sum()), n_used, den.shape[0] - n_used)


def per_context(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den per context; NaN where den == 0 (a context skipped by :func:`pooled`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1.0), np.nan)

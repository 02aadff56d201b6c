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
* when no context at all is usable (a P without any comparison among them) the pooled value
  is undefined: NaN, with ``n_contexts == 0`` and a ``reason`` saying why. It is never an
  error, so callers need no try/except around a statistic of real data.
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
    reason : str
        Why the value is NaN (no usable context); "" when it is defined.
    """

    n_contexts: int
    n_skipped: int
    reason: str

    def __new__(cls, value: float, n_contexts: int, n_skipped: int, reason: str = "") -> PooledStat:
        obj = super().__new__(cls, value)
        obj.n_contexts = int(n_contexts)
        obj.n_skipped = int(n_skipped)
        obj.reason = str(reason)
        return obj

    def __reduce__(self):
        return (PooledStat, (float(self), self.n_contexts, self.n_skipped, self.reason))

    @classmethod
    def undefined(cls, reason: str, n_contexts_total: int) -> PooledStat:
        """NaN with the reason, when none of ``n_contexts_total`` contexts was usable."""
        return cls(
            np.nan,
            0,
            n_contexts_total,
            f"{reason} (none of the {n_contexts_total} context(s) has any)",
        )


def pooled(num: np.ndarray, den: np.ndarray, undefined: str) -> PooledStat:
    """sum(num) / sum(den) over the contexts with den > 0, as a :class:`PooledStat`.

    ``num`` and ``den`` hold one total per context (e.g. first-position wins and
    comparisons). When no context has den > 0 the value is NaN with ``n_contexts == 0`` and
    the reason ``undefined`` (plus the number of contexts).
    """
    used = den > 0
    n_used = int(used.sum())
    if n_used == 0:
        return PooledStat.undefined(undefined, den.shape[0])
    return PooledStat(float(num[used].sum() / den[used].sum()), n_used, den.shape[0] - n_used)


def per_context(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den per context; NaN where den == 0 (a context skipped by :func:`pooled`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1.0), np.nan)

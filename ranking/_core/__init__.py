"""Shared plumbing of every ranking subpackage (private: the public names are in ``ranking``).

- ``checks``: P, flat comparisons, a threshold tau and a random_state, checked one way
  everywhere (clear ValueErrors, never silent);
- ``score_checks``: score vectors, label arrays, rating matrices, a choice among options and a
  confidence level, for the agreement statistics;
- ``decisions``: the decision rule, a hard verdict from p and tau (``decide``);
- ``pooled``: ``PooledStat``, a statistic pooled over contexts with the contexts it skipped;
- ``jit``: numba's compile flags, and the prange kernels compiled twice (serial, parallel) in
  ``BATCH_KERNELS``.
"""

from .checks import as_P, check_flat, check_random_state, check_tau
from .decisions import decide
from .pooled import PooledStat
from .score_checks import check_choice, check_confidence

__all__ = [
    "PooledStat",
    "as_P",
    "check_choice",
    "check_confidence",
    "check_flat",
    "check_random_state",
    "check_tau",
    "decide",
]

"""Comparison budgets: which comparisons to ask a judge for, and how well it ranks with R of
them per context.

- ``selection``: static comparison sets (``all``, ``random``, ``no-repeat``, ``symmetric``)
  and the adaptive product-of-experts strategy (``adaptive_rank``);
- ``curves``: ``budget_curves`` (correlation with a reference against the budget, per
  strategy, debias on/off, over seeded draws) and ``comparisons_needed``;
- ``grid``: the numba kernels of the curves, every draw and budget in one pass per strategy;
- ``bt``, ``bt_kernel``, ``bt_newton``, ``bt_linalg``: Bradley–Terry along the budget in one
  compiled loop (warm-started fits, incremental win weights), with the plain loop over
  ``bradley_terry`` kept as the slow reference.
"""

from .curves import (
    CORRELATIONS,
    CURVE_STRATEGIES,
    METHODS,
    BudgetCurves,
    budget_curves,
    comparisons_needed,
)
from .selection import (
    ADAPTIVE_RULES,
    STATIC_STRATEGIES,
    AdaptiveResult,
    adaptive_rank,
    select_comparisons,
)

__all__ = [
    "ADAPTIVE_RULES",
    "CORRELATIONS",
    "CURVE_STRATEGIES",
    "METHODS",
    "STATIC_STRATEGIES",
    "AdaptiveResult",
    "BudgetCurves",
    "adaptive_rank",
    "budget_curves",
    "comparisons_needed",
    "select_comparisons",
]

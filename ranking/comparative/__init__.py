"""Comparative assessment (Liusie, Manakul, Gales 2024): rankings of a context's candidates
from the judge's pairwise probabilities P.

- ``scores``: win-ratio scores (soft outcomes, or hard decisions at a threshold tau);
- ``max_likelihood``: the maximum-likelihood order over permutations (exact by dynamic
  programming up to ``exact_max_n`` items, a local search above);
- ``subset``: self-consistency of the win-ratio ranking on random subsets of the candidates.
"""

from .max_likelihood import P_CLIP, MLResult, ml_ranking
from .scores import win_ratio
from .subset import DEFAULT_SIZES, SubsetConsistencyResult, subset_consistency

__all__ = [
    "DEFAULT_SIZES",
    "MLResult",
    "P_CLIP",
    "SubsetConsistencyResult",
    "ml_ranking",
    "subset_consistency",
    "win_ratio",
]

"""Prediction-powered inference (PPI++, Angelopoulos, Duchi, Zrnic 2023): a judge's outputs on
every item, human labels on a few, intervals that stay valid whatever the judge's bias.

- ``mean``: ``ppi_mean`` (a mean, e.g. a win rate against a baseline), ``classical_mean``
  (the human-only interval) and the power tuning of lam;
- ``bradley_terry``: ``ppi_bradley_terry``, the PPI++ M-estimator of Bradley–Terry scores;
- ``result``: ``PPIResult`` and what both estimators share (the lam check, the interval).
"""

from .bradley_terry import ppi_bradley_terry
from .mean import classical_mean, ppi_mean
from .result import PPIResult

__all__ = ["PPIResult", "classical_mean", "ppi_bradley_terry", "ppi_mean"]

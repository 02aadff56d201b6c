"""Bradley–Terry with ties: the Davidson (1970) and Rao–Kupper (1967) models.

Placeholder wired into ``ranking.bradley_terry(ties=...)``; the fit lands with issue 14.
"""

from __future__ import annotations


def fit_ties(first, second, outcome, n_items, weights, tau, ties, tie, **options):
    """The tie-model fit behind ``bradley_terry(..., ties=...)`` (flat input)."""
    raise NotImplementedError("tie models are being added (issue 14)")

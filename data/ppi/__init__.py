"""Few human labels, valid intervals: prediction-powered inference on the benchmarks.

Given a judge's outputs on every unit and human labels on (a subset of) them, the tables
here put three estimates side by side per system: the judge alone (all units, no label: the
judge's bias and scale included), the humans alone (the labelled units: the classical CLT
interval) and PPI++ (``ranking.ppi``: the judge's estimate corrected by the labelled units,
lam tuned). Quantities: a system's mean score and its win rate against a baseline system
(rated items: SummEval, HANNA, Topical-Chat), win rates and Bradley–Terry scores from verdicts
(PandaLM: the judge's verdicts against the human verdicts, the mean of the annotators' votes
as the human outcome). The judge's scale need not match the humans' (a 1-10 judge against
1-5 humans, an automatic measure in [0, 1]): PPI++ tunes lam to the judge's usefulness.

"How many human labels do I need?": :func:`width_curve` subsamples the human labels we have
(n from ~10 to all, seeded draws); :func:`effective_labels` reads how many human labels alone
PPI++'s n labels are worth, :func:`labels_needed` how many labels PPI++ needs for the width of
n human labels alone. (With the judge on the same items only, PPI++ never beats every label
alone: it borrows from the judge's outputs on the items left unlabelled.)

>>> from data.ppi import ppi_units, ppi_estimates, width_curve  # doctest: +SKIP
>>> u = ppi_units(ds, "coherence", "gpt-4-0314/rts", "rts")      # doctest: +SKIP
"""

from data.ppi.tables import (
    CURVE_COLUMNS,
    ESTIMATE_COLUMNS,
    METHODS,
    effective_labels,
    label_grid,
    labels_needed,
    ppi_estimates,
    trusted,
    width_curve,
)
from data.ppi.units import (
    KIND_QUANTITIES,
    QUANTITIES,
    UNIT_COLUMNS,
    PPIUnits,
    ppi_judges,
    ppi_units,
)

__all__ = [
    "CURVE_COLUMNS",
    "ESTIMATE_COLUMNS",
    "KIND_QUANTITIES",
    "METHODS",
    "QUANTITIES",
    "UNIT_COLUMNS",
    "PPIUnits",
    "effective_labels",
    "label_grid",
    "labels_needed",
    "ppi_estimates",
    "ppi_judges",
    "ppi_units",
    "trusted",
    "width_curve",
]

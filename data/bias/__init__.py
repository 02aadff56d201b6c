"""Judge bias tables: position-bias profile, length and style bias, transitivity, calibration.

Where the canonical tables meet the bias statistics of ``ranking``: every function takes a
:class:`~data.schema.Dataset`, an attribute and a judge and returns a tidy DataFrame.

* ``pairs``: :func:`pair_frame` (one row per judged pair, both orders, quality gap, text
  features) and :func:`rating_pairs` (the same from a ratings judge's samples);
* ``features``: :func:`text_features`, :func:`normalized_diff`;
* ``profile``: :func:`profile_summary`, :func:`profile_by_gap` (Shi et al. 2024);
* ``cycles``: :func:`cycles_summary`, :func:`worst_cycles`.

From the command line: ``python -m data.bias summeval --judge J --attribute A``.
"""

from __future__ import annotations

from data.bias.features import normalized_diff, text_features
from data.bias.pairs import PAIR_COLUMNS, pair_frame, rating_pairs

__all__ = ["PAIR_COLUMNS", "normalized_diff", "pair_frame", "rating_pairs", "text_features"]

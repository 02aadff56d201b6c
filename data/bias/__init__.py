"""Judge bias tables: position-bias profile, length and style bias, transitivity, calibration.

Where the canonical tables meet the bias statistics of ``ranking``: every function takes a
:class:`~data.schema.Dataset`, an attribute and a judge and returns a tidy DataFrame.

* ``pairs``: :func:`pair_frame` (one row per judged pair, both orders, quality gap, text
  features), :func:`judged_pairs` (the same with its samples) and :func:`rating_pairs`
  (the same from a ratings judge's samples);
* ``features``: :func:`text_features`, :func:`normalized_diff`;
* ``profile``: :func:`profile_summary`, :func:`profile_by_gap` (Shi et al. 2024);
* ``cycles``: :func:`cycles_summary`, :func:`worst_cycles`;
* ``style``: :func:`length_preference`, :func:`style_coefficients`, :func:`style_ranking`,
  :func:`length_controlled_win_rate`;
* ``calibration``: :func:`calibration_table`, :func:`reliability_frame`.

Beside them, reached by its module path: ``probes`` (the judge probes' tables from token
log-probabilities: per-candidate perplexity and Min-K% Prob, self-preference, contamination:
:func:`~data.bias.probes.score_table`, :func:`~data.bias.probes.preference_pairs`,
:func:`~data.bias.probes.contamination`, ...).

Built once per judge: every table takes its inputs prebuilt, used as is — ``pairs=``
(:func:`judged_pairs`, or the frame of :func:`pair_frame` / :func:`rating_pairs`), ``pm=``
(:func:`cycles_pmatrix` for the cycles tables; :func:`judge_inputs` gives ``pm=`` and
``reference=`` for the calibration tables) — so a page builds each once per (dataset,
attribute, judge) and every control move reuses them.

From the command line: ``python -m data.bias summeval --judge J --attribute A``.
"""

from __future__ import annotations

from data.bias.calibration import calibration_table, judge_inputs, reliability_frame
from data.bias.cycles import cycles_pmatrix, cycles_summary, worst_cycles
from data.bias.features import normalized_diff, text_features
from data.bias.pairs import (
    PAIR_COLUMNS,
    JudgedPairs,
    frame_of,
    judged_pairs,
    pair_frame,
    rating_pairs,
)
from data.bias.profile import profile_by_gap, profile_summary
from data.bias.style import (
    length_controlled_win_rate,
    length_preference,
    style_coefficients,
    style_ranking,
)

__all__ = [
    "PAIR_COLUMNS",
    "JudgedPairs",
    "calibration_table",
    "cycles_pmatrix",
    "cycles_summary",
    "frame_of",
    "judge_inputs",
    "judged_pairs",
    "length_controlled_win_rate",
    "length_preference",
    "normalized_diff",
    "pair_frame",
    "profile_by_gap",
    "profile_summary",
    "rating_pairs",
    "reliability_frame",
    "style_coefficients",
    "style_ranking",
    "text_features",
    "worst_cycles",
]

"""The Judge report card: how good a judge is on pairs whose correct answer is known.

A *pair benchmark* is a pairwise dataset with a human verdict on its pairs (comparisons by a
``human:`` judge: LLMBar's ``human:gold``, an upload's human verdict column): the gold. For
each model judge of the dataset the card gives its accuracy against the gold with a Wilson
interval, per category of the context ids; the two orders (accuracy in each, positional
agreement: right in both, consistency, first-position rate); the accuracy each debias mode
gives; calibration (reliability diagram, ECE, accuracy against confidence) where the judge
gives probabilities; where it fails (worst categories, the length check, the failed pairs);
its cost per 1,000 judgments where it was run here; and McNemar's exact test of two judges on
the same pairs.

>>> from data.report_card import card, judge_table      # doctest: +SKIP
>>> c = card(data.load_benchmark("llmbar"))             # doctest: +SKIP
>>> judge_table(c)                                      # doctest: +SKIP

``python -m data.report_card --benchmark llmbar`` prints the judge table.

Modules: :mod:`~data.report_card.pairs` (the gold of each pair, every judgment, the per-pair
outcomes, categories), :mod:`~data.report_card.card` (the tables),
:mod:`~data.report_card.cli` (the command line).
"""

from data.report_card.card import (
    JUDGE_COLUMNS,
    UNITS,
    USAGE_COLUMNS,
    Calibration,
    Card,
    Comparison,
    calibration,
    card,
    category_table,
    compare,
    failures,
    gold_attributes,
    has_probabilities,
    judge_table,
    length_table,
    mode_table,
    problems,
    with_cost,
)
from data.report_card.pairs import (
    GOLD_STATUSES,
    LEVELS,
    UNPARSED,
    Gold,
    category_of,
    gold_pairs,
    judgments,
    pair_outcomes,
)

__all__ = [
    "GOLD_STATUSES",
    "JUDGE_COLUMNS",
    "LEVELS",
    "UNITS",
    "UNPARSED",
    "USAGE_COLUMNS",
    "Calibration",
    "Card",
    "Comparison",
    "Gold",
    "calibration",
    "card",
    "category_of",
    "category_table",
    "compare",
    "failures",
    "gold_attributes",
    "gold_pairs",
    "has_probabilities",
    "judge_table",
    "judgments",
    "length_table",
    "mode_table",
    "pair_outcomes",
    "problems",
    "with_cost",
]

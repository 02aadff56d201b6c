"""Agreement tables: where the canonical tables meet the agreement statistics of ``ranking``.

Each function takes a :class:`~data.schema.Dataset` (plus a selection of judges, Eval-Prompts
and attributes) and returns a tidy DataFrame; the statistics themselves live in
``ranking/agreement/`` (correlations, reliability, significance). The
``level`` column of the tables is the aggregation unit (item, system, overall) of the
correlation. From the command line::

    python -m data.agreement --benchmark hanna [--judge J ...] [--attribute A ...]

prints the human inter-annotator agreement, the human baseline, judge-human correlations,
the Williams + Benjamini-Hochberg matrices between judges and judge self-consistency.

The human reference is the mean over the chosen annotators of each (context, candidate,
attribute). Annotators named ``<group>_<n>`` (``expert_1``, ``crowd_3``) form groups; when a
data set has several groups the reference must be chosen with ``annotators=``.

The package, one module per seam (every name below is reached as ``data.agreement.<name>``):
``reference`` (annotator groups, the human reference, judge scores, both aligned),
``correlations`` (judge-human correlations), ``williams`` (Williams' tests between judges,
and of one rater against all others), ``humans`` (inter-annotator agreement, the human
baseline, annotator pairs), ``judges`` (self-consistency, pairwise accuracy),
``verdicts`` (verdicts against human verdicts, per pair of raters and per annotator against
the others) and ``cli`` (the command line).

Beside them, reached by its module path: ``groups`` (two groups of systems compared by a
judge and by the humans, mean and sd per group and Welch's t, Chiang & Lee 2023 Table 1:
:func:`~data.agreement.groups.group_comparison_table`,
:func:`~data.agreement.groups.compare_groups`).
"""

from __future__ import annotations

from data.agreement._tables import ITEM
from data.agreement.cli import main
from data.agreement.correlations import correlation_table
from data.agreement.humans import (
    annotator_pairs_table,
    human_baseline_table,
    iaa_table,
    rating_matrix,
)
from data.agreement.judges import pairwise_accuracy_table, self_consistency_table
from data.agreement.reference import (
    aligned_scores,
    annotator_groups,
    human_reference,
    judge_scores,
    reference_annotators,
)
from data.agreement.systems import AVERAGE, system_ratings_table
from data.agreement.verdicts import annotator_summary_table, verdict_agreement_table
from data.agreement.williams import (
    williams_matrix_frame,
    williams_table,
    williams_versus_table,
)

__all__ = [
    "ITEM",
    "annotator_groups",
    "reference_annotators",
    "human_reference",
    "judge_scores",
    "aligned_scores",
    "correlation_table",
    "williams_table",
    "williams_matrix_frame",
    "williams_versus_table",
    "rating_matrix",
    "iaa_table",
    "human_baseline_table",
    "annotator_pairs_table",
    "self_consistency_table",
    "pairwise_accuracy_table",
    "verdict_agreement_table",
    "annotator_summary_table",
    "AVERAGE",
    "system_ratings_table",
    "main",
]

"""Agreement statistics: a judge against a reference, raters against each other, and whether
two judges differ.

- ``metrics``: Spearman, Kendall, pairwise accuracy and order matrices, row-wise and
  NaN-aware (numba row kernels that the budget loop calls inline);
- ``correlations``: judge-human correlation per item, system or overall, with context-bootstrap
  intervals (``bootstrap``: the resampling without copying arrays; ``segments``: many small
  correlations in one vectorised pass);
- ``reliability``: ICC, Krippendorff's alpha, Cohen's and Fleiss' kappa;
  ``baseline``: the human baseline and a judge's self-consistency;
- ``significance``: Welch, the permutation test, the paired shift; ``williams``: Williams' test
  of dependent correlations with Benjamini–Hochberg;
- ``jury``: majority vote and Dawid–Skene over several judges' labels;
- ``proportions``: how often a judge is right (Wilson interval) and whether one judge is
  right more often than another on the same items (McNemar's exact test, Newcombe's interval
  of the paired difference).
"""

from .baseline import (
    BASELINE_REFERENCES,
    HumanBaselineResult,
    SelfConsistencyResult,
    human_baseline,
    self_consistency,
)
from .correlations import KENDALL_VARIANTS, METHODS, UNITS, CorrelationResult, correlation
from .jury import DawidSkeneResult, dawid_skene, majority_vote
from .metrics import kendall, kendall_matrix, order_matrix, pairwise_accuracy, spearman
from .proportions import McNemarResult, mcnemar, paired_difference_interval, wilson_interval
from .reliability import (
    ALPHA_SCALES,
    ICC_KINDS,
    KAPPA_WEIGHTS,
    AgreementResult,
    ICCResult,
    cohen_kappa,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    share_all_agree,
)
from .significance import (  # Williams' test too (ranking.agreement.williams, re-exported there)
    ALTERNATIVES,
    PairedShiftResult,
    PermutationResult,
    WelchResult,
    WilliamsMatrixResult,
    WilliamsResult,
    bh_adjust,
    paired_shift,
    permutation_test,
    welch_t,
    williams_matrix,
    williams_test,
)

__all__ = [
    "ALPHA_SCALES",
    "ALTERNATIVES",
    "BASELINE_REFERENCES",
    "ICC_KINDS",
    "KAPPA_WEIGHTS",
    "KENDALL_VARIANTS",
    "METHODS",
    "UNITS",
    "AgreementResult",
    "CorrelationResult",
    "DawidSkeneResult",
    "HumanBaselineResult",
    "ICCResult",
    "McNemarResult",
    "PairedShiftResult",
    "PermutationResult",
    "SelfConsistencyResult",
    "WelchResult",
    "WilliamsMatrixResult",
    "WilliamsResult",
    "bh_adjust",
    "cohen_kappa",
    "correlation",
    "dawid_skene",
    "fleiss_kappa",
    "human_baseline",
    "icc",
    "kendall",
    "kendall_matrix",
    "krippendorff_alpha",
    "majority_vote",
    "mcnemar",
    "order_matrix",
    "paired_difference_interval",
    "paired_shift",
    "pairwise_accuracy",
    "permutation_test",
    "self_consistency",
    "share_all_agree",
    "spearman",
    "welch_t",
    "williams_matrix",
    "williams_test",
    "wilson_interval",
]

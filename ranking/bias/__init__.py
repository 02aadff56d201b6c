"""How a judge errs, and how to correct it: position bias, calibration, transitivity and the
log-probability probes.

- ``position``: the first-slot win rate, swap consistency, the balanced threshold tau and the
  equivalent debias weight alpha; ``curve``: the first-slot win rate, pairwise accuracy and
  Spearman along a grid of thresholds, on the compared cells only;
- ``calibration``: a whole monotone map of the judge's probabilities (swap-invariant or from
  human labels), ECE and the reliability table (``calibration_fit``: fitting the maps);
- ``profile``: the position-bias profile by quality gap (Shi et al. 2024; ``profile_stats``: its
  Wilson intervals and multinomial bootstrap); ``repetition``: repetition stability;
- ``transitivity``: circular triads of a judge's preferences and its own Bradley–Terry fit;
- ``probes``: perplexity, Min-K% Prob, AUC and self-preference from token log-probabilities.
"""

from .calibration import CalibrationResult, calibrate, ece, pairwise_labels, reliability
from .curve import ThresholdCurve, threshold_curve
from .position import alpha_for_tau, balanced_threshold, debias, position_bias, swap_consistency
from .probes import (
    AUCResult,
    MeanInterval,
    SelfPreferenceResult,
    auc,
    auc_test,
    mean_interval,
    mean_logprob,
    min_k_prob,
    perplexity,
    self_preference,
)
from .profile import PositionProfile, position_profile
from .repetition import RepetitionStability, repetition_stability
from .transitivity import TransitivityResult, transitivity

__all__ = [
    "AUCResult",
    "CalibrationResult",
    "MeanInterval",
    "PositionProfile",
    "RepetitionStability",
    "SelfPreferenceResult",
    "ThresholdCurve",
    "TransitivityResult",
    "alpha_for_tau",
    "auc",
    "auc_test",
    "balanced_threshold",
    "calibrate",
    "debias",
    "ece",
    "mean_interval",
    "mean_logprob",
    "min_k_prob",
    "pairwise_labels",
    "perplexity",
    "position_bias",
    "position_profile",
    "reliability",
    "repetition_stability",
    "self_preference",
    "swap_consistency",
    "threshold_curve",
    "transitivity",
]

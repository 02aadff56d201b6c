"""The numbers side of JudgeScope: pairwise judgements in, rankings and statistics out.

Pure numpy + numba (+ scipy for the statistics): no pandas, torch or streamlit. The input is
P of shape (n_contexts, N, N) with P[c, i, j] = p_ij, the probability that candidate i shown
first beats candidate j shown second, NaN where the pair was not compared; one large item set
may come as flat arrays (first, second, outcome) instead.

Conventions shared by every function:

* ``tau=None`` (the default) turns P into scores with soft outcomes y = p; a threshold tau (or
  one per context) with hard decisions y = ``decide(P, tau)``. The statistics that are hard by
  nature (``position_bias``, ``swap_consistency``, ``pairwise_accuracy``) decide at tau = 0.5
  unless told otherwise.
* an interval's coverage is ``confidence``; Bradley–Terry's prior precision is ``ridge``;
  ``alpha`` is only the debias weight (``debias``, ``alpha_for_tau``).
* every ranking result exposes ``.scores``; a pooled statistic is a ``PooledStat``, NaN with a
  ``reason`` when no context is usable, never an error.
* ``random_state`` is None, an int or a numpy Generator, None by default.

The code lives in subpackages by concept, each with its own public names re-exported here:

* ``bradley_terry``: the Bradley–Terry fit (P, flat, covariates, ties), its intervals and
  bootstrap, style-controlled win rates;
* ``comparative``: win-ratio, maximum-likelihood ranking, self-consistency on subsets;
* ``leaderboard``: win matrices, competition ranks, rank changes, Elo, rank intervals;
* ``bias``: position bias and debiasing, calibration, the position profile, transitivity,
  log-probability probes;
* ``budget``: which comparisons to ask for, and budget curves (with the Bradley–Terry loop);
* ``agreement``: rank metrics, correlations, reliability, baselines, significance tests, juries,
  proportions (accuracy intervals, McNemar);
* ``ppi``: prediction-powered inference;
* ``_core``: the shared plumbing (input checks, the decision rule, pooled statistics, numba
  flags).

Inside ``ranking`` modules import each other directly (``from ranking.agreement.metrics import
...``), never through this file. The public surface is listed here once.
"""

from ranking._core import PooledStat, decide
from ranking.agreement import (
    AgreementResult,
    CorrelationResult,
    DawidSkeneResult,
    HumanBaselineResult,
    ICCResult,
    McNemarResult,
    PairedShiftResult,
    PermutationResult,
    SelfConsistencyResult,
    WelchResult,
    WilliamsMatrixResult,
    WilliamsResult,
    bh_adjust,
    cohen_kappa,
    correlation,
    dawid_skene,
    fleiss_kappa,
    human_baseline,
    icc,
    kendall,
    kendall_matrix,
    krippendorff_alpha,
    majority_vote,
    mcnemar,
    order_matrix,
    paired_difference_interval,
    paired_shift,
    pairwise_accuracy,
    permutation_test,
    self_consistency,
    share_all_agree,
    spearman,
    welch_t,
    williams_matrix,
    williams_test,
    wilson_interval,
)
from ranking.bias import (
    AUCResult,
    CalibrationResult,
    MeanInterval,
    PositionProfile,
    RepetitionStability,
    SelfPreferenceResult,
    ThresholdCurve,
    TransitivityResult,
    alpha_for_tau,
    auc,
    auc_test,
    balanced_threshold,
    calibrate,
    debias,
    ece,
    mean_interval,
    mean_logprob,
    min_k_prob,
    pairwise_labels,
    perplexity,
    position_bias,
    position_profile,
    reliability,
    repetition_stability,
    self_preference,
    swap_consistency,
    threshold_curve,
    transitivity,
)
from ranking.bradley_terry import (
    BTResult,
    TieModelFit,
    bradley_terry,
    controlled_win_rates,
    tie_model_fit,
)
from ranking.budget import (
    AdaptiveResult,
    BudgetCurves,
    adaptive_rank,
    budget_curves,
    comparisons_needed,
    select_comparisons,
)
from ranking.comparative import (
    MLResult,
    SubsetConsistencyResult,
    ml_ranking,
    subset_consistency,
    win_ratio,
)
from ranking.leaderboard import (
    BaselineWinRates,
    EloResult,
    RankChange,
    RankIntervals,
    WinMatrix,
    baseline_win_rates,
    competition_ranks,
    elo,
    rank_change,
    rank_intervals,
    win_matrix,
)
from ranking.ppi import PPIResult, ppi_bradley_terry, ppi_mean

__all__ = [
    # decisions and pooled statistics
    "decide",
    "PooledStat",
    # rankings from comparisons
    "win_ratio",
    "bradley_terry",
    "BTResult",
    "tie_model_fit",
    "TieModelFit",
    "rank_intervals",
    "RankIntervals",
    "controlled_win_rates",
    "ml_ranking",
    "MLResult",
    "elo",
    "EloResult",
    "baseline_win_rates",
    "BaselineWinRates",
    # leaderboards: battles, win rates, two orders compared
    "win_matrix",
    "WinMatrix",
    "competition_ranks",
    "rank_change",
    "RankChange",
    # position bias
    "position_bias",
    "swap_consistency",
    "balanced_threshold",
    "debias",
    "alpha_for_tau",
    "threshold_curve",
    "ThresholdCurve",
    # calibration beyond one threshold (ranking.bias.calibration)
    "calibrate",
    "CalibrationResult",
    "ece",
    "reliability",
    "pairwise_labels",
    # position-bias profile by quality gap (Shi et al. 2024)
    "position_profile",
    "PositionProfile",
    "repetition_stability",
    "RepetitionStability",
    # comparison budgets
    "select_comparisons",
    "adaptive_rank",
    "AdaptiveResult",
    "budget_curves",
    "BudgetCurves",
    "comparisons_needed",
    # rankings of candidate subsets (Liusie et al. Table 8)
    "subset_consistency",
    "SubsetConsistencyResult",
    # agreement with a reference (ranking.agreement.metrics)
    "pairwise_accuracy",
    "spearman",
    "kendall",
    "kendall_matrix",
    "order_matrix",
    # judge-human correlations (ranking.agreement.correlations)
    "correlation",
    "CorrelationResult",
    # reliability of raters (ranking.agreement.reliability, ranking.agreement.baseline)
    "icc",
    "ICCResult",
    "krippendorff_alpha",
    "share_all_agree",
    "cohen_kappa",
    "fleiss_kappa",
    "AgreementResult",
    "human_baseline",
    "HumanBaselineResult",
    "self_consistency",
    "SelfConsistencyResult",
    # juries of judges (ranking.agreement.jury)
    "dawid_skene",
    "DawidSkeneResult",
    "majority_vote",
    # few human labels, valid intervals: prediction-powered inference (ranking.ppi)
    "ppi_mean",
    "ppi_bradley_terry",
    "PPIResult",
    # significance tests (ranking.agreement.significance)
    "welch_t",
    "WelchResult",
    "williams_test",
    "WilliamsResult",
    "williams_matrix",
    "WilliamsMatrixResult",
    "bh_adjust",
    "permutation_test",
    "PermutationResult",
    "paired_shift",
    "PairedShiftResult",
    # how often a judge is right, and two judges on the same items (ranking.agreement.proportions)
    "wilson_interval",
    "mcnemar",
    "McNemarResult",
    "paired_difference_interval",
    # transitivity of a judge's preferences (ranking.bias.transitivity)
    "transitivity",
    "TransitivityResult",
    # probes of a causal judge from token log-probs (ranking.bias.probes)
    "min_k_prob",
    "perplexity",
    "mean_logprob",
    "auc",
    "auc_test",
    "AUCResult",
    "self_preference",
    "SelfPreferenceResult",
    "mean_interval",
    "MeanInterval",
]

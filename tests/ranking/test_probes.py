"""ranking.bias.probes: Min-K% Prob, perplexity, AUC and self-preference against direct formulas."""

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

import ranking
from ranking import auc_test, mean_interval, mean_logprob, self_preference


def test_min_k_prob_is_the_mean_of_the_lowest_share():
    lp = np.log([0.9, 0.1, 0.5, 0.01, 0.7, 0.3, 0.2, 0.05, 0.6, 0.4])
    # k = 0.2 of 10 tokens: the two least likely, 0.01 and 0.05
    assert ranking.min_k_prob(lp, k=0.2) == pytest.approx(np.mean(np.log([0.01, 0.05])))
    assert ranking.min_k_prob(lp, k=1.0) == pytest.approx(lp.mean())
    # Shi et al.'s int(k n), at least one token
    assert ranking.min_k_prob(lp[:3], k=0.2) == pytest.approx(np.log(0.1))
    assert ranking.min_k_prob(lp, k=0.25) == pytest.approx(np.mean(np.log([0.01, 0.05])))


def test_min_k_prob_edges():
    assert math.isnan(ranking.min_k_prob([]))
    assert ranking.min_k_prob([np.nan, -1.0, -3.0], k=0.5) == -3.0  # NaN first token left out
    for k in (0, 1.5, -0.1, "0.2"):
        with pytest.raises(ValueError, match="k must be"):
            ranking.min_k_prob([-1.0], k=k)
    with pytest.raises(ValueError, match="<= 0"):
        ranking.min_k_prob([0.5, -1.0])
    with pytest.raises(ValueError, match="1-D"):
        ranking.min_k_prob([[-1.0]])


def test_perplexity_and_mean_logprob():
    lp = np.log([0.5, 0.25, 0.125])
    assert mean_logprob(lp) == pytest.approx(np.log(0.25))
    assert ranking.perplexity(lp) == pytest.approx(4.0)
    assert ranking.perplexity(np.log([0.1] * 7)) == pytest.approx(10.0)
    assert math.isnan(ranking.perplexity([]))
    assert ranking.perplexity([-np.inf, -1.0]) == math.inf


def test_auc_equals_sklearn_and_mann_whitney():
    rng = np.random.default_rng(0)
    a = np.round(rng.normal(0.5, 1, 40), 1)  # rounding makes ties
    b = np.round(rng.normal(0.0, 1, 55), 1)
    y = np.r_[np.ones(a.size), np.zeros(b.size)]
    want = roc_auc_score(y, np.r_[a, b])
    assert ranking.auc(a, b) == pytest.approx(want)
    assert ranking.auc(b, a) == pytest.approx(1 - want)
    res = auc_test(a, b, n_boot=500, random_state=1)
    assert res.value == pytest.approx(want)
    assert res.pvalue == pytest.approx(stats.mannwhitneyu(a, b).pvalue)
    assert res.lower < res.value < res.upper and (res.n_a, res.n_b) == (40, 55)
    assert auc_test(a, b, n_boot=500, random_state=1) == res  # seeded
    assert ranking.auc([1, 2, np.nan], [0.0]) == 1.0


def test_auc_undefined():
    assert math.isnan(ranking.auc([], [1.0]))
    res = auc_test([1.0], [np.nan])
    assert math.isnan(res.value) and "group B" in res.reason


def test_mean_interval_resamples_contexts():
    values = np.array([1, 1, 0, 1, 0.5, 0, 1, 1, np.nan])
    ctx = np.array(["c1", "c1", "c2", "c2", "c3", "c3", "c4", "c4", "c4"])
    res = mean_interval(values, ctx, n_boot=2000, random_state=0)
    assert res.value == pytest.approx(np.nanmean(values)) and res.n == 8
    assert 0 <= res.lower <= res.value <= res.upper <= 1
    # contexts c1 (all 1) and c3: an interval of whole-context means
    one = mean_interval([1.0, 1.0], ["a", "a"], n_boot=50, random_state=0)
    assert one.lower == one.upper == 1.0
    assert math.isnan(mean_interval([np.nan]).value)


def test_self_preference_recovers_a_planted_effect_within_strata():
    rng = np.random.default_rng(3)
    n = 600
    strata = rng.integers(-2, 3, n)  # human-score difference of the pair
    diff = rng.normal(0, 1, n)
    contexts = rng.integers(0, 30, n)
    # the judge follows the human difference and, within each stratum, the likelihood
    pref = 1 / (1 + np.exp(-(1.5 * strata + 1.0 * diff + rng.normal(0, 0.5, n))))
    res = self_preference(pref, diff, strata=strata, contexts=contexts, n_boot=200, random_state=0)
    assert res.overall.value == pytest.approx(stats.spearmanr(pref, diff).statistic)
    assert res.overall.lower < res.overall.value < res.overall.upper
    assert set(res.strata) == {-2, -1, 0, 1, 2}
    for s, r in res.strata.items():
        sel = strata == s
        assert r.value == pytest.approx(stats.spearmanr(pref[sel], diff[sel]).statistic)
    assert res.within > res.overall.value > 0  # the strata remove the human signal
    # no effect: the interval covers 0
    null = self_preference(rng.random(n), diff, contexts=contexts, n_boot=300, random_state=0)
    assert null.overall.lower < 0 < null.overall.upper
    assert math.isnan(null.within) and null.strata == {}


def test_self_preference_with_holes_and_pearson():
    pref = np.array([1, 0, 0.5, np.nan, 1, 0, 1, 0.5])
    diff = np.array([0.3, -0.2, 0.0, 0.1, 0.5, -0.4, 0.2, 0.1])
    res = self_preference(pref, diff, method="pearson", n_boot=0)
    keep = ~np.isnan(pref)
    assert res.overall.value == pytest.approx(stats.pearsonr(pref[keep], diff[keep]).statistic)
    assert res.overall.n_dropped_nan == 1
    with pytest.raises(ValueError, match="ll_diff"):
        self_preference(pref, diff[:3])

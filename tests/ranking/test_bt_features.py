"""Style-controlled Bradley–Terry (``bradley_terry(features=...)``) and ``controlled_win_rates``.

Twins: scipy.optimize.minimize (BFGS) on the same log-likelihood, and the Fisher covariance as
the pseudo-inverse of the explicitly built dense Hessian.
"""

import numpy as np
import pytest
from scipy import optimize, stats

from ranking import bradley_terry, controlled_win_rates
from ranking.bradley_terry import features as btf
from ranking.bradley_terry import features_solve as btf_solve


def _sim_systems(seed, n_sys=8, m=1500, beta=(0.4, 0.8), corr=0.0, hard=True):
    """Arena-style data: items are systems, each comparison has its own two responses whose
    lengths vary (mean log-length = corr * strength); features = (1, normalised length diff)."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(-1.0, 1.0, n_sys)
    first = rng.integers(0, n_sys, m)
    second = (first + rng.integers(1, n_sys, m)) % n_sys
    # verbosity of each system: correlated with its strength (corr), not a function of it
    verbose = corr * (0.6 * theta + 0.8 * rng.normal(size=n_sys))
    words = np.exp(rng.normal(5.0 + verbose[:, None], 0.5, (n_sys, m)))
    la, lb = words[first, np.arange(m)], words[second, np.arange(m)]
    X = np.column_stack([np.ones(m), (la - lb) / (la + lb)])
    p = 1.0 / (1.0 + np.exp(-(theta[first] - theta[second] + X @ np.asarray(beta))))
    y = (rng.random(m) < p).astype(float) if hard else p
    return first, second, y, X, theta


def _negloglik(x, first, second, y, w, X, n, ridge=0.0):
    theta = np.r_[0.0, x[: n - 1]]
    d = theta[first] - theta[second] + X @ x[n - 1 :]
    ll = w * (y * -np.logaddexp(0, -d) + (1 - y) * -np.logaddexp(0, d))
    return -ll.sum() + 0.5 * ridge * (theta**2).sum()


def _scipy_fit(first, second, y, w, X, n):
    def grad(x, *_):
        theta = np.r_[0.0, x[: n - 1]]
        d = theta[first] - theta[second] + X @ x[n - 1 :]
        r = w * (y - 1.0 / (1.0 + np.exp(-d)))
        g = np.bincount(first, r, n) - np.bincount(second, r, n)
        return -np.r_[g[1:], X.T @ r]

    x0 = np.zeros(n - 1 + X.shape[1])
    res = optimize.minimize(
        _negloglik, x0, args=(first, second, y, w, X, n), jac=grad, method="BFGS",
        options={"gtol": 1e-11, "maxiter": 10_000},
    )  # fmt: skip
    theta = np.r_[0.0, res.x[: n - 1]]
    return theta - theta.mean(), res.x[n - 1 :]


def _dense_cov(first, second, w, X, theta, beta):
    """Twin: pinv of the dense negative Hessian of (theta, beta)."""
    n, m = theta.size, first.size
    d = theta[first] - theta[second] + X @ beta
    s = 1.0 / (1.0 + np.exp(-d))
    A = np.zeros((m, n))
    A[np.arange(m), first] = 1.0
    A[np.arange(m), second] = -1.0
    D = np.column_stack([A, X])
    return np.linalg.pinv(D.T @ (D * (w * s * (1 - s))[:, None]))


@pytest.mark.parametrize("hard", [True, False])
def test_agrees_with_scipy_bfgs_fit_of_the_same_likelihood(hard):
    first, second, y, X, _ = _sim_systems(3, m=800, hard=hard)
    w = np.random.default_rng(0).uniform(0.5, 2.0, first.size)
    res = bradley_terry(first=first, second=second, outcome=y, weights=w, features=X)
    theta, beta = _scipy_fit(first, second, y, w, X, 8)
    np.testing.assert_allclose(res.scores, theta, atol=1e-6)
    np.testing.assert_allclose(res.coef, beta, atol=1e-6)
    assert res.converged and res.finite_mle


def test_fisher_standard_errors_match_the_pinv_of_the_dense_hessian():
    first, second, y, X, _ = _sim_systems(5, m=600)
    res = bradley_terry(first=first, second=second, outcome=y, features=X, intervals="fisher")
    cov = _dense_cov(first, second, np.ones(first.size), X, res.scores, res.coef)
    se = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(res.coef_se, se[8:], rtol=1e-6)
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(res.upper - res.scores, z * se[:8], rtol=1e-6)
    np.testing.assert_allclose(res.coef_high - res.coef, z * se[8:], rtol=1e-6)


def test_coefficient_intervals_cover_the_truth_about_95_percent():
    beta = np.array([0.4, 0.8])
    hits = np.zeros(2)
    n_seeds = 40
    for seed in range(n_seeds):
        first, second, y, X, _ = _sim_systems(100 + seed, m=1200, beta=beta)
        res = bradley_terry(first=first, second=second, outcome=y, features=X)
        hits += (res.coef_low <= beta) & (beta <= res.coef_high)
    cover = hits / n_seeds
    # 95 % of 40: 38; a binomial(40, 0.95) is >= 34 with probability 0.9995
    assert np.all(cover >= 34 / n_seeds), cover
    assert np.all(cover <= 1.0)


def test_style_control_recovers_strengths_better_when_length_is_biased():
    rmse_plain, rmse_ctrl, rho_plain, rho_ctrl = [], [], [], []
    for seed in range(10):
        first, second, y, X, theta = _sim_systems(seed, n_sys=10, m=3000, beta=(0.0, 2.5), corr=2.0)
        truth = theta - theta.mean()
        plain = bradley_terry(first=first, second=second, outcome=y)
        ctrl = bradley_terry(first=first, second=second, outcome=y, features=X[:, 1:])
        rmse_plain.append(np.sqrt(np.mean((plain.scores - truth) ** 2)))
        rmse_ctrl.append(np.sqrt(np.mean((ctrl.scores - truth) ** 2)))
        rho_plain.append(stats.spearmanr(plain.scores, truth).statistic)
        rho_ctrl.append(stats.spearmanr(ctrl.scores, truth).statistic)
    assert np.mean(rmse_ctrl) < 0.5 * np.mean(rmse_plain), (rmse_ctrl, rmse_plain)
    assert np.mean(rho_ctrl) >= np.mean(rho_plain)


def test_without_features_nothing_changes():
    first, second, y, X, _ = _sim_systems(7, m=500)
    plain = bradley_terry(first=first, second=second, outcome=y, intervals="fisher")
    assert plain.coef is None and plain.coef_se is None and plain.coef_low is None
    # a covariate that is zero everywhere is left out, and the scores are the plain ones
    res = bradley_terry(first=first, second=second, outcome=y, features=np.zeros((500, 1)))
    np.testing.assert_allclose(res.scores, plain.scores, atol=1e-7)
    assert np.isnan(res.coef[0]) and any("not identifiable" in n for n in res.notes)


def test_sparse_path_with_many_components_matches_dense_path(monkeypatch):
    rng = np.random.default_rng(11)
    n_ctx, N = 40, 8  # 320 items > the dense limit; one component per context
    first, second = [], []
    for c in range(n_ctx):
        for i in range(N):
            for j in range(N):
                if i != j and rng.random() < 0.6:
                    first.append(c * N + i)
                    second.append(c * N + j)
    first, second = np.array(first), np.array(second)
    m = first.size
    words = rng.uniform(20, 400, n_ctx * N)
    X = np.column_stack(
        [np.ones(m), (words[first] - words[second]) / (words[first] + words[second])]
    )
    theta = rng.normal(size=n_ctx * N)
    y = 1.0 / (1.0 + np.exp(-(theta[first] - theta[second] + X @ [0.3, 0.5])))
    sparse = bradley_terry(first=first, second=second, outcome=y, features=X, intervals="fisher")
    assert sparse.n_components == n_ctx
    monkeypatch.setattr(btf_solve, "_DENSE_MAX", 10_000)
    dense = bradley_terry(first=first, second=second, outcome=y, features=X, intervals="fisher")
    np.testing.assert_allclose(sparse.scores, dense.scores, atol=1e-9)
    np.testing.assert_allclose(sparse.coef, dense.coef, atol=1e-9)
    np.testing.assert_allclose(sparse.coef_se, dense.coef_se, rtol=1e-7)
    # soft outcomes from the model itself: the fit is the truth
    np.testing.assert_allclose(sparse.coef, [0.3, 0.5], atol=1e-6)
    for c in range(n_ctx):
        block = slice(c * N, (c + 1) * N)
        np.testing.assert_allclose(
            sparse.scores[block], theta[block] - theta[block].mean(), atol=1e-6
        )


def test_weights_equal_repeated_rows_and_tau_decides():
    first, second, y, X, _ = _sim_systems(2, m=300, hard=False)
    twice = bradley_terry(
        first=first, second=second, outcome=y, features=X, weights=np.full(300, 2.0)
    )
    rep = bradley_terry(
        first=np.r_[first, first], second=np.r_[second, second], outcome=np.r_[y, y],
        features=np.r_[X, X],
    )  # fmt: skip
    np.testing.assert_allclose(twice.coef, rep.coef, atol=1e-9)
    hard = bradley_terry(first=first, second=second, outcome=y, features=X, tau=0.5)
    dec = np.where(y > 0.5, 1.0, np.where(y < 0.5, 0.0, 0.5))
    ref = bradley_terry(first=first, second=second, outcome=dec, features=X)
    np.testing.assert_allclose(hard.coef, ref.coef, atol=1e-12)


def test_nan_rows_are_dropped_with_a_note():
    first, second, y, X, _ = _sim_systems(4, m=400)
    X2, y2 = X.copy(), y.copy()
    X2[[3, 10], 1] = np.nan
    y2[20] = np.nan
    res = bradley_terry(first=first, second=second, outcome=y2, features=X2)
    keep = np.ones(400, bool)
    keep[[3, 10, 20]] = False
    ref = bradley_terry(first=first[keep], second=second[keep], outcome=y[keep], features=X[keep])
    np.testing.assert_allclose(res.coef, ref.coef, atol=1e-12)
    assert any("3 comparison(s) with NaN" in n for n in res.notes)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(P=np.full((2, 2), 0.5), features=np.ones((2, 1))), "flat input"),
        (dict(features=np.ones((3, 1))), "one row per comparison"),
        (dict(features=np.ones((4, 0))), "no columns"),
        (dict(features=np.array([[1.0], [np.inf], [0.0], [1.0]])), r"features\[1, 0\]"),
        (dict(features=np.full((4, 1), np.nan)), "nothing to fit"),
        (dict(features=np.ones((4, 1)), second=[1, 2, 0]), "same length"),
    ],
)
def test_bad_input_raises(kwargs, match):
    base = dict(first=[0, 1, 2, 0], second=[1, 2, 0, 2], outcome=[1.0, 0.0, 1.0, 0.5])
    if "P" in kwargs:
        base = {}
    with pytest.raises(ValueError, match=match):
        bradley_terry(**{**base, **kwargs})


def test_undefeated_item_uses_the_fallback_ridge_with_a_note():
    first, second, y, X, _ = _sim_systems(8, m=600)
    y = np.where(first == 7, 1.0, np.where(second == 7, 0.0, y))  # item 7 never loses
    res = bradley_terry(first=first, second=second, outcome=y, features=X)
    assert not res.finite_mle and res.ridge[7] == btf.RIDGE_FALLBACK
    assert any("no finite MLE" in n for n in res.notes)
    assert np.all(np.isfinite(res.coef)) and res.scores[7] > res.scores[:7].max() + 3


def test_separating_covariate_gets_the_fallback_ridge_with_a_note():
    first, second, y, X, _ = _sim_systems(9, m=400)
    sep = np.where(y > 0.5, 1.0, -1.0)  # a covariate that predicts every outcome
    res = bradley_terry(first=first, second=second, outcome=y, features=np.column_stack([X, sep]))
    assert not res.finite_mle and np.all(np.isfinite(res.coef))
    assert any("separate the outcomes" in n for n in res.notes)


def test_controlled_win_rates_delta_method_against_the_dense_twin():
    first, second, y, X, _ = _sim_systems(12, m=900)
    res = bradley_terry(first=first, second=second, outcome=y, features=X)
    rate, low, high = controlled_win_rates(res, 2)
    d = res.scores - res.scores[2]
    np.testing.assert_allclose(rate, 1.0 / (1.0 + np.exp(-d)))
    assert rate[2] == 0.5 and low[2] == 0.5 == high[2]
    cov = _dense_cov(first, second, np.ones(first.size), X, res.scores, res.coef)[:8, :8]
    se = np.sqrt(np.diag(cov) + cov[2, 2] - 2 * cov[:, 2])
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(np.log(high / (1 - high)), d + z * se, atol=1e-7)
    np.testing.assert_allclose(np.log(low / (1 - low)), d - z * se, atol=1e-7)
    # plain flat fits work too; P input fits do not
    plain = bradley_terry(first=first, second=second, outcome=y)
    assert np.all(np.diff(controlled_win_rates(plain, 0)[0]) > -0.2)
    with pytest.raises(ValueError, match="flat input"):
        controlled_win_rates(bradley_terry(np.full((3, 3), 0.6)), 0)
    with pytest.raises(ValueError, match="baseline"):
        controlled_win_rates(res, 8)


def test_controlled_win_rates_nan_outside_the_baselines_component():
    first = np.array([0, 1, 0, 2, 3, 4, 3])
    second = np.array([1, 0, 1, 3, 2, 3, 4])
    y = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    X = np.ones((7, 1))
    res = bradley_terry(first=first, second=second, outcome=y, features=X, n_items=6)
    rate, low, high = controlled_win_rates(res, 0)
    assert np.isfinite(rate[:2]).all() and np.isnan(rate[2:]).all() and np.isnan(low[5])
    assert np.isnan(controlled_win_rates(res, 5)[0]).all()

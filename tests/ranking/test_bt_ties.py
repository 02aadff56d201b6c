"""Davidson and Rao–Kupper Bradley–Terry (``bradley_terry(ties=...)``): recovery, a scipy fit of
the same likelihood as slow twin, the no-tie boundary, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

import ranking as rk
from ranking.bradley_terry import DAVIDSON, RAO_KUPPER, pair_probabilities

MODELS = [("davidson", DAVIDSON, 0.8), ("rao-kupper", RAO_KUPPER, 1.6)]


def simulate(model, param, n=8, m=20_000, seed=1):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    theta -= theta.mean()
    first = rng.integers(0, n, m)
    second = (first + rng.integers(1, n, m)) % n
    pw, pt, _ = pair_probabilities(model, theta[first] - theta[second], np.log(param))
    u = rng.random(m)
    outcome = np.where(u < pw, 1.0, np.where(u < pw + pt, 0.5, 0.0))
    return first, second, outcome, theta


def scipy_fit(first, second, outcome, model, n, tie=None):
    """The same log-likelihood maximised by scipy (BFGS on (theta_1.., x), theta_0 = 0)."""
    t = (outcome == 0.5).astype(float) if tie is None else tie
    win, loss = outcome - t / 2, 1 - outcome - t / 2

    def negll(v):
        theta = np.r_[0.0, v[: n - 1]]
        x = v[-1] if model == DAVIDSON else np.exp(v[-1])  # kappa = exp(.) > 0
        pw, pt, pl = pair_probabilities(model, theta[first] - theta[second], x)
        return -(win * np.log(pw) + t * np.log(pt) + loss * np.log(pl)).sum()

    start = np.r_[np.zeros(n - 1), -0.5 if model == DAVIDSON else np.log(0.3)]
    res = optimize.minimize(negll, start, method="BFGS", options={"gtol": 1e-9})
    theta = np.r_[0.0, res.x[: n - 1]]
    x = res.x[-1] if model == DAVIDSON else np.exp(res.x[-1])
    return theta - theta.mean(), np.exp(x), -res.fun


@pytest.mark.parametrize(("name", "model", "param"), MODELS)
def test_recovers_simulated_tie_parameter_and_scores(name, model, param):
    first, second, outcome, theta = simulate(model, param)
    res = rk.bradley_terry(first=first, second=second, outcome=outcome, ties=name,
                           intervals="fisher")  # fmt: skip
    assert res.converged
    assert res.tie_low < param < res.tie_high
    assert res.tie_low < res.tie_param < res.tie_high
    assert res.tie_high - res.tie_low < 0.1 * param
    np.testing.assert_allclose(res.scores, theta, atol=0.12)
    assert np.all((res.lower < theta) | (np.abs(res.scores - theta) < 0.12))
    assert res.samples is None


@pytest.mark.parametrize(("name", "model", "param"), MODELS)
def test_agrees_with_scipy_fit_of_the_likelihood(name, model, param):
    first, second, outcome, _ = simulate(model, param, n=5, m=3_000, seed=3)
    res = rk.bradley_terry(first=first, second=second, outcome=outcome, ties=name, tol=1e-12)
    theta, p, ll = scipy_fit(first, second, outcome, model, 5)
    np.testing.assert_allclose(res.scores, theta, atol=2e-6)
    assert res.tie_param == pytest.approx(p, abs=2e-6)
    fit = rk.tie_model_fit(first, second, outcome, res.scores, name, res.tie_param)
    assert fit.log_lik == pytest.approx(ll, abs=1e-6)
    assert fit.log_lik >= ll - 1e-9  # the Newton optimum is at least as good as BFGS's


@pytest.mark.parametrize(("name", "model", "param"), MODELS)
def test_soft_tie_mass_agrees_with_scipy(name, model, param):
    rng = np.random.default_rng(5)
    first, second, _, _ = simulate(model, param, n=4, m=600, seed=5)
    tie = rng.uniform(0, 0.6, first.size)
    win = rng.uniform(0, 1, first.size) * (1 - tie)
    outcome = win + tie / 2
    res = rk.bradley_terry(first=first, second=second, outcome=outcome, ties=name, tie=tie,
                           tol=1e-12)  # fmt: skip
    theta, p, _ = scipy_fit(first, second, outcome, model, 4, tie=tie)
    np.testing.assert_allclose(res.scores, theta, atol=2e-6)
    assert res.tie_param == pytest.approx(p, abs=2e-6)


def test_duplicates_and_weights_are_the_same_likelihood():
    first, second, outcome, _ = simulate(DAVIDSON, 0.8, n=5, m=400, seed=7)
    twice = rk.bradley_terry(first=np.r_[first, first], second=np.r_[second, second],
                             outcome=np.r_[outcome, outcome], ties="davidson")  # fmt: skip
    weighted = rk.bradley_terry(first=first, second=second, outcome=outcome, ties="davidson",
                                weights=np.full(first.size, 2.0))  # fmt: skip
    swapped = rk.bradley_terry(first=second, second=first, outcome=1 - outcome, ties="davidson")
    once = rk.bradley_terry(first=first, second=second, outcome=outcome, ties="davidson")
    np.testing.assert_allclose(twice.scores, weighted.scores, atol=1e-9)
    np.testing.assert_allclose(once.scores, swapped.scores, atol=1e-9)
    np.testing.assert_allclose(once.scores, twice.scores, atol=1e-7)
    assert once.tie_param == pytest.approx(twice.tie_param, abs=1e-7)


@pytest.mark.parametrize(("name", "boundary"), [("davidson", 0.0), ("rao-kupper", 1.0)])
def test_no_tie_is_the_boundary_and_plain_bt(name, boundary):
    first, second, outcome, _ = simulate(DAVIDSON, 0.8, n=6, m=2_000, seed=2)
    outcome = np.where(outcome == 0.5, 1.0, outcome)
    res = rk.bradley_terry(first=first, second=second, outcome=outcome, ties=name,
                           intervals="fisher")  # fmt: skip
    plain = rk.bradley_terry(first=first, second=second, outcome=outcome)
    assert res.tie_param == boundary
    assert np.isnan(res.tie_low) and np.isnan(res.tie_high)
    assert np.all(np.isfinite(res.scores))
    np.testing.assert_allclose(res.scores, plain.scores, atol=1e-7)
    assert any("no tie" in n for n in res.notes)
    assert any("boundary" in n for n in res.notes)


def test_bootstrap_intervals_and_samples():
    first, second, outcome, theta = simulate(RAO_KUPPER, 1.6, n=6, m=5_000, seed=4)
    res = rk.bradley_terry(first=first, second=second, outcome=outcome, ties="rao-kupper",
                           intervals="bootstrap", n_boot=60, random_state=0)  # fmt: skip
    assert res.samples.shape == (60, 6)
    assert res.tie_low < 1.6 < res.tie_high
    assert np.all(res.lower <= res.scores) and np.all(res.scores <= res.upper)
    again = rk.bradley_terry(first=first, second=second, outcome=outcome, ties="rao-kupper",
                             intervals="bootstrap", n_boot=60, random_state=0)  # fmt: skip
    np.testing.assert_array_equal(res.samples, again.samples)


def test_never_compared_item_is_nan_and_never_losing_item_uses_fallback():
    first = np.array([0, 1, 0, 1, 2, 0, 2])
    second = np.array([1, 0, 1, 2, 1, 2, 0])
    outcome = np.array([1.0, 1.0, 0.5, 0.0, 1.0, 0.5, 0.0])
    res = rk.bradley_terry(first=first, second=second, outcome=outcome, ties="davidson",
                           n_items=4)  # fmt: skip
    assert np.isnan(res.scores[3]) and res.component[3] == -1
    assert res.finite_mle and np.all(np.isfinite(res.scores[:3]))
    # item 3 beats everyone it meets and never ties: no finite MLE, fitted with the fallback
    res = rk.bradley_terry(first=np.r_[first, 3, 3], second=np.r_[second, 0, 1],
                           outcome=np.r_[outcome, 1.0, 1.0], ties="davidson")  # fmt: skip
    assert not res.finite_mle
    assert res.ridge[3] > 0 and np.isfinite(res.scores[3])
    assert res.scores[3] == res.scores.max()


def test_bad_input_messages():
    first, second = np.array([0, 1, 2]), np.array([1, 2, 0])
    with pytest.raises(ValueError, match=r"comparison 1: outcome 0\.9 with tie 0\.4"):
        rk.bradley_terry(first=first, second=second, outcome=[0.5, 0.9, 0.2], ties="davidson",
                         tie=[0.2, 0.4, 0.1])  # fmt: skip
    with pytest.raises(ValueError, match="comparison 2 has tie = nan"):
        rk.bradley_terry(first=first, second=second, outcome=[0.5, 0.5, 0.5], ties="davidson",
                         tie=[0.2, 0.4, np.nan])  # fmt: skip
    with pytest.raises(ValueError, match="ties must be"):
        rk.bradley_terry(first=first, second=second, outcome=[1, 0, 0.5], ties="glenn")
    with pytest.raises(ValueError, match="one value per comparison"):
        rk.bradley_terry(first=first, second=second, outcome=[1, 0, 0.5], ties="davidson",
                         tie=[0.1])  # fmt: skip
    with pytest.raises(ValueError, match="needs a tie model"):
        rk.bradley_terry(first=first, second=second, outcome=[1, 0, 0.5], tie=[0, 0, 1])


def test_all_ties_is_reported_not_a_crash():
    res = rk.bradley_terry(first=[0, 1, 2], second=[1, 2, 0], outcome=[0.5] * 3,
                           ties="rao-kupper")  # fmt: skip
    assert res.tie_param == np.inf
    np.testing.assert_array_equal(res.scores, 0.0)
    assert any("every comparison is a tie" in n for n in res.notes)


def test_half_win_reads_as_davidson_nu_two():
    first, second, outcome, _ = simulate(DAVIDSON, 2.0, n=5, m=4_000, seed=8)
    plain = rk.bradley_terry(first=first, second=second, outcome=outcome)
    half = rk.tie_model_fit(first, second, outcome, plain.scores, "half-win", None)
    dav = rk.tie_model_fit(first, second, outcome, 2 * plain.scores, "davidson", 2.0)
    assert half.log_lik == pytest.approx(dav.log_lik)
    fitted = rk.bradley_terry(first=first, second=second, outcome=outcome, ties="davidson")
    best = rk.tie_model_fit(first, second, outcome, fitted.scores, "davidson", fitted.tie_param)
    assert best.log_lik >= half.log_lik
    assert best.predicted_tie_rate == pytest.approx(best.observed_tie_rate, abs=0.01)


def test_davidson_equals_evalica_newman_on_llmfao():
    """Newman's (2023) iteration with ties fits the Davidson model (his v is nu / 2): evalica's
    implementation is a reference on the LLMFAO votes shipped with it (about 39 % ties)."""
    evalica = pytest.importorskip("evalica")
    import pandas as pd

    from data.paths import data_dirs

    path = data_dirs()[0] / "llmfao_evalica" / "llmfao.csv"
    if not path.exists():
        pytest.skip(f"{path} absent")
    votes = pd.read_csv(path, dtype=str)
    items = sorted(set(votes["left"]) | set(votes["right"]))
    index = {k: i for i, k in enumerate(items)}
    first = votes["left"].map(index).to_numpy()
    second = votes["right"].map(index).to_numpy()
    w = votes["winner"].to_numpy(dtype=object)
    outcome = np.where(w == "left", 1.0, np.where(w == "right", 0.0, 0.5))
    code = {"left": evalica.Winner.X, "right": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    ref = evalica.newman(votes["left"], votes["right"], [code[x] for x in w], tolerance=1e-12,
                         limit=100_000)  # fmt: skip
    res = rk.bradley_terry(first=first, second=second, outcome=outcome, ties="davidson")
    expected = np.log(ref.scores.loc[items].to_numpy())
    np.testing.assert_allclose(res.scores, expected - expected.mean(), atol=1e-8)
    assert res.tie_param == pytest.approx(2 * ref.v, rel=1e-8)


def test_tau_decides_first_and_a_decision_at_tau_is_a_tie():
    first, second, outcome, _ = simulate(RAO_KUPPER, 1.6, n=5, m=2_000, seed=9)
    soft = np.where(outcome == 1.0, 0.8, np.where(outcome == 0.0, 0.3, 0.6))
    res = rk.bradley_terry(first=first, second=second, outcome=soft, ties="rao-kupper", tau=0.6)
    hard = rk.bradley_terry(first=first, second=second, outcome=outcome, ties="rao-kupper")
    np.testing.assert_allclose(res.scores, hard.scores, atol=1e-9)
    assert res.tie_param == pytest.approx(hard.tie_param)

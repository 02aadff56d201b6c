"""PPI++ means and Bradley–Terry scores: coverage on a simulated biased judge, narrower than
human-only intervals, lam = 0 / 1 special cases, agreement with the authors' ppi_py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import norm

from ranking import PPIResult, ppi_bradley_terry, ppi_mean
from ranking.ppi import classical_mean

ppi_py = pytest.importorskip("ppi_py")
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # sklearn, inside ppi_py

Z95 = norm.ppf(0.975)


def _biased_judge(rng, n_total):
    """Humans y on 1-5-ish scale; the judge on another scale, shifted and noisy."""
    x = rng.normal(size=n_total)
    y = 3.0 + x + rng.normal(0, 0.5, n_total)
    yhat = 1.0 + 2.0 * (x + rng.normal(0, 0.7, n_total))  # mean 1, not 3: biased
    return y, yhat


def test_mean_covers_truth_and_is_narrower_than_human_only():
    rng = np.random.default_rng(1)
    n, N, reps = 60, 600, 400
    cover = {"ppi": 0, "classical": 0, "naive": 0}
    widths = {"ppi": [], "classical": []}
    for _ in range(reps):
        y, yhat = _biased_judge(rng, n + N)
        r = ppi_mean(y[:n], yhat[:n], yhat[n:])
        c = ppi_mean(y[:n], yhat[:n], yhat[n:], lam=0)
        naive = classical_mean(yhat)  # the judge alone: biased
        cover["ppi"] += r.lower[0] <= 3.0 <= r.upper[0]
        cover["classical"] += c.lower[0] <= 3.0 <= c.upper[0]
        cover["naive"] += naive.lower[0] <= 3.0 <= naive.upper[0]
        widths["ppi"].append(r.width[0])
        widths["classical"].append(c.width[0])
        assert 0 < r.lam <= 1 and r.method == "ppi++"
    assert 0.91 <= cover["ppi"] / reps <= 0.985
    assert 0.91 <= cover["classical"] / reps <= 0.985
    assert cover["naive"] == 0
    assert np.median(widths["ppi"]) < 0.85 * np.median(widths["classical"])


def test_lam_zero_is_the_classical_interval_exactly_and_one_is_plain_ppi():
    rng = np.random.default_rng(2)
    y, yhat = _biased_judge(rng, 300)
    r0 = ppi_mean(y[:40], yhat[:40], yhat[40:], lam=0)
    c = classical_mean(y[:40])
    assert r0.estimate[0] == y[:40].mean() == c.estimate[0]
    half = Z95 * y[:40].std() / np.sqrt(40)
    assert r0.lower[0] == c.lower[0] == y[:40].mean() - half
    assert r0.upper[0] == c.upper[0]
    assert r0.method == "classical"
    r1 = ppi_mean(y[:40], yhat[:40], yhat[40:], lam=1)
    rect = y[:40] - yhat[:40]
    assert r1.estimate[0] == pytest.approx(yhat[40:].mean() + rect.mean(), abs=1e-12)
    se = np.sqrt(yhat[40:].var() / 260 + rect.var() / 40)
    assert r1.se[0] == pytest.approx(se, rel=1e-12)
    assert r1.method == "ppi"


@pytest.mark.parametrize("lam", [None, 0.0, 0.3, 1.0])
@pytest.mark.parametrize("seed", [3, 4])
def test_mean_agrees_with_ppi_py(lam, seed):
    rng = np.random.default_rng(seed)
    y, yhat = _biased_judge(rng, 500)
    n = 35 + 20 * seed
    ours = ppi_mean(y[:n], yhat[:n], yhat[n:], lam=lam, confidence=0.9)
    lo, hi = ppi_py.ppi_mean_ci(y[:n], yhat[:n], yhat[n:], alpha=0.1, lam=lam)
    assert ours.lower[0] == pytest.approx(float(np.ravel(lo)[0]), abs=1e-8)
    assert ours.upper[0] == pytest.approx(float(np.ravel(hi)[0]), abs=1e-8)
    point = ppi_py.ppi_mean_pointestimate(y[:n], yhat[:n], yhat[n:], lam=lam)
    assert ours.estimate[0] == pytest.approx(float(np.ravel(point)[0]), abs=1e-8)
    if lam == 0.0:
        lo, hi = ppi_py.classical_mean_ci(y[:n], alpha=0.1)
        assert ours.lower[0] == pytest.approx(lo, abs=1e-12)


def test_mean_degenerate_inputs():
    y = np.array([1.0, 2, 3, 4])
    with pytest.raises(ValueError, match="at least 2 items"):
        ppi_mean(y[:1], y[:1], y)
    with pytest.raises(ValueError, match="at least 2 items"):
        ppi_mean([], [], y)
    with pytest.raises(ValueError, match="aligned"):
        ppi_mean(y, y[:3], y)
    with pytest.raises(ValueError, match=r"y \(human labels\)\[1\] is nan"):
        ppi_mean([1.0, np.nan], [1.0, 2.0], y)
    with pytest.raises(ValueError, match="lam must lie"):
        ppi_mean(y, y, y, lam=1.5)
    with pytest.raises(ValueError, match="every item is labelled"):
        ppi_mean(y, y, [], lam=0.5)
    allr = ppi_mean(y, y * 2, [])  # every item labelled: the classical interval
    assert allr.lam == 0 and allr.estimate[0] == 2.5 and "every item" in allr.notes[0]
    const = ppi_mean(y, np.ones(4), np.ones(10))  # constant judge: no information
    assert const.lam == 0 and "constant" in const.notes[0]
    assert const.upper[0] == classical_mean(y).upper[0]


# ----------------------------------------------------------------------- Bradley–Terry


def _bt_sim(rng, theta, m, n_lab, *, copy=0.7, bias=None):
    """Human outcomes from theta; the judge copies the human with probability ``copy``, else
    answers from biased strengths."""
    k = len(theta)
    f = rng.integers(0, k, m)
    s = (f + rng.integers(1, k, m)) % k
    hum = (rng.random(m) < expit(theta[f] - theta[s])).astype(float)
    tj = theta + (np.zeros(k) if bias is None else bias)
    own = (rng.random(m) < expit(tj[f] - tj[s])).astype(float)
    jud = np.where(rng.random(m) < copy, hum, own)
    lab = np.zeros(m, bool)
    lab[rng.choice(m, n_lab, replace=False)] = True
    return f, s, np.where(lab, hum, np.nan), jud, lab


def test_bt_covers_simulated_strengths_and_is_narrower():
    rng = np.random.default_rng(5)
    theta = np.array([-1.0, -0.4, 0.0, 0.3, 1.1])
    theta = theta - theta.mean()
    bias = np.array([0.8, 0.0, 0.0, 0.0, -0.6])
    reps, cover, cover_cl, w_ppi, w_cl = 150, 0, 0, [], []
    for _ in range(reps):
        f, s, hum, jud, lab = _bt_sim(rng, theta, 1200, 200, bias=bias)
        r = ppi_bradley_terry(f, s, hum, jud, lab, 5)
        c = ppi_bradley_terry(f, s, hum, jud, lab, 5, lam=0)
        cover += ((r.lower <= theta) & (theta <= r.upper)).sum()
        cover_cl += ((c.lower <= theta) & (theta <= c.upper)).sum()
        w_ppi.append(r.width.mean())
        w_cl.append(c.width.mean())
        assert abs(r.estimate.sum()) < 1e-9  # centred gauge
    assert 0.90 <= cover / (5 * reps) <= 0.985
    assert 0.90 <= cover_cl / (5 * reps) <= 0.985
    assert np.median(w_ppi) < 0.85 * np.median(w_cl)


def test_bt_judge_only_would_be_biased():
    """Plain BT on the judge alone misses; PPI++ does not (the point of the correction)."""
    from ranking import bradley_terry

    rng = np.random.default_rng(6)
    theta = np.array([-1.0, 0.0, 1.0])
    f, s, hum, jud, lab = _bt_sim(rng, theta, 6000, 600, copy=0.0, bias=np.array([1.5, 0, -1.5]))
    judge = bradley_terry(first=f, second=s, outcome=jud, n_items=3)
    assert judge.scores[0] > theta[0] + 0.5
    r = ppi_bradley_terry(f, s, hum, jud, lab, 3)
    assert np.all((r.lower <= theta) & (theta <= r.upper))


def test_bt_lam_zero_is_the_human_fit_and_matches_ppi_py_logistic():
    from ranking import bradley_terry

    rng = np.random.default_rng(7)
    theta = np.array([-0.8, -0.1, 0.2, 0.7])
    f, s, hum, jud, lab = _bt_sim(rng, theta, 900, 250)
    r0 = ppi_bradley_terry(f, s, hum, jud, lab, 4, lam=0)
    human = bradley_terry(first=f[lab], second=s[lab], outcome=hum[lab], n_items=4)
    np.testing.assert_allclose(r0.estimate, human.scores, atol=1e-7)
    X = np.zeros((len(f), 4))
    X[np.arange(len(f)), f] = 1
    X[np.arange(len(f)), s] = -1
    X = X[:, :-1]  # ppi_py's gauge: the last score is 0
    for lam in (0.0, 0.5, 1.0):
        ours = ppi_bradley_terry(f, s, hum, jud, lab, 4, lam=lam)
        opts = {"gtol": 1e-12, "ftol": 1e-15}
        args = (X[lab], hum[lab], jud[lab], X[~lab], jud[~lab])
        est = ppi_py.ppi_logistic_pointestimate(*args, lam=lam, optimizer_options=opts)
        np.testing.assert_allclose(ours.estimate[:3] - ours.estimate[3], est, atol=1e-5)
        lo, hi = ppi_py.ppi_logistic_ci(*args, lam=lam, alpha=0.05, optimizer_options=opts)
        se_diff = np.sqrt([ours.cov[i, i] + ours.cov[3, 3] - 2 * ours.cov[i, 3] for i in range(3)])
        np.testing.assert_allclose(se_diff, (hi - lo) / (2 * Z95), rtol=1e-4)


def test_bt_degenerate_inputs():
    rng = np.random.default_rng(8)
    theta = np.array([-0.5, 0.0, 0.5, 0.0])
    f, s, hum, jud, lab = _bt_sim(rng, theta, 600, 150)
    # item 3 never in a labelled comparison: NaN with a note, the others estimated
    lab3 = lab & (f != 3) & (s != 3)
    r = ppi_bradley_terry(f, s, hum, jud, lab3, 4)
    assert np.isnan(r.estimate[3]) and np.isfinite(r.estimate[:3]).all()
    assert any("no comparison with a human label" in n for n in r.notes)
    # an item with no comparison at all
    r5 = ppi_bradley_terry(f, s, hum, jud, lab, 5)
    assert np.isnan(r5.estimate[4]) and any("no comparison:" in n for n in r5.notes)
    with pytest.raises(ValueError, match="at least 2 comparisons"):
        ppi_bradley_terry(f, s, hum, jud, np.zeros(len(f), bool), 4)
    with pytest.raises(ValueError, match="outcome_human"):
        ppi_bradley_terry(f, s, np.where(lab, np.nan, 0), jud, lab, 4)
    with pytest.raises(ValueError, match="out of range"):
        ppi_bradley_terry(f, s, hum, jud, lab, 3)
    full = ppi_bradley_terry(f, s, np.where(lab, hum, jud), jud, np.ones(len(f), bool), 4)
    assert full.lam == 0 and full.n_unlabeled == 0
    # the humans separate the items (item 0 always wins): no finite estimate without a ridge
    sep = np.where(f == 0, 1.0, np.where(s == 0, 0.0, hum))
    with pytest.raises(ValueError, match="no finite PPI estimate"):
        ppi_bradley_terry(f, s, sep, jud, lab, 4, lam=0)
    assert np.isfinite(ppi_bradley_terry(f, s, sep, jud, lab, 4, lam=0, ridge=0.01).estimate).all()


def test_result_type():
    r = ppi_mean([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], [1.0, 3.0])
    assert isinstance(r, PPIResult) and r.estimate.shape == (1,) and r.n_unlabeled == 2

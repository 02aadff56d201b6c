"""Dawid–Skene and majority vote (ranking.agreement.jury) against simulated juries and a slow
twin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ranking import dawid_skene, majority_vote


def simulate(n_items, accuracies, n_classes=3, missing=0.0, seed=0):
    """True classes and labels of judges that answer right with their accuracy, else a
    uniformly random wrong class; ``missing`` share of labels dropped (-1)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_classes, n_items)
    acc = np.asarray(accuracies)
    right = rng.random((n_items, acc.size)) < acc
    wrong = (truth[:, None] + rng.integers(1, n_classes, (n_items, acc.size))) % n_classes
    labels = np.where(right, truth[:, None], wrong)
    labels[rng.random(labels.shape) < missing] = -1
    return truth, labels


def slow_dawid_skene(labels, K, max_iter=200, tol=1e-8, smoothing=0.01):
    """Loop-by-loop Dawid–Skene EM in plain Python (the twin of ranking.agreement.dawid_skene)."""
    n, m = len(labels), len(labels[0])
    T = []
    for i in range(n):
        votes = [0.0] * K
        for j in range(m):
            if labels[i][j] >= 0:
                votes[labels[i][j]] += 1
        s = sum(votes)
        T.append([v / s if s else 0.0 for v in votes])

    def m_step(T):
        pc = [sum(T[i][k] for i in range(n)) + smoothing for k in range(K)]
        prior = [p / sum(pc) for p in pc]
        conf = []
        for j in range(m):
            cj = []
            for k in range(K):
                row = [smoothing] * K
                for i in range(n):
                    if labels[i][j] >= 0:
                        row[labels[i][j]] += T[i][k]
                s = sum(row)
                cj.append([r / s for r in row] if s > 0 else [1.0 / K] * K)
            conf.append(cj)
        return prior, conf

    def e_step(prior, conf):
        post, ll = [], 0.0
        for i in range(n):
            lj = []
            for k in range(K):
                v = math.log(prior[k])
                for j in range(m):
                    if labels[i][j] >= 0:
                        v += math.log(conf[j][k][labels[i][j]])
                lj.append(v)
            top = max(lj)
            z = top + math.log(sum(math.exp(x - top) for x in lj))
            ll += z
            post.append([math.exp(x - z) for x in lj])
        return post, ll

    prior, conf = m_step(T)
    for _ in range(max_iter):
        T, _ll = e_step(prior, conf)
        new_prior, new_conf = m_step(T)
        change = max(
            max(abs(a - b) for a, b in zip(new_prior, prior, strict=True)),
            max(
                abs(new_conf[j][k][l] - conf[j][k][l])
                for j in range(m)
                for k in range(K)
                for l in range(K)
            ),
        )
        prior, conf = new_prior, new_conf
        if change <= tol:
            break
    post, ll = e_step(prior, conf)
    return np.array(post), np.array(conf), np.array(prior), ll


def test_recovers_simulated_reliabilities_and_beats_majority():
    acc = np.array([0.95, 0.85, 0.6, 0.45, 0.4])
    truth, labels = simulate(3000, acc, n_classes=3, seed=1)
    res = dawid_skene(labels)
    assert res.converged
    diag = np.diagonal(res.confusion, axis1=1, axis2=2)  # (judges, classes)
    assert np.abs(diag - acc[:, None]).max() < 0.05
    assert np.abs(res.reliability - acc).max() < 0.03
    np.testing.assert_allclose(res.confusion.sum(axis=2), 1.0, atol=1e-12)
    np.testing.assert_allclose(res.posterior.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(res.prior, np.bincount(truth) / truth.size, atol=0.03)
    ds_acc = (res.posterior.argmax(axis=1) == truth).mean()
    shares = majority_vote(labels)
    mv = shares.argmax(axis=1)  # ties go to the lowest class
    mv_acc = (mv == truth).mean()
    assert ds_acc > mv_acc + 0.03, (ds_acc, mv_acc)
    assert ds_acc > 0.93


def test_matches_slow_twin_with_missing_labels():
    truth, labels = simulate(120, [0.9, 0.7, 0.55, 0.8], n_classes=3, missing=0.3, seed=4)
    labels[5] = -1  # an item nobody labelled
    fast = dawid_skene(labels, 3)
    post, conf, prior, ll = slow_dawid_skene(labels.tolist(), 3)
    np.testing.assert_allclose(fast.posterior, post, atol=1e-10)
    np.testing.assert_allclose(fast.confusion, conf, atol=1e-10)
    np.testing.assert_allclose(fast.prior, prior, atol=1e-10)
    assert fast.log_lik == pytest.approx(ll, abs=1e-8)
    np.testing.assert_allclose(fast.posterior[5], fast.prior, atol=1e-12)


def test_silent_judge_and_unused_class():
    truth, labels = simulate(400, [0.9, 0.8, 0.7], n_classes=2, seed=2)
    labels = np.column_stack([labels, np.full(400, -1)])  # a judge that never answers
    res = dawid_skene(labels, n_classes=4)  # classes 2 and 3 never used
    assert np.isfinite(res.confusion).all() and np.isfinite(res.log_lik)
    np.testing.assert_allclose(res.confusion[3], 0.25, atol=1e-12)
    assert res.reliability[3] == pytest.approx(0.25)
    assert res.prior[2] < 1e-3 and res.prior[3] < 1e-3
    two = dawid_skene(labels[:, :3], n_classes=2)  # the same fit without the extras
    np.testing.assert_allclose(res.reliability[:3], two.reliability, atol=1e-3)
    assert (res.posterior.argmax(axis=1) == two.posterior.argmax(axis=1)).all()
    assert (two.posterior.argmax(axis=1) == truth).mean() > 0.85
    post, conf, prior, ll = slow_dawid_skene(labels.tolist(), 4)
    np.testing.assert_allclose(res.posterior, post, atol=1e-10)


def test_log_lik_increases_with_iterations():
    _, labels = simulate(300, [0.8, 0.6, 0.7], n_classes=3, missing=0.2, seed=3)
    lls = [dawid_skene(labels, max_iter=k, tol=0).log_lik for k in (1, 3, 10, 50)]
    assert all(b >= a - 1e-9 for a, b in zip(lls[:-1], lls[1:], strict=True))
    assert lls[-1] > lls[0]


def test_majority_vote_shares():
    labels = np.array([[0, 0, 1], [2, -1, 2], [-1, -1, -1], [1, 0, 2]])
    shares = majority_vote(labels, 3)
    np.testing.assert_allclose(shares[0], [2 / 3, 1 / 3, 0])
    np.testing.assert_allclose(shares[1], [0, 0, 1])
    assert np.isnan(shares[2]).all()
    np.testing.assert_allclose(shares[3], [1 / 3, 1 / 3, 1 / 3])
    assert majority_vote(labels).shape == (4, 3)


@pytest.mark.parametrize(
    "labels, kwargs, match",
    [
        (np.zeros(3, dtype=int), {}, "shape"),
        (np.array([[0, -2]]), {}, "-1"),
        (np.array([[0.5, 1.0]]), {}, "whole"),
        (np.array([[0, 3]]), {"n_classes": 2}, "n_classes"),
        (np.array([["a", "b"]]), {}, "integer"),
    ],
)
def test_bad_labels(labels, kwargs, match):
    with pytest.raises(ValueError, match=match):
        majority_vote(labels, **kwargs)
    with pytest.raises(ValueError, match=match):
        dawid_skene(labels, **kwargs)


def test_bad_options():
    with pytest.raises(ValueError, match="smoothing"):
        dawid_skene([[0, 1]], smoothing=-1)
    with pytest.raises(ValueError, match="max_iter"):
        dawid_skene([[0, 1]], max_iter=0)

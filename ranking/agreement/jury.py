"""Juries of judges: majority vote and Dawid–Skene's reliability-weighted vote.

Several judges (LLMs, prompt templates, annotators) label the same items with one of
``n_classes`` categories; ``labels`` is an (n_items, n_judges) integer array with ``-1`` where
a judge gave no label. :func:`majority_vote` gives each item's vote shares;
:func:`dawid_skene` fits one confusion matrix per judge by EM (Dawid & Skene 1979) and gives
each item's posterior over the true class, so a reliable judge counts for more than a noisy
one. Agreement between the judges themselves is :func:`ranking.cohen_kappa` /
:func:`ranking.fleiss_kappa`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

__all__ = ["DawidSkeneResult", "dawid_skene", "majority_vote"]


@dataclass(frozen=True)
class DawidSkeneResult:
    """A Dawid–Skene fit.

    Attributes
    ----------
    posterior : ndarray, shape (n_items, n_classes)
        P(true class | the judges' labels) per item; the class prior for an item nobody
        labelled.
    confusion : ndarray, shape (n_judges, n_classes, n_classes)
        ``confusion[j, k, l]`` = P(judge j answers l | the true class is k); rows sum to 1.
    prior : ndarray, shape (n_classes,)
        The share of each true class.
    reliability : ndarray, shape (n_judges,)
        P(judge j's answer is the true class) under the fitted model:
        ``sum_k prior[k] * confusion[j, k, k]`` (``1 / n_classes`` for a judge that never
        answers).
    log_lik : float
        Marginal log-likelihood of the observed labels at the fitted parameters.
    converged : bool
        The largest change of a parameter fell below ``tol`` within ``max_iter`` iterations.
    n_iter : int
        EM iterations run.
    """

    posterior: np.ndarray
    confusion: np.ndarray
    prior: np.ndarray
    reliability: np.ndarray
    log_lik: float
    converged: bool
    n_iter: int


def _check_labels(labels, n_classes):
    """(labels as int64 (n_items, n_judges), n_classes) or a ValueError saying what is wrong."""
    arr = np.asarray(labels)
    if arr.ndim != 2:
        raise ValueError(f"labels must have shape (n_items, n_judges); got {arr.shape}")
    if arr.size and arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
            raise ValueError("labels must be whole class codes 0..n_classes-1, -1 for missing")
    elif arr.size and arr.dtype.kind not in "iub":
        raise ValueError(f"labels must be integer class codes; got dtype {arr.dtype}")
    L = arr.astype(np.int64)
    if (L < -1).any():
        raise ValueError("labels must be class codes 0..n_classes-1, or -1 for a missing label")
    top = int(L.max()) + 1 if L.size else 0
    if n_classes is None:
        n_classes = max(top, 1)
    n_classes = int(n_classes)
    if n_classes < 1:
        raise ValueError(f"n_classes must be at least 1; got {n_classes}")
    if top > n_classes:
        raise ValueError(f"labels hold class {top - 1} but n_classes is {n_classes}")
    return L, n_classes


def _one_hot(L, n_classes):
    """(n_items, n_judges, n_classes) float one-hot of the labels; all zero where missing."""
    O = np.zeros((*L.shape, n_classes))
    i, j = np.nonzero(L >= 0)
    O[i, j, L[i, j]] = 1.0
    return O


def majority_vote(labels, n_classes=None):
    """Each item's vote shares.

    Parameters
    ----------
    labels : array_like of int, shape (n_items, n_judges)
        Class codes 0..n_classes-1; -1 where a judge gave no label.
    n_classes : int, optional
        Number of classes; default the largest code + 1.

    Returns
    -------
    ndarray, shape (n_items, n_classes)
        Share of the item's labels in each class (rows sum to 1); NaN rows for items
        nobody labelled.

    Raises
    ------
    ValueError
        Labels not 2-D, not whole codes, below -1 or not below ``n_classes``.
    """
    L, K = _check_labels(labels, n_classes)
    counts = _one_hot(L, K).sum(axis=1)
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / total


def _m_step(T, O, smoothing):
    """Prior and confusion matrices from soft class assignments T (posterior mode of the
    Dirichlet-smoothed likelihood: ``smoothing`` pseudo-counts in every cell)."""
    K = T.shape[1]
    prior = T.sum(axis=0) + smoothing
    prior = prior / prior.sum() if prior.sum() > 0 else np.full(K, 1.0 / K)
    counts = np.einsum("ik,ijl->jkl", T, O) + smoothing
    rows = counts.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = counts / rows
    conf[np.broadcast_to(rows == 0, conf.shape)] = 1.0 / K  # no evidence: answers uniform
    return prior, conf


def _e_step(prior, conf, O):
    """Log joint per item and class, the posterior and the marginal log-likelihood."""
    with np.errstate(divide="ignore"):
        log_conf = np.log(conf)
        log_prior = np.log(prior)
    # an unobserved answer contributes nothing: mask instead of multiplying 0 * -inf
    safe = np.where(np.isfinite(log_conf), log_conf, -1e300)
    log_joint = log_prior[None, :] + np.einsum("ijl,jkl->ik", O, safe)
    norm = logsumexp(log_joint, axis=1, keepdims=True)
    post = np.exp(log_joint - norm)
    return post, float(norm.sum())


def dawid_skene(labels, n_classes=None, *, max_iter=200, tol=1e-8, smoothing=0.01):
    """Reliability-weighted consensus of several judges by Dawid–Skene EM.

    Starts from the majority vote's shares, then alternates the M step (class prior and one
    confusion matrix per judge, with ``smoothing`` pseudo-counts in every cell: a class no
    judge used and a judge that never answers stay finite) and the E step (posterior of each
    item's true class given every judge's label, missing labels left out).

    Parameters
    ----------
    labels, n_classes
        The judges' class codes (n_items, n_judges; -1 where a judge gave no label) and
        the number of classes, as in :func:`majority_vote`.
    max_iter : int
        Most EM iterations.
    tol : float
        Stop when no prior or confusion entry changes by more than ``tol``.
    smoothing : float
        Laplace pseudo-count added to every confusion cell and class count (>= 0).

    Returns
    -------
    DawidSkeneResult
        Posterior, confusion matrices, prior, each judge's reliability, log-likelihood.

    Raises
    ------
    ValueError
        Labels not 2-D or not valid codes, negative smoothing, max_iter < 1.

    Notes
    -----
    Items nobody labelled get the prior as posterior and do not move the fit. The fit is
    a local optimum; the majority-vote start keeps class k meaning "true class k" (it
    avoids the label-swapped optimum that a random start can reach).
    """
    L, K = _check_labels(labels, n_classes)
    if not (float(smoothing) >= 0.0):
        raise ValueError(f"smoothing must be >= 0; got {smoothing!r}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be at least 1; got {max_iter!r}")
    O = _one_hot(L, K)
    T = majority_vote(L, K)
    T[np.isnan(T)] = 0.0  # unlabelled items carry no weight in the first M step
    prior, conf = _m_step(T, O, smoothing)
    converged = False
    n_iter = 0
    for it in range(1, int(max_iter) + 1):
        n_iter = it
        T, _ = _e_step(prior, conf, O)
        new_prior, new_conf = _m_step(T, O, smoothing)
        change = max(
            float(np.abs(new_prior - prior).max(initial=0.0)),
            float(np.abs(new_conf - conf).max(initial=0.0)),
        )
        prior, conf = new_prior, new_conf
        if change <= tol:
            converged = True
            break
    post, log_lik = _e_step(prior, conf, O)
    reliability = np.einsum("k,jkk->j", prior, conf)
    return DawidSkeneResult(
        posterior=post,
        confusion=conf,
        prior=prior,
        reliability=reliability,
        log_lik=log_lik,
        converged=converged,
        n_iter=n_iter,
    )

"""Timing of re-ranking every context after a threshold change, with a numpy/scipy peer.

    .venv/bin/python benchmarks/bench_rerank.py [--repeats 200]

What the dashboard recomputes when the user moves the tau slider on a 100 x 16 x 16 P
(issue 3 target: at most 10 ms): win-ratio scores, position bias per context, pairwise
accuracy per context and Spearman of the scores with the reference per context. The first
call (numba compile or cache load) is reported apart from the warm median. The peer does the
same with numpy (vectorised win-ratio, bias and accuracy) and a loop of
``scipy.stats.spearmanr`` calls, in the same process; the values are checked to agree.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from _timing import median_ms  # noqa: E402
from scipy import stats  # noqa: E402

from ranking import (  # noqa: E402
    pairwise_accuracy,
    position_bias,
    spearman,
    win_ratio,
)


def simulate(n_contexts=100, n_items=16, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n_contexts, n_items))
    logit = (
        truth[:, :, None]
        - truth[:, None, :]
        + 0.5
        + rng.normal(size=(n_contexts, n_items, n_items))
    )
    P = 1 / (1 + np.exp(-logit))
    idx = np.arange(n_items)
    P[:, idx, idx] = np.nan
    return P, truth


def rerank(P, ref, tau):
    scores = win_ratio(P, tau)
    return (
        scores,
        position_bias(P, tau, per_context=True),
        pairwise_accuracy(P, ref, tau, per_context=True),
        spearman(scores, ref),
    )


def rerank_peer(P, ref, tau):
    present = np.isfinite(P)
    d = np.where(present, (P > tau) + 0.5 * (P == tau), 0.0)
    wins = d.sum(axis=2) + (present - d).sum(axis=1)
    cnt = present.sum(axis=2) + present.sum(axis=1)
    scores = wins / cnt
    bias = d.sum(axis=(1, 2)) / present.sum(axis=(1, 2))
    diff = ref[:, :, None] - ref[:, None, :]
    use = present & (diff != 0)
    hit = np.where(diff > 0, d, 1.0 - d)
    acc = np.where(use, hit, 0.0).sum(axis=(1, 2)) / use.sum(axis=(1, 2))
    rho = np.array([stats.spearmanr(scores[c], ref[c])[0] for c in range(P.shape[0])])
    return scores, bias, acc, rho


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    P, ref = simulate()
    t0 = time.perf_counter()
    rerank(P, ref, 0.5)
    print(f"first call (numba compile or cache load): {time.perf_counter() - t0:.2f} s")
    taus = np.linspace(0.3, 0.7, 41)
    state = {"k": 0}

    def ours():
        state["k"] += 1
        return rerank(P, ref, taus[state["k"] % taus.size])

    def peer():
        state["k"] += 1
        return rerank_peer(P, ref, taus[state["k"] % taus.size])

    for a, b in zip(rerank(P, ref, 0.55), rerank_peer(P, ref, 0.55), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)
    t_ours = median_ms(ours, args.repeats, warm_up=False)
    t_peer = median_ms(peer, max(20, args.repeats // 10), warm_up=False)
    print(
        f"re-rank 100 x 16 x 16 after a tau change (win-ratio + position bias + pairwise "
        f"accuracy + Spearman): median {t_ours:.2f} ms over {args.repeats}; target <= 10 ms"
    )
    print(
        f"peer (numpy + scipy.spearmanr loop): median {t_peer:.2f} ms; "
        f"ratio peer/ours = {t_peer / t_ours:.1f}x (values agree to 1e-12)"
    )


if __name__ == "__main__":
    main()

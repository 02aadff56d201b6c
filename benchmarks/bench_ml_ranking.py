"""Exact maximum-likelihood ranking speed (DP over subsets) and the heuristic's quality.

Run:  .venv/bin/python benchmarks/bench_ml_ranking.py [--repeats 5]

Reports warm medians per context for the exact DP at N = 16 (target: at most 5 ms per
context) on all threads and on one thread, N = 20, the insertion heuristic at N = 50 / 100,
and, as the peer, brute force over permutations (numpy, vectorised per permutation) at
N = 8, the largest size where that is bearable. Compile time is reported separately.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from _timing import wall_and_cpu

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking import ml_ranking  # noqa: E402
from ranking.comparative.max_likelihood import _pair_terms  # noqa: E402


def random_P(rng, n_contexts, n_items, p_missing=0.1):
    P = rng.random((n_contexts, n_items, n_items))
    P[rng.random(P.shape) < p_missing] = np.nan
    idx = np.arange(n_items)
    P[:, idx, idx] = np.nan
    P[:, idx[:-1], idx[1:]] = 0.6  # every item compared
    return P


def brute_force(P2):
    """Best order by trying every permutation (the peer; never used by the library)."""
    A = _pair_terms(P2[None], None)[0]
    n = A.shape[0]
    upper = np.triu(np.ones((n, n), bool), 1)
    best, best_perm = -np.inf, None
    for perm in itertools.permutations(range(n)):
        p = np.array(perm)
        v = A[np.ix_(p, p)][upper].sum()
        if v > best:
            best, best_perm = v, perm
    return best_perm, best


def timed(fn, repeats):
    walls, cpus = wall_and_cpu(fn, repeats)
    return statistics.median(walls), statistics.median(cpus)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    import numba

    rng = np.random.default_rng(0)
    t = time.perf_counter()
    ml_ranking(random_P(rng, 2, 5))
    ml_ranking(random_P(rng, 1, 5), exact_max_n=2)
    print(f"first calls (compile or cache load): {time.perf_counter() - t:.2f} s")
    n_threads = numba.get_num_threads()

    P16 = random_P(rng, 100, 16)
    for threads in sorted({n_threads, 1}, reverse=True):
        numba.set_num_threads(threads)
        ml_ranking(P16[:2])
        wall, cpu = timed(lambda: ml_ranking(P16), args.repeats)
        print(
            f"exact N=16, 100 contexts, {threads} thread(s): {wall / 100 * 1e3:.2f} ms per "
            f"context wall ({cpu / 100 * 1e3:.2f} ms CPU)"
        )
    numba.set_num_threads(n_threads)

    P20 = random_P(rng, 4, 20)
    wall, cpu = timed(lambda: ml_ranking(P20), max(1, args.repeats // 2))
    print(
        f"exact N=20, 4 contexts: {wall / 4 * 1e3:.1f} ms per context wall "
        f"({cpu / 4 * 1e3:.1f} ms CPU)"
    )

    for n in (50, 100):
        Pn = random_P(rng, 10, n)
        wall, _ = timed(lambda Pn=Pn: ml_ranking(Pn), args.repeats)
        print(
            f"heuristic N={n}, 10 contexts: {wall / 10 * 1e3:.2f} ms per context "
            f"(includes the Bradley–Terry start)"
        )

    exact = ml_ranking(P16)
    heur = ml_ranking(P16, exact_max_n=0)
    gap = exact.log_likelihood - heur.log_likelihood
    same = (exact.order == heur.order).all(axis=1).mean()
    print(
        f"heuristic vs exact at N=16 (100 contexts): same order in {same:.0%}, "
        f"log-lik gap median {np.median(gap):.2e}, max {gap.max():.2e}"
    )

    P8 = random_P(rng, 3, 8)
    wall_dp, _ = timed(lambda: ml_ranking(P8), args.repeats)
    t = time.perf_counter()
    for c in range(3):
        _, val = brute_force(P8[c])
        assert abs(val - ml_ranking(P8[c]).log_likelihood[0]) < 1e-9
    wall_bf = time.perf_counter() - t
    print(
        f"N=8: exact DP {wall_dp / 3 * 1e3:.3f} ms per context vs brute force "
        f"{wall_bf / 3 * 1e3:.0f} ms per context ({wall_bf / wall_dp:.0f}x); same optimum"
    )


if __name__ == "__main__":
    main()

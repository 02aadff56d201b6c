"""Bradley–Terry speed: ranking.bradley_terry against choix.ilsr_pairwise at equal accuracy.

Run:  .venv/bin/python benchmarks/bench_bradley_terry.py [--repeats 7] [--choix-repeats 3]

Data: a seeded BT model (theta ~ N(0, 1)) on a connected random comparison graph (a random
Hamiltonian path plus uniformly random pairs), hard outcomes drawn from the model.

1. 2,000 items / 200,000 comparisons: both solvers are timed (medians) and their max |delta
   theta| against a fully converged fit is reported (both must be < 1e-6). The reference is
   our Newton with tol 1e-14, certified by the max |gradient| of the log-likelihood computed
   independently in numpy. choix runs with its default tol (1e-8 on the L1 change), and with
   tighter tols only if needed to reach 1e-6.
2. 20,000 items / 2,000,000 comparisons: our solver only (choix would need ~100 s and ~10 GB):
   median time, tracemalloc peak of numpy allocations inside the call, and the process peak
   RSS (ru_maxrss, all of Python, numba and the data included).

Compile time is reported separately (first call in this process: JIT compile, or loading the
on-disk cache when it is warm).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking import bradley_terry  # noqa: E402


def make_data(n_items, n_comparisons, seed=0):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n_items)
    n_rand = n_comparisons - (n_items - 1)
    first = np.concatenate([perm[:-1], rng.integers(0, n_items, n_rand)])
    second = np.concatenate([perm[1:], rng.integers(0, n_items, n_rand)])
    same = first == second
    second[same] = (second[same] + 1 + rng.integers(0, n_items - 1, same.sum())) % n_items
    theta = rng.normal(size=n_items)
    p = 1.0 / (1.0 + np.exp(-(theta[first] - theta[second])))
    outcome = (rng.random(n_comparisons) < p).astype(np.float64)
    return first, second, outcome


def max_gradient(theta, first, second, outcome, n_items):
    """max |d loglik / d theta| in plain numpy: an optimality certificate for the reference."""
    s = 1.0 / (1.0 + np.exp(-(theta[first] - theta[second])))
    r = outcome - s
    g = np.bincount(first, r, minlength=n_items) - np.bincount(second, r, minlength=n_items)
    return float(np.abs(g).max())


def timed(fn, repeats):
    """(median wall seconds, last result, wall times, median CPU seconds of this process)."""
    times, cpus = [], []
    out = None
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(times), out, times, statistics.median(cpus)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--choix-repeats", type=int, default=3)
    ap.add_argument("--skip-choix", action="store_true")
    args = ap.parse_args()

    import numba

    print(f"numba threads: {numba.get_num_threads()}")
    f, s, y = make_data(50, 500, seed=1)
    t = time.perf_counter()
    bradley_terry(first=f, second=s, outcome=y, n_items=50)
    print(f"first call (compile or cache load): {time.perf_counter() - t:.2f} s")

    # ---------------------------------------------------------------- 2,000 / 200,000
    n_items, n_comp = 2_000, 200_000
    f, s, y = make_data(n_items, n_comp, seed=0)
    ref = bradley_terry(first=f, second=s, outcome=y, n_items=n_items, tol=1e-14, max_iter=100)
    print(f"\n== {n_items:,} items / {n_comp:,} comparisons ==")
    print(
        f"reference: finite MLE {ref.finite_mle}, max |grad| at reference "
        f"{max_gradient(ref.scores, f, s, y, n_items):.2e}"
    )
    med, res, _, cpu = timed(
        lambda: bradley_terry(first=f, second=s, outcome=y, n_items=n_items), args.repeats
    )
    err = float(np.abs(res.scores - ref.scores).max())
    print(
        f"ranking.bradley_terry: median {med * 1e3:.1f} ms wall ({cpu * 1e3:.1f} ms CPU, "
        f"all threads) over {args.repeats}, "
        f"{res.n_iter} Newton iterations, max |dtheta| vs reference {err:.1e}"
    )
    if not args.skip_choix:
        import choix

        data = np.where(y[:, None] == 1.0, np.c_[f, s], np.c_[s, f])
        data = [tuple(row) for row in data.tolist()]
        for tol in (1e-8, 1e-10, 1e-12):
            med_c, out_c, _, cpu_c = timed(
                lambda tol=tol: choix.ilsr_pairwise(n_items, data, tol=tol, max_iter=1000),
                args.choix_repeats,
            )
            out_c = out_c - out_c.mean()
            err_c = float(np.abs(out_c - ref.scores).max())
            print(
                f"choix.ilsr_pairwise(tol={tol:g}): median {med_c:.2f} s wall ({cpu_c:.2f} s "
                f"CPU) over "
                f"{args.choix_repeats}, max |dtheta| vs reference {err_c:.1e}"
            )
            if err_c < 1e-6:
                break
        print(f"speed-up at equal accuracy (< 1e-6): {med_c / med:.0f}x")

    # ---------------------------------------------------------------- 20,000 / 2,000,000
    n_items, n_comp = 20_000, 2_000_000
    f, s, y = make_data(n_items, n_comp, seed=0)
    print(f"\n== {n_items:,} items / {n_comp:,} comparisons (choix not run) ==")
    bradley_terry(first=f, second=s, outcome=y, n_items=n_items)  # warm
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    res = bradley_terry(first=f, second=s, outcome=y, n_items=n_items)
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    med, res, times, cpu = timed(
        lambda: bradley_terry(first=f, second=s, outcome=y, n_items=n_items), args.repeats
    )
    ref = bradley_terry(first=f, second=s, outcome=y, n_items=n_items, tol=1e-14, max_iter=100)
    err = float(np.abs(res.scores - ref.scores).max())
    print(
        f"ranking.bradley_terry: median {med:.3f} s wall over {args.repeats} "
        f"(min {min(times):.3f}, max {max(times):.3f}; median CPU {cpu:.3f} s), "
        f"{res.n_iter} Newton iterations, "
        f"max |dtheta| vs tol-1e-14 run {err:.1e}, max |grad| at that run "
        f"{max_gradient(ref.scores, f, s, y, n_items):.1e}"
    )
    print(
        f"memory: tracemalloc peak inside the call {traced_peak / 2**20:.0f} MiB; process "
        f"peak RSS {rss_after:.0f} MiB (before the call {rss_before:.0f} MiB)"
    )


if __name__ == "__main__":
    main()

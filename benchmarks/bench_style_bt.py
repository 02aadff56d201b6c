"""Timing of style-controlled Bradley–Terry (``bradley_terry(features=...)``), with scipy as peer.

    .venv/bin/python benchmarks/bench_style_bt.py [--repeats 7]

Cases (targets from issue 13): a SummEval-size candidate-level fit (1,200 items = 100
contexts x 12 candidates, 8,800 comparisons, 5 covariates; target < 30 ms) and a system-level
fit (16 items, 8,800 comparisons; target < 5 ms), plus controlled_win_rates and the
plain fit without features. The peer is scipy.optimize.minimize (BFGS with the analytic
gradient) on the same log-likelihood, run in the same process (one run: it is slow). Medians.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from scipy import optimize  # noqa: E402

import ranking as rk  # noqa: E402


def simulate(n_items, m, k, seed=0, per_context=None):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_items)
    if per_context:
        ctx = rng.integers(0, n_items // per_context, m)
        first = ctx * per_context + rng.integers(0, per_context, m)
        second = (
            ctx * per_context
            + (first % per_context + rng.integers(1, per_context, m)) % per_context
        )
    else:
        first = rng.integers(0, n_items, m)
        second = (first + rng.integers(1, n_items, m)) % n_items
    words = np.exp(rng.normal(4.5, 0.6, (2, m)))
    X = np.column_stack(
        [np.ones(m), (words[0] - words[1]) / words.sum(0), rng.normal(0, 0.3, (m, k - 2))]
    )
    beta = np.r_[0.3, 0.8, np.zeros(k - 2)]
    p = 1 / (1 + np.exp(-(theta[first] - theta[second] + X @ beta)))
    return first, second, (rng.random(m) < p).astype(float), X


def median_ms(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def scipy_peer(first, second, y, X, n):
    def f(x):
        th = np.r_[0.0, x[: n - 1]]
        d = th[first] - th[second] + X @ x[n - 1 :]
        s = 1 / (1 + np.exp(-d))
        ll = y * -np.logaddexp(0, -d) + (1 - y) * -np.logaddexp(0, d)
        r = y - s
        g = np.bincount(first, r, n) - np.bincount(second, r, n)
        return -ll.sum(), -np.r_[g[1:], X.T @ r]

    x0 = np.zeros(n - 1 + X.shape[1])
    t = time.perf_counter()
    res = optimize.minimize(
        f, x0, jac=True, method="BFGS", options={"gtol": 1e-6, "maxiter": 50_000}
    )
    return (time.perf_counter() - t) * 1e3, res.x[n - 1 :]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    cases = [
        ("candidate-level: 1,200 items, 8,800 comparisons, 5 covariates", 1200, 8800, 5, 12),
        ("system-level: 16 items, 8,800 comparisons, 5 covariates", 16, 8800, 5, None),
    ]
    for label, n, m, k, per in cases:
        first, second, y, X = simulate(n, m, k, per_context=per)
        t = time.perf_counter()
        res = rk.bradley_terry(first=first, second=second, outcome=y, n_items=n, features=X)
        first_call = (time.perf_counter() - t) * 1e3
        kw = dict(first=first, second=second, outcome=y, n_items=n)
        fit = median_ms(functools.partial(rk.bradley_terry, **kw, features=X), args.repeats)
        plain = median_ms(functools.partial(rk.bradley_terry, **kw), args.repeats)
        print(f"{label}")
        print(f"  first call (compile / cache load): {first_call:8.1f} ms")
        print(f"  features fit (median):             {fit:8.2f} ms  ({res.n_iter} Newton steps)")
        print(f"  plain fit, no features (median):   {plain:8.2f} ms")
        if n <= 16:
            wr = median_ms(functools.partial(rk.controlled_win_rates, res, 0), args.repeats)
            print(f"  controlled_win_rates (median):     {wr:8.2f} ms")
        peer, beta = scipy_peer(first, second, y, X, n)
        print(
            f"  scipy BFGS peer (one run):         {peer:8.1f} ms  "
            f"(x{peer / fit:.0f}; max |beta diff| {np.nanmax(np.abs(beta - res.coef)):.1e})"
        )


if __name__ == "__main__":
    main()

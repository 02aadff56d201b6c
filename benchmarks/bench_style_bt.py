"""Timing of style-controlled Bradley–Terry (``bradley_terry(features=...)``), with scipy as peer,
and of the style and tie-model fits on LLMFAO (issue 14), with evalica and scipy as peers.

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
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from _timing import median_ms  # noqa: E402
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
    llmfao(args.repeats)


def llmfao_votes():
    """LLMFAO's votes as shipped with evalica (8,931 comparisons, 59 systems, 39 % ties)."""
    import pandas as pd

    from data.paths import data_dirs

    path = data_dirs()[0] / "llmfao_evalica" / "llmfao.csv"
    if not path.exists():
        return None
    votes = pd.read_csv(path, dtype=str)
    items = sorted(set(votes["left"]) | set(votes["right"]))
    index = {k: i for i, k in enumerate(items)}
    w = votes["winner"].to_numpy(dtype=object)
    outcome = np.where(w == "left", 1.0, np.where(w == "right", 0.0, 0.5))
    return votes, votes["left"].map(index).to_numpy(), votes["right"].map(index).to_numpy(), outcome


def scipy_rao_kupper(first, second, y, n):
    """The Rao–Kupper log-likelihood maximised by scipy (BFGS, numeric gradient); ms, theta."""
    from ranking.bradley_terry import RAO_KUPPER, pair_probabilities

    t = (y == 0.5).astype(float)
    win, loss = y - t / 2, 1 - y - t / 2

    def negll(v):
        theta = np.r_[0.0, v[: n - 1]]
        pw, pt, pl = pair_probabilities(RAO_KUPPER, theta[first] - theta[second], np.exp(v[-1]))
        return -(win * np.log(pw) + t * np.log(pt) + loss * np.log(pl)).sum()

    start = time.perf_counter()
    res = optimize.minimize(negll, np.r_[np.zeros(n - 1), np.log(0.3)], method="BFGS")
    return (time.perf_counter() - start) * 1e3, float(np.exp(np.exp(res.x[-1])))


def llmfao(repeats):
    loaded = llmfao_votes()
    if loaded is None:
        print("LLMFAO: llmfao_evalica/llmfao.csv not in the data folder; skipped")
        return
    votes, first, second, y = loaded
    n, m = int(max(first.max(), second.max())) + 1, len(y)
    print(f"LLMFAO: {n} systems, {m:,} comparisons, {np.mean(y == 0.5):.0%} ties")
    kw = dict(first=first, second=second, outcome=y, n_items=n)
    # LLMFAO ships no texts: a first-slot constant and 4 seeded covariates stand in for style
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(m), rng.normal(0, 0.3, (m, 4))])
    rows = [
        ("plain Bradley–Terry (half-win)", {}),
        ("style-controlled (5 covariates)", dict(features=X)),
        ("style-controlled + Fisher", dict(features=X, intervals="fisher")),
        ("Davidson", dict(ties="davidson")),
        ("Davidson + Fisher", dict(ties="davidson", intervals="fisher")),
        ("Rao–Kupper", dict(ties="rao-kupper")),
        ("Rao–Kupper + Fisher", dict(ties="rao-kupper", intervals="fisher")),
        ("Davidson + 200 bootstrap refits", dict(ties="davidson", intervals="bootstrap",
                                                 random_state=0)),
    ]  # fmt: skip
    for label, extra in rows:
        ms = median_ms(functools.partial(rk.bradley_terry, **kw, **extra), repeats)
        print(f"  {label:<34s} {ms:8.2f} ms (median)")
    dav = rk.bradley_terry(**kw, ties="davidson")
    try:
        import evalica
    except ImportError:
        evalica = None
    if evalica is not None:
        code = {"left": evalica.Winner.X, "right": evalica.Winner.Y, "tie": evalica.Winner.Draw}
        winners = [code[x] for x in votes["winner"]]
        run = functools.partial(evalica.newman, votes["left"], votes["right"], winners,
                                tolerance=1e-8, limit=10_000)  # fmt: skip
        ms = median_ms(run, repeats)
        v = run().v
        print(f"  peer evalica.newman (Davidson)     {ms:8.2f} ms (median; nu = 2 v = {2 * v:.6f},"
              f" ours {dav.tie_param:.6f})")  # fmt: skip
        run = functools.partial(evalica.bradley_terry, votes["left"], votes["right"], winners,
                                tie_weight=0.5)  # fmt: skip
        print(f"  peer evalica.bradley_terry         {median_ms(run, repeats):8.2f} ms (median)")
    ms, theta = scipy_rao_kupper(first, second, y, n)
    rao = rk.bradley_terry(**kw, ties="rao-kupper")
    print(f"  peer scipy BFGS (Rao–Kupper)       {ms:8.1f} ms (one run; theta {theta:.6f}, "
          f"ours {rao.tie_param:.6f})")  # fmt: skip
    peer, beta = scipy_peer(first, second, y, X, n)
    print(f"  peer scipy BFGS (style)            {peer:8.1f} ms (one run)")
    import data
    from data.comparative.ties import tie_models

    ds = data.load_benchmark("llmfao")
    c = ds.comparisons
    pool = c[c["judge"].astype(str).str.startswith("human:")].assign(judge="pool")
    run = functools.partial(tie_models, pool, attribute="overall", judge="pool",
                            candidates=ds.candidates)  # fmt: skip
    print(f"  data.ties.tie_models (page table)  {median_ms(run, repeats):8.2f} ms (median)")


if __name__ == "__main__":
    main()

"""Arena scale: Bradley–Terry + 1,000 bootstrap replicates + rank intervals on 10M comparisons.

Run:  .venv/bin/python benchmarks/bench_arena.py [--repeats 3] [--n 10000000] [--fastchat-rounds 2]

Data: a seeded simulated arena, 129 systems with theta ~ N(0, 1), 10,000,000 comparisons, about
20 % ties, pair frequencies as uneven as the Arena's (each system's popularity is log-normal with
sd 1.5; a pair is drawn with probability proportional to the product of the two popularities),
the presentation order random.

Timed (medians of ``--repeats``; compile time apart, from a first call on a small problem):

1. ours: ``ranking.bradley_terry(first=, second=, outcome=, intervals="bootstrap", n_boot=1000)``
   (folding into pairs and cells, the fit, 1,000 multinomial replicates refitted warm-started)
   plus ``ranking.rank_intervals(scores, samples=...)``; and the plain fit alone.
2. evalica 0.4.2 ``evalica.bradley_terry`` (its Rust solver, default tolerance) on the same
   10M comparisons and on the first 2M: system indices as numpy arrays, winners as the list
   of ``evalica.Winner`` its binding needs (built outside the timed call).
3. FastChat's Arena bootstrap (fastchat/serve/monitor/elo_analysis.py, lm-sys/FastChat):
   per round ``battles.sample(frac=1.0, replace=True)`` of a pandas DataFrame, pivot tables of
   wins and ties, sklearn ``LogisticRegression(fit_intercept=False, penalty=None, tol=1e-6)``
   on one weighted row per ordered pair. Reimplemented faithfully here (not imported); a few
   rounds timed, the 1,000 rounds extrapolated (said so in the output).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranking import bradley_terry, rank_intervals  # noqa: E402

N_SYSTEMS = 129


def make_arena(n, seed=0):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=N_SYSTEMS)
    pop = rng.lognormal(0.0, 1.5, N_SYSTEMS)
    i, j = np.triu_indices(N_SYSTEMS, 1)
    p = pop[i] * pop[j]
    pair = rng.choice(i.size, size=n, p=p / p.sum())
    swap = rng.random(n) < 0.5
    first = np.where(swap, j[pair], i[pair]).astype(np.int64)
    second = np.where(swap, i[pair], j[pair]).astype(np.int64)
    win = 1.0 / (1.0 + np.exp(-(theta[first] - theta[second])))
    outcome = (rng.random(n) < win).astype(np.float64)
    outcome[rng.random(n) < 0.2] = 0.5
    return first, second, outcome, theta, int(np.unique(pair).size)


def timed(fn, repeats):
    times = []
    out = None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def ours(first, second, outcome, n_boot):
    res = bradley_terry(
        first=first, second=second, outcome=outcome, n_items=N_SYSTEMS,
        intervals="bootstrap", n_boot=n_boot, random_state=0,
    )  # fmt: skip
    return res, rank_intervals(res.scores, samples=res.samples)


def evalica_winners(outcome):
    """evalica's winners: a list of ``evalica.Winner`` (its Rust binding takes no ndarray)."""
    import evalica

    kinds = [evalica.Winner.Y, evalica.Winner.Draw, evalica.Winner.X]
    return [kinds[k] for k in np.rint(outcome * 2).astype(np.int64).tolist()]


def evalica_bt(first, second, winners):
    import evalica

    return evalica.bradley_terry(first, second, winners)


def fastchat_round(battles, rng_seed):
    """One FastChat bootstrap round: resample the battles, pivot, weighted logistic regression."""
    import warnings

    import pandas as pd
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    # FastChat's settings as they are: penalty=None (deprecated in sklearn 1.8) and lbfgs's
    # default 100 iterations, which it often exhausts on Arena data
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    df = battles.sample(frac=1.0, replace=True, random_state=rng_seed)
    a_win = pd.pivot_table(
        df[df["winner"] == "model_a"], index="model_a", columns="model_b", aggfunc="size",
        fill_value=0,
    )  # fmt: skip
    tie = pd.pivot_table(
        df[df["winner"] == "tie"], index="model_a", columns="model_b", aggfunc="size",
        fill_value=0,
    )  # fmt: skip
    b_win = pd.pivot_table(
        df[df["winner"] == "model_b"], index="model_a", columns="model_b", aggfunc="size",
        fill_value=0,
    )  # fmt: skip
    models = pd.Index(sorted(set(df["model_a"]) | set(df["model_b"])))
    full = [t.reindex(index=models, columns=models, fill_value=0) for t in (a_win, tie, b_win)]
    a_win, tie, b_win = (t.to_numpy(dtype=float) for t in full)
    win = 2 * a_win + 2 * b_win.T + tie + tie.T  # a tie is one win each, a win counts twice
    p = len(models)
    rows, ys, ws = [], [], []
    for m_a in range(p):
        for m_b in range(p):
            if m_a == m_b or (win[m_a, m_b] == 0 and win[m_b, m_a] == 0):
                continue
            x = np.zeros(p)
            x[m_a], x[m_b] = math.log(10), -math.log(10)
            rows += [x, x]
            ys += [1.0, 0.0]
            ws += [win[m_a, m_b], win[m_b, m_a]]
    lr = LogisticRegression(fit_intercept=False, penalty=None, tol=1e-6)
    lr.fit(np.array(rows), np.array(ys), sample_weight=np.array(ws))
    return 400 * lr.coef_[0] + 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--fastchat-rounds", type=int, default=2)
    ap.add_argument("--skip-peers", action="store_true")
    a = ap.parse_args()

    first, second, outcome, theta, n_pairs = make_arena(a.n)
    print(
        f"arena: {N_SYSTEMS} systems, {a.n:,} comparisons, {n_pairs} pairs compared, "
        f"ties {np.mean(outcome == 0.5):.1%}"
    )
    t = time.perf_counter()
    ours(first[:20_000], second[:20_000], outcome[:20_000], 20)
    print(f"compile / cache load (first call, small problem): {time.perf_counter() - t:.2f} s")

    t_fit, fit = timed(
        lambda: bradley_terry(first=first, second=second, outcome=outcome, n_items=N_SYSTEMS),
        a.repeats,
    )
    print(f"ours, plain fit: median {t_fit:.3f} s ({fit.method})")
    t_all, (res, ri) = timed(lambda: ours(first, second, outcome, a.n_boot), a.repeats)
    print(
        f"ours, fit + {a.n_boot} bootstrap replicates + rank intervals: median {t_all:.3f} s "
        f"(separability {ri.separability:.3f}, median rank-interval width "
        f"{np.median(ri.high - ri.low + 1):.0f})"
    )
    corr = np.corrcoef(res.scores, theta)[0, 1]
    print(f"   scores vs the simulated truth: r = {corr:.4f}")
    if a.skip_peers:
        return
    winners = evalica_winners(outcome)  # input conversion, not timed
    for n in (a.n, 2_000_000):
        t_ev, ev = timed(lambda n=n: evalica_bt(first[:n], second[:n], winners[:n]), a.repeats)
        s = ev.scores.reindex(range(N_SYSTEMS)).to_numpy(float)
        r = np.corrcoef(np.log(s), theta)[0, 1]
        print(
            f"evalica 0.4.2 bradley_terry on {n:,}: median {t_ev:.3f} s, no intervals "
            f"({ev.iterations} iterations; log-scores vs the truth r = {r:.4f})"
        )
    import pandas as pd

    names = np.array([f"model-{k}" for k in range(N_SYSTEMS)], dtype=object)
    winner = np.where(outcome == 1.0, "model_a", np.where(outcome == 0.0, "model_b", "tie"))
    battles = pd.DataFrame({"model_a": names[first], "model_b": names[second], "winner": winner})
    times = []
    for r in range(a.fastchat_rounds):
        t = time.perf_counter()
        fastchat_round(battles, r)
        times.append(time.perf_counter() - t)
    per = statistics.median(times)
    print(
        f"FastChat bootstrap (pandas resample + pivot + sklearn LR): median {per:.2f} s per "
        f"round over {a.fastchat_rounds} rounds; 1,000 rounds extrapolated: "
        f"{per * 1000 / 60:.0f} min"
    )


if __name__ == "__main__":
    main()

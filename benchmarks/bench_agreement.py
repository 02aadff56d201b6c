"""Timing of the agreement tables on HANNA, with ratios against plain scipy / krippendorff.

    .venv/bin/python benchmarks/bench_agreement.py [--repeats 5] [--n-boot 1000]

Prints the one-off costs (loading HANNA, first call = numba compile or cache load) apart from
the medians of the tables (target: all HANNA tables together under 2 s), then the peers run
in the same process: point correlations by a loop of scipy calls, the context bootstrap by
literally resampling and calling scipy (timed on a slice of the replicates and scaled), and
Krippendorff's alpha by the ``krippendorff`` package. No peer for ICC is installed
(pingouin / R psych); the ICC is checked against Shrout & Fleiss (1979) in the tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import krippendorff  # noqa: E402
import numpy as np  # noqa: E402
from _timing import wall_and_cpu  # noqa: E402
from scipy import stats  # noqa: E402

import ranking as rk  # noqa: E402
from data import agreement as da  # noqa: E402
from data import load_benchmark  # noqa: E402


def median_time(fn, repeats, cpu=False):
    """Median wall time of ``repeats`` calls (with ``cpu``: also the median CPU time, which a
    busy shared machine inflates less)."""
    walls, cpus = wall_and_cpu(fn, repeats)
    if cpu:
        return statistics.median(walls), statistics.median(cpus)
    return statistics.median(walls)


def scipy_point_table(df):
    """The correlation table's point values (3 levels, Kendall) by a loop of scipy calls."""
    out = []
    for _, g in df.groupby(["judge", "prompt_id", "attribute"], sort=True, observed=True):
        g = g[g["score"].notna() & g["human"].notna()]
        x, y = g["score"].to_numpy(), g["human"].to_numpy()
        out.append(stats.kendalltau(x, y).statistic)
        means = g.groupby("system", observed=True)[["score", "human"]].mean()
        out.append(stats.kendalltau(means["score"], means["human"]).statistic)
        per = []
        for _, c in g.groupby("context_id", observed=True):
            if c["score"].nunique() > 1 and c["human"].nunique() > 1:
                per.append(stats.kendalltau(c["score"], c["human"]).statistic)
        out.append(np.mean(per))
    return out


def scipy_bootstrap(x, y, ctx, sysl, level, n_boot, seed=0):
    rng = np.random.default_rng(seed)
    units = np.unique(ctx)
    rows_of = {u: np.flatnonzero(ctx == u) for u in units}
    reps = []
    for _ in range(n_boot):
        rows = np.concatenate([rows_of[u] for u in rng.choice(units, units.size)])
        if level == "overall":
            reps.append(stats.kendalltau(x[rows], y[rows]).statistic)
        else:
            names = np.unique(sysl[rows])
            mx = [x[rows][sysl[rows] == s].mean() for s in names]
            my = [y[rows][sysl[rows] == s].mean() for s in names]
            reps.append(stats.kendalltau(mx, my).statistic)
    return np.quantile(reps, [0.025, 0.975])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--n-boot", type=int, default=1000)
    args = p.parse_args(argv)
    R, B = args.repeats, args.n_boot

    t0 = time.perf_counter()
    ds = load_benchmark("hanna")
    print(f"load hanna (one-off, not a table): {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    da.correlation_table(ds, judge="ChatGPT/eval_prompt_1", attribute="coherence", n_boot=10)
    print(f"first call (numba compile or cache load): {time.perf_counter() - t0:.2f} s")

    tables = {
        "human IAA (ICC2k, alpha x3, share agree; 6 criteria)": lambda: da.iaa_table(ds),
        "human baseline (overall + system, Kendall)": lambda: da.human_baseline_table(ds),
        f"judge-human correlations (120 cells x 3 levels, Kendall, n_boot={B})": lambda: (
            da.correlation_table(ds, n_boot=B)
        ),
        "Williams + BH matrices (24 families x 10 pairs)": lambda: da.williams_table(ds),
        "self-consistency (120 cells)": lambda: da.self_consistency_table(ds),
    }
    print(f"\nHANNA tables, median of {R} runs (wall / CPU of this process):")
    total = total_cpu = 0.0
    for name, fn in tables.items():
        t, c = median_time(fn, R, cpu=True)
        total += t
        total_cpu += c
        print(f"  {t:7.3f} s / {c:7.3f} s  {name}")
    print(f"  {total:7.3f} s / {total_cpu:7.3f} s  TOTAL (target < 2 s)")

    print("\nPeers in the same run (ours / peer; < 1 means ours is faster):")
    df = da.aligned_scores(ds)
    t_ours = median_time(lambda: da.correlation_table(ds, n_boot=0), R)
    t_peer = median_time(lambda: scipy_point_table(df), max(1, R // 2))
    print(
        f"  point correlations, 360 values: ours {t_ours:.3f} s, scipy loop {t_peer:.3f} s, "
        f"ratio {t_ours / t_peer:.3f}"
    )

    g = df[(df["judge"] == "ChatGPT/eval_prompt_1") & (df["attribute"] == "coherence")]
    x, y = g["score"].to_numpy(float), g["human"].to_numpy(float)
    ctx, sysl = g["context_id"].to_numpy(), g["system"].to_numpy()
    n_slice = min(B, 100)
    for level in ("overall", "system"):
        t_ours = median_time(
            lambda lv=level: rk.correlation(
                x,
                y,
                unit=lv,
                method="kendall",
                contexts=ctx,
                systems=sysl,
                n_boot=B,
                random_state=1,
            ),
            R,
        )
        t_peer = (
            median_time(lambda lv=level: scipy_bootstrap(x, y, ctx, sysl, lv, n_slice), 1)
            * B
            / n_slice
        )
        print(
            f"  bootstrap one cell, {level}, {B} replicates: ours {t_ours * 1e3:.1f} ms, "
            f"resample + scipy {t_peer * 1e3:.0f} ms (scaled from {n_slice}), "
            f"ratio {t_ours / t_peer:.4f}"
        )

    hs = ds.human_scores
    mats = [
        da.rating_matrix(hs[hs["attribute"] == a], ["human_1", "human_2", "human_3"])[0]
        for a in sorted(hs["attribute"].unique())
    ]
    for scale in ("interval", "ordinal"):
        t_ours = median_time(lambda sc=scale: [rk.krippendorff_alpha(Y, sc) for Y in mats], R)
        t_peer = median_time(
            lambda sc=scale: [
                krippendorff.alpha(reliability_data=Y.T, level_of_measurement=sc) for Y in mats
            ],
            R,
        )
        print(
            f"  Krippendorff alpha {scale}, 6 criteria: ours {t_ours * 1e3:.1f} ms, "
            f"krippendorff package {t_peer * 1e3:.1f} ms, ratio {t_ours / t_peer:.3f}"
        )


if __name__ == "__main__":
    main()

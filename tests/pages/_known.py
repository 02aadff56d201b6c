"""Known values for the page tests, computed without the service layer: straight from a
dataset's tables with pandas, ``data.arrays``, ``ranking`` and scipy.

The pages' numbers must equal these (up to the rounding they are shown with), so a test
checks the value itself, not only that it lies in a range.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from data.arrays import comparisons_to_P, scores_to_matrix
from data.flat import flat_comparisons
from data.schema import Dataset
from ranking import bradley_terry, budget_curves, ml_ranking, win_ratio

#: Shown values are rounded to 3 decimals (``common.fmt``).
SHOWN = 5e-4 + 1e-9


def judge_rows(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    """The judge's parsed comparisons of ``attribute``."""
    c = ds.comparisons
    sel = (c["attribute"].astype(str) == attribute) & (c["judge"].astype(str) == judge)
    return c[sel & c["p_first"].notna()]


def judge_matrices(ds: Dataset, attribute: str, judge: str):
    """(the judge's parsed comparisons of ``attribute`` as ``data.arrays.comparisons_to_P``
    lays them out, the human mean scores on the same (contexts x candidates) grid)."""
    pm = comparisons_to_P(judge_rows(ds, attribute, judge), attribute=attribute, judge=judge)
    return pm, scores_to_matrix(ds.human_scores, pm, attribute=attribute)


def demo_budget_curve(pm, ref, strategy: str, debiased: bool, **options):
    """(budgets, mean correlation) of ``strategy``'s raw or debiased curve by
    ``ranking.budget_curves`` (20 draws, seed 0, ``options``) at every budget it can spend on
    the demo (1 to 30; symmetric: the even ones), the budgets where it is undefined left out."""
    grid = np.arange(2, 31, 2) if strategy == "symmetric" else np.arange(1, 31)
    cur = budget_curves(
        pm.P, ref, budgets=grid, strategies=(strategy,), n_draws=20, random_state=0, **options
    )
    mean = cur.mean[0, int(debiased)]
    return grid[np.isfinite(mean)], mean[np.isfinite(mean)]


def context_scores(ds: Dataset, attribute: str, judge: str):
    """(scores per ranking method, human mean scores), both (contexts x candidates)."""
    pm, ref = judge_matrices(ds, attribute, judge)
    scores = {
        "win-ratio": win_ratio(pm.P, tau=0.5),
        "maximum likelihood": ml_ranking(pm.P).scores,
        "Bradley–Terry": bradley_terry(pm.P).scores,
    }
    return scores, ref


def spearman_scipy(a, b) -> float:
    """``scipy.stats.spearmanr`` over the entries where both are finite; NaN when fewer
    than 2 or either side constant."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return math.nan
    return float(stats.spearmanr(a[ok], b[ok]).statistic)


def mean_spearman(scores: np.ndarray, ref: np.ndarray) -> float:
    """Spearman per context (scipy), mean over the contexts where it is defined."""
    rho = [spearman_scipy(s, r) for s, r in zip(scores, ref, strict=True)]
    rho = [r for r in rho if math.isfinite(r)]
    return float(np.mean(rho)) if rho else math.nan


def system_human_means(ds: Dataset, attribute: str) -> pd.Series:
    """Mean human score per system: each candidate's mean over annotators, then the mean
    over the system's candidates."""
    hs = ds.human_scores[ds.human_scores["attribute"].astype(str) == attribute]
    item = hs.groupby(["context_id", "candidate_id"])["score"].mean().rename("human")
    cands = ds.candidates[["context_id", "candidate_id", "system"]].drop_duplicates(
        ["context_id", "candidate_id"]
    )
    merged = cands.merge(item.reset_index(), on=["context_id", "candidate_id"])
    return merged.groupby(merged["system"].astype(str))["human"].mean()


def system_games(ds: Dataset, attribute: str, judge: str):
    """Comparisons over systems, all contexts pooled (``data.flat.flat_comparisons``)."""
    return flat_comparisons(
        judge_rows(ds, attribute, judge),
        attribute=attribute,
        judge=judge,
        item="system",
        candidates=ds.candidates,
    )


def elo_loop(first, second, outcome, n_items: int, k=4.0, initial=1000.0) -> np.ndarray:
    """Elo, one game at a time in the given order (plain Python)."""
    r = [initial] * n_items
    for a, b, s in zip(first, second, outcome, strict=True):
        e = 1.0 / (1.0 + 10.0 ** ((r[b] - r[a]) / 400.0))
        r[a] += k * (s - e)
        r[b] -= k * (s - e)
    return np.asarray(r)


def seeded_elo(ds: Dataset, attribute: str, judge: str, seed: int = 0):
    """(systems, Elo ratings) with the games in the page's seeded random order."""
    fc = system_games(ds, attribute, judge)
    order = np.random.default_rng(seed).permutation(len(fc.p))
    ratings = elo_loop(fc.first[order], fc.second[order], fc.p[order], len(fc.items))
    return fc.items, ratings


def rated_items(ds: Dataset, judge: str, prompt_id: str, attribute: str) -> pd.DataFrame:
    """Per item (context, candidate): the judge's mean over its parsed samples (``score``),
    the mean over every annotator (``human``) and the candidate's ``system``; items that
    both rated."""
    r = ds.ratings
    r = r[
        (r["judge"].astype(str) == judge)
        & (r["prompt_id"].astype(str) == prompt_id)
        & (r["attribute"].astype(str) == attribute)
    ]
    score = r.groupby(["context_id", "candidate_id"])["score"].mean()
    hs = ds.human_scores[ds.human_scores["attribute"].astype(str) == attribute]
    human = hs.groupby(["context_id", "candidate_id"])["score"].mean().rename("human")
    items = pd.concat([score, human], axis=1, join="inner").reset_index()
    systems = ds.candidates[["context_id", "candidate_id", "system"]]
    return items.merge(systems, on=["context_id", "candidate_id"], how="left")


def kendall_scipy(a, b) -> float:
    """``scipy.stats.kendalltau`` (tau-b) over the entries where both are finite."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return math.nan
    return float(stats.kendalltau(a[ok], b[ok]).statistic)


def kendall_by_unit(items: pd.DataFrame) -> dict[str, float]:
    """Kendall tau-b of judge and human at the three units: within each context (mean over
    the contexts where it is defined), over per-system means, over all items."""
    per_context = [kendall_scipy(g["score"], g["human"]) for _, g in items.groupby("context_id")]
    per_context = [t for t in per_context if math.isfinite(t)]
    systems = items.groupby("system")[["score", "human"]].mean()
    return {
        "item": float(np.mean(per_context)) if per_context else math.nan,
        "system": kendall_scipy(systems["score"], systems["human"]),
        "overall": kendall_scipy(items["score"], items["human"]),
    }


def icc2k(x: np.ndarray) -> float:
    """ICC(2,k) of an (items x raters) matrix: two-way random effects, the raters' mean
    (Shrout & Fleiss 1979): (MSR - MSE) / (MSR + (MSC - MSE) / n)."""
    n, k = x.shape
    grand = x.mean()
    msr = k * ((x.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    msc = n * ((x.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + grand
    mse = (resid**2).sum() / ((n - 1) * (k - 1))
    return float((msr - mse) / (msr + (msc - mse) / n))


def baseline_by_unit(ds: Dataset, attribute: str) -> dict[str, float]:
    """The human baseline at the three units: each annotator's scores against the mean of
    the others (as the judge against the humans), averaged over annotators."""
    hs = ds.human_scores[ds.human_scores["attribute"].astype(str) == attribute]
    wide = hs.pivot_table(index=["context_id", "candidate_id"], columns="annotator", values="score")
    systems = ds.candidates.set_index(["context_id", "candidate_id"])["system"]
    per_annotator = []
    for name in wide.columns:
        items = pd.DataFrame(
            {"score": wide[name], "human": wide.drop(columns=name).mean(axis=1)}
        ).reset_index()
        items["system"] = systems.reindex(wide.index).to_numpy()
        per_annotator.append(kendall_by_unit(items))
    return {u: float(np.mean([a[u] for a in per_annotator])) for u in ("item", "system", "overall")}


def accuracy_of_scores(scores: np.ndarray, ref: np.ndarray) -> float:
    """Share of candidate pairs with different reference scores that ``scores`` order as
    the reference does (a tie in ``scores`` counts half), pooled over contexts."""
    hits = []
    for s, r in zip(scores, ref, strict=True):
        for i in range(len(s)):
            for j in range(i + 1, len(s)):
                if np.isfinite([s[i], s[j], r[i], r[j]]).all() and r[i] != r[j]:
                    hits.append(0.5 if s[i] == s[j] else float((s[i] - s[j]) * (r[i] - r[j]) > 0))
    return float(np.mean(hits)) if hits else math.nan


def accuracy_of_comparisons(P: np.ndarray, ref: np.ndarray, tau: float = 0.5) -> float:
    """Share of comparisons (i shown before j) decided at ``tau`` as the reference orders
    the pair (p == tau counts half), over pairs with different reference scores."""
    hits = []
    for block, r in zip(P, ref, strict=True):
        n = len(r)
        for i in range(n):
            for j in range(n):
                p = block[i, j]
                if i != j and np.isfinite([p, r[i], r[j]]).all() and r[i] != r[j]:
                    first = 1.0 if p > tau else 0.5 if p == tau else 0.0
                    hits.append(first if r[i] > r[j] else 1.0 - first)
    return float(np.mean(hits)) if hits else math.nan


def swap_consistency_loop(P: np.ndarray, tau: float = 0.5) -> float:
    """Share of pairs judged in both orders whose two decisions name the same winner."""
    same = []
    for block in P:
        n = block.shape[0]
        for i in range(n):
            for j in range(i + 1, n):
                a, b = block[i, j], block[j, i]
                if np.isfinite(a) and np.isfinite(b):
                    # i wins as first when a > tau; i wins as second when b < tau
                    same.append(float((a > tau) == (b < tau)))
    return float(np.mean(same)) if same else math.nan

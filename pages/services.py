"""The cached service layer between the pages and ``judge/``, ``ranking/`` and ``data/``.

Pages call the cached functions here with a *dataset key* (:func:`dataset_key`) and plain
strings, never with tables, so Streamlit hashes a few short strings per call instead of a
whole dataset. Each cached function has a pure twin (``build_*`` / ``compute_*`` /
``*_frame``) that takes the objects themselves; those are what the tests call, without
Streamlit. No ranking maths lives here: the numbers come from ``ranking``; this module only
selects rows, lays arrays out and shapes tables for display.

Caching: ``st.cache_resource`` for the P arrays and the human reference (shared, made
read-only, no copy per call: the threshold slider reads them on every update), and
``st.cache_data`` for everything derived from them.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from data.arrays import PMatrix, comparisons_to_P, flat_comparisons, scores_to_matrix
from data.schema import HUMAN_JUDGE_PREFIX, DataError, Dataset
from pages import state
from ranking.bias import balanced_threshold, position_bias, swap_consistency
from ranking.bradley_terry import bradley_terry
from ranking.budget import budget_curves, comparisons_needed
from ranking.metrics import pairwise_accuracy, spearman
from ranking.ml import ml_ranking
from ranking.scores import win_ratio

#: Judge label of every human annotator's comparisons taken together.
HUMAN_POOL = "human annotators (pooled)"
#: Individual human judges are offered one by one only up to this many (LLMFAO has 124).
MAX_LISTED_HUMANS = 10
#: Ranking methods, in display order.
METHODS = ("win-ratio", "maximum likelihood", "Bradley–Terry")
#: Comparison strategies of the budget curves and their display names.
STRATEGIES = {
    "random": "random",
    "no-repeat": "no-repeat",
    "symmetric": "symmetric",
    "poe-max-info": "adaptive (PoE max-info)",
    "uncertainty": "adaptive (uncertainty)",
}
#: Ranking methods of the budget curves (``ranking.budget.METHODS``) and their display names.
BUDGET_METHODS = {
    "win_ratio": "win-ratio",
    "soft_win_ratio": "soft win-ratio",
    "poe": "product of experts (PoE)",
    "bradley_terry": "Bradley–Terry (slow)",
}
#: Thresholds of the accuracy-vs-tau curve.
TAU_GRID = np.round(np.linspace(0.0, 1.0, 101), 2)
#: Budget grids above this many points are thinned to a geometric grid.
MAX_BUDGET_POINTS = 40
#: The same for Bradley–Terry budget curves (one fit per draw and budget).
BT_BUDGET_POINTS = 10

_live: weakref.WeakValueDictionary[str, Dataset] = weakref.WeakValueDictionary()


# ---------------------------------------------------------------------------------------
# Dataset keys
# ---------------------------------------------------------------------------------------


def dataset_key() -> str:
    """Key of the active dataset; it changes when the active dataset (or its content) changes."""
    key = state.key()
    _live[key] = state.active()
    return key


def dataset(key: str) -> Dataset:
    """The dataset behind ``key`` (registered by :func:`dataset_key` in this server)."""
    ds = _live.get(key)
    if ds is None:
        raise ValueError(
            f"dataset {key.split('|')[0]!r} is no longer loaded; pick it again on the Data page"
        )
    return ds


def register(ds: Dataset, key: str) -> str:
    """Make ``ds`` reachable under ``key`` without a Streamlit session (tests, benchmarks)."""
    _live[key] = ds
    return key


# ---------------------------------------------------------------------------------------
# Pure helpers (no Streamlit): selection, arrays, reference
# ---------------------------------------------------------------------------------------


def comparison_attributes_of(ds: Dataset) -> list[str]:
    """Attributes that have at least one comparison with a parsed probability, sorted."""
    comps = ds.comparisons
    if not len(comps):
        return []
    ok = comps["p_first"].notna()
    return sorted(comps.loc[ok, "attribute"].astype(str).unique())


def judge_options_of(ds: Dataset, attribute: str) -> list[str]:
    """Judges to offer for ``attribute``: model judges, then the human pool, then humans.

    Several human annotators (judges named ``human:...``) are offered together as
    ``HUMAN_POOL``; one by one too when there are at most ``MAX_LISTED_HUMANS``.
    """
    comps = ds.comparisons
    if not len(comps):
        return []
    judges = comps.loc[comps["attribute"].astype(str) == attribute, "judge"].astype(str).unique()
    humans = sorted(j for j in judges if j.startswith(HUMAN_JUDGE_PREFIX))
    models = sorted(j for j in judges if not j.startswith(HUMAN_JUDGE_PREFIX))
    if len(humans) <= 1:
        return models + humans
    return models + [HUMAN_POOL] + (humans if len(humans) <= MAX_LISTED_HUMANS else [])


def select_comparisons(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    """Comparison rows of one attribute and judge (``HUMAN_POOL``: all human judges, relabelled).

    Raises
    ------
    DataError
        When nothing is selected.
    """
    comps = ds.comparisons
    if not len(comps):
        raise DataError(f"{ds.name}: the dataset has no pairwise comparisons")
    rows = comps[comps["attribute"].astype(str) == attribute]
    names = rows["judge"].astype(str)
    if judge == HUMAN_POOL:
        rows = rows[names.str.startswith(HUMAN_JUDGE_PREFIX)].assign(judge=HUMAN_POOL)
    else:
        rows = rows[names == judge]
    if not len(rows):
        raise DataError(f"{ds.name}: no comparisons for attribute {attribute!r} by judge {judge!r}")
    return rows


def build_pmatrix(ds: Dataset, attribute: str, judge: str) -> PMatrix:
    """P of one attribute and judge (candidates per context: the compared ones, sorted).

    Comparisons whose answer could not be parsed (p_first NaN) are left out first, so no
    context is left without a comparison (the ranking functions refuse those).
    """
    rows = select_comparisons(ds, attribute, judge)
    rows = rows[rows["p_first"].notna()]
    if not len(rows):
        raise DataError(
            f"{ds.name}: every comparison for attribute {attribute!r} by judge {judge!r} is "
            "unparsed (p_first missing); see the raw answers on the Judge page"
        )
    pm = comparisons_to_P(rows, attribute=attribute, judge=judge)
    # Shared through st.cache_resource: nobody may change it in place.
    pm.P.setflags(write=False)
    pm.counts.setflags(write=False)
    return pm


@dataclass(frozen=True)
class Reference:
    """Human reference scores laid out like a :class:`PMatrix`.

    Attributes
    ----------
    scores : ndarray, shape (n_contexts, N_max)
        Higher is better; NaN where a candidate has no reference.
    source : str
        One line saying where the scores come from (shown on the pages).
    same_as_judge : bool
        The reference is built from the very comparisons being ranked (the human pool
        ranked against itself): agreement is then trivially high.
    """

    scores: np.ndarray
    source: str
    same_as_judge: bool = False


def build_reference(ds: Dataset, attribute: str, pm: PMatrix) -> Reference | None:
    """Human reference for the candidates of ``pm``, or None when the dataset has none.

    Mean human score over annotators when ``human_scores`` rate ``attribute``; otherwise the
    win-ratio (``ranking.scores.win_ratio``) of the pooled human verdicts in the comparisons
    (judges ``human:...``), leaving out the selected human judge itself.
    """
    hs = ds.human_scores
    if len(hs) and attribute in set(hs["attribute"].astype(str)):
        scores = scores_to_matrix(hs, pm, attribute=attribute)
        if np.isfinite(scores).sum() >= 2:
            n_ann = hs.loc[hs["attribute"].astype(str) == attribute, "annotator"].nunique()
            scores.setflags(write=False)
            return Reference(scores, f"mean human score over {n_ann} annotator(s)")

    comps = ds.comparisons
    if not len(comps):
        return None
    rows = comps[comps["attribute"].astype(str) == attribute]
    names = rows["judge"].astype(str)
    human = names.str.startswith(HUMAN_JUDGE_PREFIX)
    if pm.judge is not None and pm.judge.startswith(HUMAN_JUDGE_PREFIX):
        human &= names != pm.judge  # an annotator is compared with the others
    rows = rows[human & rows["p_first"].notna()]
    # keep only pairs inside the layout of pm
    layout = {ctx: set(cands) for ctx, cands in zip(pm.context_ids, pm.candidate_ids, strict=True)}
    inside = [
        ctx in layout and a in layout[ctx] and b in layout[ctx]
        for ctx, a, b in zip(
            rows["context_id"].astype(str),
            rows["first_id"].astype(str),
            rows["second_id"].astype(str),
            strict=True,
        )
    ]
    rows = rows[np.asarray(inside, dtype=bool)]
    if not len(rows):
        return None
    n_ann = rows["judge"].nunique()
    order = dict(zip(pm.context_ids, pm.candidate_ids, strict=True))
    hp = comparisons_to_P(
        rows.assign(judge=HUMAN_POOL), attribute=attribute, judge=HUMAN_POOL, candidates=order
    )
    scores = np.full(pm.P.shape[:2], np.nan)
    where = {ctx: c for c, ctx in enumerate(pm.context_ids)}
    rows_idx = [where[ctx] for ctx in hp.context_ids]
    scores[rows_idx, : hp.P.shape[1]] = win_ratio(hp.P)
    scores.setflags(write=False)
    return Reference(
        scores,
        f"win-ratio of the pooled verdicts of {n_ann} human annotator(s)",
        same_as_judge=pm.judge == HUMAN_POOL,
    )


def mean_finite(values) -> float:
    """Mean over the finite entries; NaN when there are none (no warning)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def fmt(value, digits: int = 3) -> str:
    """A number for a metric: rounded, or "n/a" when undefined (NaN / None)."""
    if value is None or not math.isfinite(float(value)):
        return "n/a"
    return f"{float(value):.{digits}f}"


def order_matrix(scores: np.ndarray) -> np.ndarray:
    """P of the order that ``scores`` induce: 1 where i scores above j, 0 below, 0.5 tied.

    Lets ``ranking.metrics.pairwise_accuracy`` measure a *ranking* against the reference
    over every pair of ranked candidates; NaN where either score is missing.
    """
    s = np.asarray(scores, dtype=np.float64)
    diff = s[:, :, None] - s[:, None, :]
    out = np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5))
    out[~np.isfinite(diff)] = np.nan
    idx = np.arange(s.shape[1])
    out[:, idx, idx] = np.nan
    return out


def _accuracy(P: np.ndarray, ref: np.ndarray, tau: float = 0.5) -> float:
    """Pooled pairwise accuracy over the contexts that have a comparison; NaN if undefined."""
    keep = np.isfinite(P).any(axis=(1, 2))
    if not keep.any():
        return math.nan
    try:
        return pairwise_accuracy(P[keep], ref[keep], tau)
    except ValueError:  # no pair with two different reference scores: undefined, not zero
        return math.nan


@dataclass(frozen=True)
class Rankings:
    """Scores of every ranking method in every context, and their agreement with humans.

    Attributes
    ----------
    scores : dict of str to ndarray (n_contexts, N_max)
        Per method in ``METHODS``; higher is better, NaN for candidates not ranked.
    agreement : pandas.DataFrame or None
        One row per method (and one for the judge's raw comparisons): ``spearman`` (mean over
        contexts), ``pairwise_accuracy``, ``n_contexts`` with a defined Spearman.
    notes : list of str
        What the user should know (heuristic ML contexts, Bradley–Terry flags).
    """

    scores: dict
    agreement: pd.DataFrame | None
    notes: list


def compute_rankings(pm: PMatrix, ref: Reference | None) -> Rankings:
    """Win-ratio, maximum-likelihood and Bradley–Terry scores per context, with agreement."""
    ml = ml_ranking(pm.P)
    bt = bradley_terry(pm.P)
    scores = {
        "win-ratio": win_ratio(pm.P),
        "maximum likelihood": ml.scores,
        "Bradley–Terry": bt.scores,
    }
    notes = [f"Bradley–Terry: {n}" for n in bt.notes]
    n_heur = sum(m == "heuristic" for m in ml.method)
    if n_heur:
        notes.append(
            f"Maximum likelihood: {n_heur} context(s) have too many candidates for the exact "
            "search and use local search from the Bradley–Terry order."
        )
    agreement = None
    if ref is not None:
        rows = []
        for method, s in scores.items():
            rho = spearman(s, ref.scores)
            rows.append(
                {
                    "method": method,
                    "spearman": mean_finite(rho),
                    "pairwise_accuracy": _accuracy(order_matrix(s), ref.scores),
                    "n_contexts": int(np.isfinite(rho).sum()),
                }
            )
        rows.append(
            {
                "method": "judge comparisons (tau = 0.5)",
                "spearman": math.nan,
                "pairwise_accuracy": _accuracy(pm.P, ref.scores),
                "n_contexts": len(pm.context_ids),
            }
        )
        agreement = pd.DataFrame(rows)
    return Rankings(scores=scores, agreement=agreement, notes=notes)


def _ranks(values: pd.Series) -> pd.Series:
    """1 = best; ties share the best rank; missing stays missing."""
    return values.rank(ascending=False, method="min")


def context_frame(
    ds: Dataset, pm: PMatrix, rk: Rankings, ref: Reference | None, c: int, method: str
) -> pd.DataFrame:
    """One context's candidates ranked by ``method``, with every method's rank beside it."""
    n = len(pm.candidate_ids[c])
    df = pd.DataFrame({"candidate": pm.candidate_ids[c]})
    cands = ds.candidates
    if "system" in cands.columns and len(cands):
        sub = cands[cands["context_id"].astype(str) == pm.context_ids[c]]
        lut = dict(zip(sub["candidate_id"].astype(str), sub["system"], strict=True))
        df["system"] = [lut.get(x) for x in df["candidate"]]
    df[f"{method} score"] = np.round(rk.scores[method][c, :n], 4)
    for m in METHODS:
        df[f"rank: {m}"] = _ranks(pd.Series(rk.scores[m][c, :n]))
    if ref is not None:
        df["human score"] = np.round(ref.scores[c, :n], 4)
        df["rank: human"] = _ranks(pd.Series(ref.scores[c, :n]))
    block = np.asarray(pm.counts[c, :n, :n])
    df["comparisons"] = block.sum(axis=1) + block.sum(axis=0)  # as first + as second
    df = df.sort_values([f"rank: {method}", "candidate"], na_position="last")
    return df.reset_index(drop=True)


def bump_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Long table (candidate, method, rank) for the slope chart, from :func:`context_frame`."""
    cols = [c for c in frame.columns if c.startswith("rank: ")]
    long = frame.melt(id_vars="candidate", value_vars=cols, var_name="method", value_name="rank")
    long["method"] = long["method"].str.removeprefix("rank: ")
    return long.dropna(subset=["rank"])


def matrix_view(pm: PMatrix, c: int):
    """Context ``c`` without padding: (candidate ids, P block, counts block, long table).

    The long table (first, second, p_first, samples) holds the compared cells, for download.
    """
    n = len(pm.candidate_ids[c])
    ids = list(pm.candidate_ids[c])
    block = np.array(pm.P[c, :n, :n])
    counts = np.array(pm.counts[c, :n, :n])
    i, j = np.nonzero(np.isfinite(block))
    long = pd.DataFrame(
        {
            "first": [ids[k] for k in i],
            "second": [ids[k] for k in j],
            "p_first": block[i, j],
            "samples": counts[i, j],
        }
    )
    return ids, block, counts, long


def compute_system_ranking(
    ds: Dataset,
    attribute: str,
    judge: str,
    pm: PMatrix,
    ref: Reference | None,
    *,
    intervals: str = "fisher",
    n_boot: int = 200,
    random_state: int = 0,
) -> tuple[pd.DataFrame, float, list[str]] | None:
    """Bradley–Terry over systems, comparisons of all contexts pooled, with intervals.

    Returns
    -------
    (table, spearman, notes) or None
        ``table``: system, bt_score, lower, upper, n_comparisons, human_mean (mean reference
        over the compared candidates of the system), sorted best first. ``spearman``:
        between BT scores and human means over systems (NaN without a reference). None when
        candidates have no systems, or systems do not repeat across contexts.
    """
    cands = ds.candidates
    if "system" not in cands.columns or not cands["system"].notna().any():
        return None
    rows = select_comparisons(ds, attribute, judge)
    fc = flat_comparisons(rows, attribute=attribute, judge=judge, item="system", candidates=cands)
    n_compared = sum(len(c) for c in pm.candidate_ids)
    if len(fc.items) < 2 or len(fc.items) >= n_compared:
        return None
    bt = bradley_terry(
        first=fc.first,
        second=fc.second,
        outcome=fc.p,
        n_items=len(fc.items),
        intervals=intervals,
        n_boot=n_boot,
        random_state=random_state,
    )
    table = pd.DataFrame(
        {
            "system": fc.items,
            "bt_score": bt.scores,
            "lower": bt.lower,
            "upper": bt.upper,
            "n_comparisons": np.bincount(fc.first, minlength=len(fc.items))
            + np.bincount(fc.second, minlength=len(fc.items)),
        }
    )
    rho = math.nan
    if ref is not None:
        flat = pd.DataFrame(
            {
                "context_id": [
                    ctx
                    for ctx, cs in zip(pm.context_ids, pm.candidate_ids, strict=True)
                    for _ in cs
                ],
                "candidate_id": [x for cs in pm.candidate_ids for x in cs],
                "human": np.concatenate(
                    [ref.scores[c, : len(cs)] for c, cs in enumerate(pm.candidate_ids)]
                ),
            }
        )
        lut = (
            cands[["context_id", "candidate_id", "system"]]
            .astype({"context_id": str, "candidate_id": str})
            .drop_duplicates(["context_id", "candidate_id"])
        )
        merged = flat.merge(lut, on=["context_id", "candidate_id"], how="left")
        means = merged.groupby(merged["system"].astype(str))["human"].mean()
        table["human_mean"] = table["system"].map(means)
        rho = float(spearman(table["bt_score"].to_numpy(), table["human_mean"].to_numpy(float)))
    table = table.sort_values("bt_score", ascending=False, na_position="last")
    return table.reset_index(drop=True), rho, list(bt.notes)


# ---------------------------------------------------------------------------------------
# Position bias
# ---------------------------------------------------------------------------------------


def compute_bias_table(ds: Dataset) -> pd.DataFrame:
    """Position bias, swap consistency and balanced threshold per judge and attribute."""
    rows = []
    for attribute in comparison_attributes_of(ds):
        for judge in judge_options_of(ds, attribute):
            pm = build_pmatrix(ds, attribute, judge)
            finite = np.isfinite(pm.P)
            n_both = int((finite & np.swapaxes(finite, 1, 2)).sum() // 2)
            rows.append(
                {
                    "judge": judge,
                    "attribute": attribute,
                    "n_comparisons": int(finite.sum()),
                    "first_position_win_rate": position_bias(pm.P),
                    "swap_consistency": swap_consistency(pm.P) if n_both else math.nan,
                    "pairs_both_orders": n_both,
                    "balanced_tau": balanced_threshold(pm.P),
                }
            )
    return pd.DataFrame(rows)


def order_pairs_frame(pm: PMatrix) -> pd.DataFrame:
    """Pairs judged in both orders: P(i wins) when i is shown first and when shown second.

    For each such pair (i before j in the candidate order of the context): ``i_first`` =
    P[i, j], ``i_second`` = 1 - P[j, i], ``shift`` = their difference (0 for a judge without
    position bias; positive when the first slot helps).
    """
    out = []
    for c, cands in enumerate(pm.candidate_ids):
        n = len(cands)
        block = np.asarray(pm.P[c, :n, :n])
        i, j = np.triu_indices(n, k=1)
        both = np.isfinite(block[i, j]) & np.isfinite(block[j, i])
        i, j = i[both], j[both]
        out.append(
            pd.DataFrame(
                {
                    "context_id": pm.context_ids[c],
                    "candidate_i": [cands[k] for k in i],
                    "candidate_j": [cands[k] for k in j],
                    "i_first": block[i, j],
                    "i_second": 1.0 - block[j, i],
                }
            )
        )
    df = pd.concat(out, ignore_index=True) if out else pd.DataFrame()
    if len(df):
        df["shift"] = df["i_first"] - df["i_second"]
    return df


def decisions(P: np.ndarray, tau) -> np.ndarray:
    """Hard decisions at ``tau`` (scalar or one per context): 1, 0, or 0.5 on p == tau.

    The same rule as ``ranking.scores`` applies per comparison; every ranking function gives
    the same result on these decisions at tau = 0.5 as on P at ``tau``, which is how one
    threshold per context is applied with the library's functions.
    """
    t = np.asarray(tau, dtype=np.float64)
    if t.ndim == 1:
        t = t[:, None, None]
    return np.where(P > t, 1.0, np.where(P < t, 0.0, np.where(P == t, 0.5, np.nan)))


@dataclass(frozen=True)
class Rerank:
    """Every context re-ranked by win-ratio at a threshold, measured against the reference."""

    tau: float | np.ndarray
    position_bias: float
    swap_consistency: float
    accuracy: float
    spearman: float
    spearman_per_context: np.ndarray | None


def rerank(P: np.ndarray, ref: np.ndarray | None, tau) -> Rerank:
    """Re-rank every context at ``tau`` (scalar, or one per context) — the slider's update.

    Only numba kernels of ``ranking`` run here (win-ratio, position bias, pairwise accuracy,
    Spearman); P and the reference come from the cache.
    """
    if np.ndim(tau) == 0:
        Q, t = P, float(tau)
    else:
        Q, t = decisions(P, tau), 0.5
    wr = win_ratio(Q, t)
    pb = position_bias(Q, t)
    try:
        swap = swap_consistency(Q, t)
    except ValueError:  # no pair judged in both orders: undefined, shown as n/a
        swap = math.nan
    if ref is None:
        return Rerank(tau, pb, swap, math.nan, math.nan, None)
    rho = spearman(wr, ref)
    return Rerank(tau, pb, swap, _accuracy(Q, ref, t), mean_finite(rho), rho)


def rerank_frame(pm: PMatrix, before: Rerank, after: Rerank) -> pd.DataFrame:
    """Per context: the threshold used and Spearman with the humans before and after."""
    n = len(pm.context_ids)
    nan = np.full(n, np.nan)
    return pd.DataFrame(
        {
            "context_id": pm.context_ids,
            "tau": np.broadcast_to(np.asarray(after.tau, dtype=np.float64), (n,)),
            "spearman_before": nan
            if before.spearman_per_context is None
            else before.spearman_per_context,
            "spearman_after": nan
            if after.spearman_per_context is None
            else after.spearman_per_context,
        }
    )


def compute_tau_curve(P: np.ndarray, ref: np.ndarray | None, taus=TAU_GRID) -> pd.DataFrame:
    """First-position win rate, pairwise accuracy and mean Spearman along a grid of tau."""
    rows = []
    for t in taus:
        r = rerank(P, ref, float(t))
        rows.append(
            {
                "tau": float(t),
                "first_position_win_rate": r.position_bias,
                "pairwise_accuracy": r.accuracy,
                "spearman": r.spearman,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# Comparison budgets
# ---------------------------------------------------------------------------------------


def available_comparisons(P: np.ndarray) -> int:
    """The most comparisons any context has (the end of every budget curve)."""
    finite = np.isfinite(P)
    idx = np.arange(P.shape[1])
    finite[:, idx, idx] = False
    return int(finite.sum(axis=(1, 2)).max())


def budget_grid(P: np.ndarray, method: str) -> np.ndarray | None:
    """Budgets up to the most comparisons any context has; thinned when there are many."""
    n_max = available_comparisons(P)
    # Bradley–Terry refits once per draw and budget: a short grid keeps it to seconds.
    n_points = BT_BUDGET_POINTS if method == "bradley_terry" else MAX_BUDGET_POINTS
    if n_max <= n_points:
        return np.arange(1, n_max + 1)
    return np.unique(np.round(np.geomspace(1, n_max, n_points)).astype(np.int64))


def compute_budget(
    P: np.ndarray,
    ref: np.ndarray,
    strategy: str,
    *,
    method: str = "win_ratio",
    correlation: str = "spearman",
    n_draws: int = 20,
    random_state: int = 0,
):
    """``ranking.budget.budget_curves`` for one strategy, with and without debiasing."""
    return budget_curves(
        P,
        ref,
        budgets=budget_grid(P, method),
        strategies=(strategy,),
        debias=(False, True),
        n_draws=int(n_draws),
        method=method,
        correlation=correlation,
        random_state=int(random_state),
    )


def budget_frame(curves: list) -> pd.DataFrame:
    """Long table of the curves: strategy, debiasing, budget, mean, std, p10, p90."""
    rows = []
    for cur in curves:
        for si, s in enumerate(cur.strategies):
            for bi, deb in enumerate(cur.debias):
                rows.append(
                    pd.DataFrame(
                        {
                            "strategy": STRATEGIES.get(s, s),
                            "debiasing": "debiased" if deb else "raw",
                            "budget": cur.budgets,
                            "mean": cur.mean[si, bi],
                            "std": cur.std[si, bi],
                            "p10": cur.p10[si, bi],
                            "p90": cur.p90[si, bi],
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def default_target(frame: pd.DataFrame) -> float:
    """A target correlation worth asking about: 90 % of the best mean on the curves."""
    best = frame["mean"].max() if len(frame) else math.nan
    if not math.isfinite(best) or best <= 0:
        return 0.5
    return round(0.9 * float(best), 2)


def needed_frame(curves: list, rho: float, n_available: int) -> pd.DataFrame:
    """Comparisons per context needed to reach mean correlation ``rho``, per curve."""
    rows = []
    for cur in curves:
        for (s, deb), need in comparisons_needed(cur, rho).items():
            rows.append(
                {
                    "strategy": STRATEGIES.get(s, s),
                    "debiasing": "debiased" if deb else "raw",
                    "comparisons_needed": need,
                    "share_of_available": None if need is None else round(need / n_available, 3),
                }
            )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# Cached functions for the pages (keyed by dataset_key())
# ---------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64)
def comparison_attributes(key: str) -> list[str]:
    """Attributes with comparisons in the dataset behind ``key``."""
    return comparison_attributes_of(dataset(key))


@st.cache_data(show_spinner=False, max_entries=64)
def judge_options(key: str, attribute: str) -> list[str]:
    """Judges to offer for ``attribute`` (see :func:`judge_options_of`)."""
    return judge_options_of(dataset(key), attribute)


@st.cache_resource(show_spinner=False, max_entries=32)
def pmatrix(key: str, attribute: str, judge: str) -> PMatrix:
    """P of one attribute and judge (read-only, shared)."""
    return build_pmatrix(dataset(key), attribute, judge)


@st.cache_resource(show_spinner=False, max_entries=32)
def human_reference(key: str, attribute: str, judge: str) -> Reference | None:
    """Human reference laid out like ``pmatrix(key, attribute, judge)``; None if none."""
    return build_reference(dataset(key), attribute, pmatrix(key, attribute, judge))


@st.cache_data(show_spinner="Ranking every context…", max_entries=32)
def rankings(key: str, attribute: str, judge: str) -> Rankings:
    """Every ranking method in every context, with agreement (see :func:`compute_rankings`)."""
    return compute_rankings(pmatrix(key, attribute, judge), human_reference(key, attribute, judge))


@st.cache_data(show_spinner="Fitting Bradley–Terry over systems…", max_entries=32)
def system_ranking(
    key: str,
    attribute: str,
    judge: str,
    intervals: str = "fisher",
    n_boot: int = 200,
    random_state: int = 0,
):
    """System-level Bradley–Terry with intervals (see :func:`compute_system_ranking`)."""
    return compute_system_ranking(
        dataset(key),
        attribute,
        judge,
        pmatrix(key, attribute, judge),
        human_reference(key, attribute, judge),
        intervals=intervals,
        n_boot=n_boot,
        random_state=random_state,
    )


@st.cache_data(show_spinner="Measuring position bias…", max_entries=32)
def bias_table(key: str) -> pd.DataFrame:
    """Position bias per judge and attribute (see :func:`compute_bias_table`)."""
    return compute_bias_table(dataset(key))


@st.cache_data(show_spinner=False, max_entries=32)
def order_pairs(key: str, attribute: str, judge: str) -> pd.DataFrame:
    """Pairs judged in both orders (see :func:`order_pairs_frame`)."""
    return order_pairs_frame(pmatrix(key, attribute, judge))


@st.cache_data(show_spinner=False, max_entries=64)
def balanced_tau(key: str, attribute: str, judge: str, per_context: bool = False):
    """``ranking.bias.balanced_threshold`` of the cached P."""
    return balanced_threshold(pmatrix(key, attribute, judge).P, per_context=per_context)


@st.cache_data(show_spinner=False, max_entries=32)
def tau_curve(key: str, attribute: str, judge: str) -> pd.DataFrame:
    """Accuracy, Spearman and first-position win rate along tau (see :func:`compute_tau_curve`)."""
    ref = human_reference(key, attribute, judge)
    return compute_tau_curve(pmatrix(key, attribute, judge).P, None if ref is None else ref.scores)


def threshold_update(key: str, attribute: str, judge: str, tau) -> Rerank:
    """The slider's per-update work: cached P and reference, then :func:`rerank` at ``tau``."""
    pm = pmatrix(key, attribute, judge)
    ref = human_reference(key, attribute, judge)
    return rerank(pm.P, None if ref is None else ref.scores, tau)


@st.cache_data(show_spinner=False, max_entries=64)
def budget(
    key: str,
    attribute: str,
    judge: str,
    strategy: str,
    method: str = "win_ratio",
    correlation: str = "spearman",
    n_draws: int = 20,
    random_state: int = 0,
):
    """Budget curves of one strategy, raw and debiased (see :func:`compute_budget`)."""
    ref = human_reference(key, attribute, judge)
    if ref is None:
        raise ValueError("budget curves need a human reference; this dataset has none")
    return compute_budget(
        pmatrix(key, attribute, judge).P,
        ref.scores,
        strategy,
        method=method,
        correlation=correlation,
        n_draws=n_draws,
        random_state=random_state,
    )


# =======================================================================================
# BEGIN section: Judge, Human agreement and Prompt sensitivity pages (helper D2)
# Everything between this line and the matching END line serves pages/judge_run.py,
# pages/agreement.py and pages/prompts.py. Pure functions first (tested without Streamlit),
# then the cached wrappers the pages call.
# =======================================================================================

import dataclasses as _dc  # noqa: E402  (this section keeps its imports together)
import logging as _logging  # noqa: E402
import re as _re  # noqa: E402
import threading as _threading  # noqa: E402
import time as _time  # noqa: E402

from data import agreement as _dag  # noqa: E402
from ranking import agreement as _rag  # noqa: E402
from ranking.metrics import kendall as _kendall  # noqa: E402

# ---------------------------------------------------------------------------------------
# Names shared by the three pages
# ---------------------------------------------------------------------------------------

#: Correlation choices of the agreement page: label -> (method, Kendall variant).
CORRELATIONS = {
    "Kendall tau-b": ("kendall", "b"),
    "Kendall tau-c": ("kendall", "c"),
    "Spearman": ("spearman", "b"),
    "Pearson": ("pearson", "b"),
}
#: Levels of the judge-human correlations, in display order, with one line of help each.
LEVELS = {
    "item": "within each context, candidates ranked against each other; mean over contexts",
    "system": "per-system mean scores correlated across systems",
    "overall": "every rated item pooled",
}
# "t0.7-p0.9": the decoding tag judge.runners puts into judge names of sampled runs.
_DECODING_TAG = _re.compile(r"^t(?P<t>[0-9.]+)-p(?P<p>[0-9.]+)$")


def variant_label(judge: str, prompt_id: str) -> str:
    """One readable name for a (judge, prompt) pair: the judge alone when it names the prompt."""
    judge, prompt_id = str(judge), str(prompt_id)
    if prompt_id in judge.split("/"):
        return judge
    return f"{judge} · {prompt_id}"


def judge_model(judge: str, prompt_id: str) -> tuple[str, float | None]:
    """(model, temperature) of a ratings judge name.

    The prompt id and the decoding tag (``t0.7-p0.9``, see ``judge.runners.judge_name``)
    are taken out of the ``/``-separated name, so the ratings of one model under several
    templates or temperatures group together: ``gpt-3.5-turbo-0301/altmcq`` (prompt
    ``altmcq``) -> ``gpt-3.5-turbo-0301``; ``my-model/t0.7-p1`` -> (``my-model``, 0.7).
    """
    parts = str(judge).split("/")
    temperature = None
    kept = []
    for part in parts:
        m = _DECODING_TAG.match(part)
        if m is not None:
            temperature = float(m.group("t"))
        elif part != str(prompt_id) or len(parts) == 1:
            kept.append(part)
    return "/".join(kept) or str(judge), temperature


# ---------------------------------------------------------------------------------------
# Judge page: templates, preview, backends, runs, merging results
# ---------------------------------------------------------------------------------------

#: Judge modes: label -> (run kind, runner mode, template kind).
JUDGE_MODES = {
    "pairwise: label probabilities": ("pairwise", "probs", "comparative"),
    "pairwise: sampled verdicts": ("pairwise", "samples", "comparative"),
    "absolute: Likert score (samples)": ("absolute", "samples", "absolute"),
    "absolute: expected score (G-Eval)": ("absolute", "expected", "absolute"),
}
#: Backends offered on the Judge page.
BACKENDS = {
    "openai": "OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, TGI, llama.cpp)",
    "hf": "transformers model (Hub id or local folder)",
}


#: What the custom-template box starts with: a small valid comparative template.
CUSTOM_TEMPLATE_EXAMPLE = """\
id: my-pairwise
version: "1"
kind: comparative
text: |
  {context}

  Response A: {a}

  Response B: {b}

  Which response is better in {attribute}? Answer A or B.
labels: [A, B]
"""


def read_custom_templates(text: str, fmt: str = "yaml") -> dict:
    """Templates from pasted or uploaded YAML / JSON (``judge.templates.load_templates``).

    Raises
    ------
    judge.templates.TemplateError
        With a message naming the template, key or field at fault.
    """
    from judge.templates import TemplateError, load_templates

    text = str(text)
    if not text.strip():
        raise TemplateError("the custom template is empty; paste YAML or JSON, or upload a file")
    # load_templates reads a one-line string naming an existing file as a path; text typed
    # into the page must never open a file on the server, and a newline rules that out.
    return load_templates(text + "\n", fmt=fmt)


def templates_of_kind(kind: str, custom: dict | None = None) -> dict:
    """Built-in templates of ``kind`` ("comparative" / "absolute"), then custom ones."""
    from judge.templates import builtin_templates

    out = {k: t for k, t in builtin_templates().items() if t.kind == kind}
    for k, t in (custom or {}).items():
        if t.kind == kind:
            out[k] = t
    return out


def first_context(ds: Dataset, context_id: str | None = None) -> tuple[str, str | None, list]:
    """(context id, context text or None, [(candidate id, text), ...]) of the first context
    with candidates (or of ``context_id``)."""
    cands = ds.candidates
    if not len(cands):
        raise DataError(f"{ds.name}: no candidates to judge; load a dataset with candidates")
    ids = cands["context_id"].astype(str)
    cid = str(context_id) if context_id is not None else ids.iloc[0]
    rows = cands[ids == cid]
    if not len(rows):
        raise DataError(f"{ds.name}: context {cid!r} has no candidates")
    text = None
    if len(ds.contexts):
        hit = ds.contexts.loc[ds.contexts["context_id"].astype(str) == cid, "text"]
        text = str(hit.iloc[0]) if len(hit) else None
    pairs = list(zip(rows["candidate_id"].astype(str), rows["text"].astype(str), strict=True))
    return cid, text, pairs


def preview_prompt(ds: Dataset, template, attribute: str, domain: str = "summary",
                   context_id: str | None = None) -> tuple[str, str]:
    """The filled prompt the judge would see for the first comparison (or candidate).

    Pairwise templates get the first two candidates of the context as A and B; absolute ones
    the first candidate. Returns (prompt, one line saying what was filled in).

    Raises
    ------
    judge.templates.TemplateError
        When the template cannot be filled (unknown attribute, a field the data lacks).
    DataError
        When the dataset has no candidates (or fewer than two for a pairwise template).
    """
    from judge.templates import check_fields

    cid, text, cands = first_context(ds, context_id)
    spec = template.for_attribute(attribute, domain)
    values = {"context": text if text is not None else ""}
    if template.kind == "comparative":
        if len(cands) < 2:
            raise DataError(f"context {cid!r} has {len(cands)} candidate; a comparison needs two")
        check_fields(spec, {"context", "a", "b"})
        values.update(a=cands[0][1], b=cands[1][1])
        what = f"context {cid!r}: A = {cands[0][0]!r}, B = {cands[1][0]!r}"
    else:
        check_fields(spec, {"context", "candidate"})
        values.update(candidate=cands[0][1])
        what = f"context {cid!r}: candidate {cands[0][0]!r}"
    prompt = spec.render(**values)
    if template.system:
        prompt = f"[system] {template.system}\n\n{prompt}"
    if template.answer_prefix:
        prompt = f"{prompt}\n{template.answer_prefix}"
    return prompt, what


@dataclass(frozen=True)
class JudgeSettings:
    """Everything a Judge-page run needs except secrets (the API key is never part of it,
    so these settings can be shown, logged and exported)."""

    backend: str  # key of BACKENDS
    model: str
    base_url: str = ""
    mode: str = "pairwise: label probabilities"  # key of JUDGE_MODES
    attribute: str = "overall"
    domain: str = "summary"
    selection: str = "all"
    budget: int | None = None
    n_contexts: int = 3
    n_samples: int = 3
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 64
    seed: int = 0
    device: str = "auto"

    @property
    def kind(self) -> str:
        return JUDGE_MODES[self.mode][0]

    @property
    def runner_mode(self) -> str:
        return JUDGE_MODES[self.mode][1]

    def decoding(self):
        from judge.backends.base import Decoding

        return Decoding(temperature=float(self.temperature), top_p=float(self.top_p),
                        max_new_tokens=int(self.max_new_tokens), seed=int(self.seed))

    def public(self) -> dict:
        """The settings as a plain dict for the report; a base URL loses any user:password."""
        from judge.backends.openai_compat import public_url

        out = _dc.asdict(self)
        if out["base_url"]:
            out["base_url"] = public_url(out["base_url"])
        return out


def _run_kwargs(ds: Dataset, settings: JudgeSettings) -> dict:
    """Keyword arguments shared by estimate, plan and run."""
    n_ctx = ds.candidates["context_id"].astype(str).drop_duplicates().head(
        int(settings.n_contexts)).tolist()
    kw = dict(attribute=settings.attribute, contexts=n_ctx, domain=settings.domain,
              decoding=settings.decoding(), n_samples=int(settings.n_samples),
              mode=settings.runner_mode)
    if settings.kind == "pairwise":
        kw.update(selection=settings.selection,
                  budget=None if settings.selection == "all" else int(settings.budget or 1),
                  random_state=int(settings.seed))
    return kw


def make_backend(settings: JudgeSettings, api_key: str | None = None):
    """The backend object for ``settings``; ``api_key`` goes into the OpenAI client only.

    Raises
    ------
    judge.BackendError
        A model that cannot be loaded (offline, unknown id), no API key for OpenAI itself.
    """
    if settings.backend == "openai":
        from judge.backends.openai_compat import OpenAIBackend

        return OpenAIBackend(settings.model.strip(), base_url=settings.base_url.strip() or None,
                             api_key=api_key or None)
    if settings.backend == "hf":
        return hf_backend(settings.model.strip(), settings.device)
    raise ValueError(f"backend must be one of {list(BACKENDS)}; got {settings.backend!r}")


@st.cache_resource(show_spinner="Loading the model…", max_entries=2)
def hf_backend(model: str, device: str = "auto"):
    """A transformers judge, loaded once per server (``judge.backends.hf.HFBackend``)."""
    from judge.backends.hf import HFBackend

    if not model:
        raise ValueError("enter a transformers model id (e.g. google/flan-t5-small) or a folder")
    return HFBackend(model, device=device)


def judge_estimate(ds: Dataset, settings: JudgeSettings, template, backend=None, store=None):
    """``judge.estimate.estimate`` for the page's settings.

    For an OpenAI-compatible endpoint no client is made (and no key needed): the model name
    and base URL identify the cached answers. A transformers model must be loaded first
    (``backend``), since its tokenizer and identity are needed.
    """
    from judge.estimate import estimate

    kw = _run_kwargs(ds, settings)
    mode = kw.pop("mode")
    extra = {k: kw.pop(k) for k in ("selection", "budget", "random_state") if k in kw}
    if settings.backend == "openai":
        who = settings.model.strip()
        if not who:
            raise ValueError("enter the model name the endpoint serves")
        return estimate(ds, settings.attribute, template, who, mode=mode, store=store,
                        base_url=settings.base_url.strip() or None,
                        **{k: v for k, v in kw.items() if k != "attribute"}, **extra)
    if backend is None:
        return None
    return estimate(ds, settings.attribute, template, backend, mode=mode, store=store,
                    **{k: v for k, v in kw.items() if k != "attribute"}, **extra)


class JudgeJob:
    """A judge run in a background thread, with progress, cancel and its result.

    The thread never touches Streamlit; the page polls :attr:`n_done` / :attr:`n_total`,
    sets :attr:`cancel` and, once :attr:`finished`, reads :attr:`result` or :attr:`error`.
    The API key reaches the backend's client inside the thread and is kept nowhere else.
    """

    def __init__(self, ds: Dataset, settings: JudgeSettings, template, *, api_key=None,
                 backend=None, store=None, source_name: str | None = None):
        self.source = ds  # the dataset judged (results are merged into a copy of it)
        self.source_name = source_name or ds.name
        self.settings = settings
        self.template = template
        self.cancel = _threading.Event()
        self.n_done = 0
        self.n_total = 0
        self.result: pd.DataFrame | None = None
        self.error: str | None = None
        self.warnings: list[str] = []
        self.started = _time.time()
        self.ended: float | None = None
        #: None until the page has taken the result; then the new dataset's name ("" if none)
        self.merged_into: str | None = None
        self._thread = _threading.Thread(
            target=self._work, args=(ds, api_key, backend, store), daemon=True,
            name="judgescope-judge-run",
        )
        self._thread.start()

    @property
    def finished(self) -> bool:
        return self.ended is not None

    def _progress(self, n_done: int, n_total: int) -> None:
        self.n_done, self.n_total = int(n_done), int(n_total)

    def _work(self, ds, api_key, backend, store) -> None:
        import warnings

        from judge.runners import run_absolute, run_pairwise

        try:
            if backend is None:
                backend = make_backend(self.settings, api_key)
            api_key = None  # from here on only the client holds it
            kw = _run_kwargs(ds, self.settings)
            run = run_pairwise if self.settings.kind == "pairwise" else run_absolute
            if self.settings.kind == "absolute":
                kw.pop("selection", None)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                self.result = run(ds, template=self.template, backend=backend, store=store,
                                  progress=self._progress, cancel=self.cancel, **kw)
            self.warnings = [str(w.message) for w in caught]
        except Exception as err:  # shown on the page; the trace goes to the server log
            _log_error("judge run failed", err)
            self.error = f"{type(err).__name__}: {err}" if not str(err) else str(err)
        finally:
            self.ended = _time.time()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run ends (tests, scripts); True when it did."""
        self._thread.join(timeout)
        return self.finished

    def take_result(self) -> tuple[str, Dataset | None, dict]:
        """(new dataset name, merged copy of the source or None, summary) of a finished run.

        The outputs go into a copy of the judged dataset named ``"<source> + <judge>"`` (the
        source name itself when it already ends so: running a judge again replaces its
        outputs). The summary holds the judge, table, call counts (n_calls, n_cached,
        n_called), n_rows, cancelled and notes; or only ``error``.
        """
        if not self.finished:
            raise RuntimeError("the judge run has not finished yet")
        if self.error:
            return "", None, {"error": self.error}
        rows = self.result
        judge = rows.attrs.get("judge", self.settings.model)
        table = "comparisons" if self.settings.kind == "pairwise" else "ratings"
        suffix = f" + {judge}"
        name = self.source_name if self.source_name.endswith(suffix) else (
            self.source_name + suffix)
        merged = merge_outputs(self.source, table, rows, name) if len(rows) else None
        summary = {
            "judge": judge, "table": table, "dataset": name if merged is not None else "",
            "n_calls": rows.attrs.get("n_calls", 0), "n_cached": rows.attrs.get("n_cached", 0),
            "n_called": rows.attrs.get("n_called", 0), "n_rows": len(rows),
            "cancelled": bool(rows.attrs.get("cancelled", False)),
            "notes": list(rows.attrs.get("notes", [])) + self.warnings,
        }
        return name, merged, summary


def _log_error(what: str, err: Exception) -> None:
    _logging.getLogger("judgescope").error("%s: %s", what, err, exc_info=err)


def merge_outputs(ds: Dataset, table: str, rows: pd.DataFrame, name: str) -> Dataset:
    """A validated copy of ``ds`` with judge outputs ``rows`` added to ``table``.

    Rows of ``ds`` from the same judge and attribute (and prompt for ratings) are replaced,
    so running a judge again updates its outputs instead of doubling them. ``ds`` itself is
    never changed (benchmarks are shared between sessions).
    """
    from data.validate import validate_dataset

    if table not in ("comparisons", "ratings"):
        raise ValueError(f"judge outputs go to 'comparisons' or 'ratings', not {table!r}")
    old = ds.table(table)
    keys = ["judge", "attribute"] + (["prompt_id"] if table == "ratings" else [])
    if len(old) and len(rows):
        new_keys = rows[keys].astype(str).drop_duplicates()
        hit = old[keys].astype(str).merge(new_keys, how="left", on=keys, indicator=True)
        old = old[(hit["_merge"] == "left_only").to_numpy()]
    combined = pd.concat([old, rows], ignore_index=True) if len(old) else rows.reset_index(
        drop=True)
    merged = _dc.replace(ds, name=name, **{table: combined})
    return validate_dataset(merged)


def import_outputs(ds: Dataset, file_name: str, content: bytes, kind: str,
                   name: str | None = None) -> tuple[Dataset, str]:
    """Merge an uploaded pairwise or ratings file into a copy of ``ds`` named ``name``.

    ``kind`` is "pairwise" (context, first, second and a verdict or probability) or
    "ratings" (the canonical ratings columns). Returns (merged dataset, table name).

    Raises
    ------
    DataError
        Naming the file, row and column of each problem, or candidates unknown to ``ds``.
    """
    from data.io import read_upload

    if kind not in ("pairwise", "ratings"):
        raise ValueError(f"kind must be 'pairwise' or 'ratings'; got {kind!r}")
    from data.validate import validate_dataset

    up = read_upload(file_name, content, kind=kind)
    table = "comparisons" if kind == "pairwise" else "ratings"
    rows = up.table(table)
    if not len(rows):
        raise DataError(f"{file_name}: no {table} rows found in the file")
    # Checked against the active candidates on its own first, so that messages give the
    # row numbers of the file rather than of the merged table.
    alone = Dataset(name=file_name, contexts=ds.contexts, candidates=ds.candidates,
                    **{table: rows})
    validate_dataset(alone, sources={table: file_name})
    return merge_outputs(ds, table, rows, name or f"{ds.name} + {file_name}"), table


_TAGGED = _re.compile(r"^\[(?P<tag>[\w\-]+)\]")


def failure_reason(raw, template=None) -> str:
    """Why an output has no value: the stored error code, or the parser's reason code."""
    from data.parsing import reason_code

    if raw is None or (isinstance(raw, float) and math.isnan(raw)) or not str(raw).strip():
        return "no answer"
    m = _TAGGED.match(str(raw))
    if m is not None:
        return m.group("tag")
    if template is not None:
        code = reason_code(template.parse_answer(raw).reason)
        if code:
            return code
    return "unparsed answer"


def outputs_with_failures(rows: pd.DataFrame, table: str, template=None) -> pd.DataFrame:
    """``rows`` with a ``failure`` column: the reason for every row without a value, else ""."""
    value = "p_first" if table == "comparisons" else "score"
    out = rows.copy()
    failed = out[value].isna().to_numpy()
    raw = out["raw"] if "raw" in out.columns else pd.Series([None] * len(out), index=out.index)
    reasons = np.full(len(out), "", dtype=object)
    for pos in np.flatnonzero(failed):
        reasons[pos] = failure_reason(raw.iloc[pos], template)
    out["failure"] = reasons
    return out


def failure_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Number of failed outputs per reason (from :func:`outputs_with_failures`)."""
    failed = rows.loc[rows["failure"] != "", "failure"]
    counts = failed.value_counts().rename_axis("reason").reset_index(name="n_outputs")
    counts["share_of_all"] = counts["n_outputs"] / max(len(rows), 1)
    return counts


# ---------------------------------------------------------------------------------------
# Human agreement page
# ---------------------------------------------------------------------------------------


def reference_groups(ds: Dataset) -> dict[str, list[str]]:
    """Annotator groups that can serve as the human reference (``data.agreement``)."""
    return _dag.annotator_groups(ds) if len(ds.human_scores) else {}


def default_group(groups: dict[str, list[str]]) -> str | None:
    """Experts first when a data set has several groups (SummEval), else the largest one."""
    if not groups:
        return None
    experts = [g for g in groups if g.lower().startswith("expert")]
    if experts:
        return experts[0]
    return max(groups, key=lambda g: (len(groups[g]), g))


def correlation_frame(ds: Dataset, method: str, variant: str, annotators, n_boot: int,
                      random_state: int = 0) -> pd.DataFrame:
    """Judge-human correlations at every level, with a ``label`` per (judge, prompt)."""
    table = _dag.correlation_table(ds, annotators=annotators, levels=tuple(LEVELS),
                                   methods=(method,), variant=variant, n_boot=int(n_boot),
                                   random_state=random_state)
    if len(table):
        table.insert(0, "label", [variant_label(j, p) for j, p in
                                  zip(table["judge"], table["prompt_id"], strict=True)])
    return table


def correlation_heatmap_frames(table: pd.DataFrame, level: str):
    """(values, hover text) frames, judges x attributes, for one level."""
    sel = table[table["level"] == level]
    values = sel.pivot_table(index="label", columns="attribute", values="value", aggfunc="first",
                             dropna=False)

    def hover(row) -> str:
        if not np.isfinite(row["value"]):
            return f"no value: {row['reason'] or 'undefined'}"
        text = f"{row['value']:.3f}"
        if np.isfinite(row["lower"]) and np.isfinite(row["upper"]):
            text += f" [{row['lower']:.3f}, {row['upper']:.3f}]"
        text += f"<br>units: {int(row['n_units']) if np.isfinite(row['n_units']) else '–'}"
        if row["reason"]:
            text += f"<br>{row['reason']}"
        return text

    sel = sel.assign(hover=[hover(r) for _, r in sel.iterrows()])
    texts = sel.pivot_table(index="label", columns="attribute", values="hover", aggfunc="first",
                            dropna=False)
    texts = texts.reindex(index=values.index, columns=values.columns)
    return values, texts


def baseline_frame(ds: Dataset, groups: dict, method: str, variant: str) -> pd.DataFrame:
    """Human baseline: each annotator vs the mean of the others, every level."""
    return _dag.human_baseline_table(ds, groups=groups, levels=tuple(LEVELS), method=method,
                                     variant=variant)


def scatter_frame(ds: Dataset, judge: str, prompt_id: str, annotators, jitter: float = 0.15,
                  random_state: int = 0) -> pd.DataFrame:
    """Judge score vs human mean per item and attribute, with jittered copies for plotting.

    Likert scores pile up on a few values; ``x_jitter`` / ``y_jitter`` add uniform noise of
    +-``jitter`` (seeded) so the density shows. The plain values stay in ``human``/``score``.
    """
    df = _dag.aligned_scores(ds, judge=judge, prompt_id=prompt_id, annotators=annotators)
    rng = np.random.default_rng(random_state)
    df = df.assign(
        x_jitter=df["human"] + rng.uniform(-jitter, jitter, len(df)),
        y_jitter=df["score"] + rng.uniform(-jitter, jitter, len(df)),
    )
    return df


def williams_frame(ds: Dataset, method: str, variant: str, annotators, level: str,
                   across_prompts: bool) -> pd.DataFrame:
    """Williams + BH table; ``across_prompts`` compares every (judge, prompt) pair together."""
    if across_prompts and len(ds.ratings):
        r = ds.ratings
        labels = [variant_label(j, p) for j, p in zip(r["judge"], r["prompt_id"], strict=True)]
        ds = _dc.replace(ds, ratings=r.assign(judge=labels, prompt_id="all prompts"))
    return _dag.williams_table(ds, annotators=annotators, level=level, method=method,
                               variant=variant)


def williams_heatmap_frames(table: pd.DataFrame, attribute: str, prompt_id: str):
    """(adjusted p, hover text) square frames for one attribute and prompt."""
    p = _dag.williams_matrix_frame(table, attribute, prompt_id, "p_bh")
    sel = table[(table["attribute"] == attribute) & (table["prompt_id"] == prompt_id)]
    hover = pd.DataFrame("", index=p.index, columns=p.columns)
    for row in sel.itertuples(index=False):
        for a, b, ra, rb in ((row.judge_a, row.judge_b, row.r_a, row.r_b),
                             (row.judge_b, row.judge_a, row.r_b, row.r_a)):
            hover.loc[a, b] = (
                f"{a} vs {b}<br>r = {ra:.3f} vs {rb:.3f} (difference {ra - rb:+.3f})"
                f"<br>p = {row.p:.3g}, BH-adjusted {row.p_bh:.3g}<br>n = {row.n}"
                + (f"<br>{row.reason}" if row.reason else "")
            )
    return p, hover


def human_verdict_agreement(ds: Dataset) -> pd.DataFrame:
    """Agreement of every pairwise judge with every human annotator's verdicts (PandaLM).

    Human verdicts are comparisons by judges named ``human:...``. Verdicts (A / B / tie, or
    p_first read as A above 0.5, B below, tie at 0.5) are matched on context, pair order,
    attribute and sample. Columns: judge, annotator, attribute, n_pairs, agreement (share
    of identical verdicts), cohen_kappa, reason. The annotator "human majority" is the most
    common human verdict of a pair (pairs without a majority are left out).
    """
    comps = ds.comparisons
    if not len(comps):
        return pd.DataFrame()
    names = comps["judge"].astype(str)
    human = names.str.startswith(HUMAN_JUDGE_PREFIX)
    if not human.any():
        return pd.DataFrame()
    keys = ["context_id", "attribute", "first_id", "second_id", "sample"]
    lab = comps[keys + ["judge"]].astype({k: str for k in keys[:4]}).copy()
    lab["label"] = _verdict_labels(comps)
    humans = sorted(names[human].unique())
    models = sorted(names[~human].unique())
    by_judge = {j: g.drop(columns="judge").drop_duplicates(keys) for j, g in lab.groupby("judge")}
    hv = lab[human.to_numpy()].dropna(subset=["label"])
    counts = hv.groupby(keys + ["label"], observed=True).size().rename("n").reset_index()
    top = counts.sort_values("n", ascending=False).groupby(keys, observed=True)
    best = top.head(1).set_index(keys)
    second = top.nth(1).set_index(keys)["n"] if len(counts) else pd.Series(dtype=float)
    tie = best["n"].reindex(best.index).eq(second.reindex(best.index)).fillna(False)
    majority = best[~tie.to_numpy()].reset_index()[keys + ["label"]]
    refs = {h: by_judge[h] for h in humans}
    if len(humans) > 1:
        refs["human majority"] = majority
    rows = []
    for j in models + humans:
        for h, ref in refs.items():
            if j == h:
                continue
            both = by_judge[j].merge(ref, on=keys, suffixes=("_j", "_h"))
            both = both.dropna(subset=["label_j", "label_h"])
            row = dict(judge=j, annotator=h, n_pairs=len(both), reason="")
            if not len(both):
                rows.append({**row, "agreement": np.nan, "cohen_kappa": np.nan,
                             "reason": "no pair judged by both"})
                continue
            row["agreement"] = float((both["label_j"] == both["label_h"]).mean())
            try:
                row["cohen_kappa"] = _rag.cohen_kappa(both["label_j"].to_numpy(object),
                                                      both["label_h"].to_numpy(object))
            except ValueError as err:  # undefined kappa is shown with its reason
                row.update(cohen_kappa=np.nan, reason=str(err))
            rows.append(row)
    out = pd.DataFrame(rows)
    out["is_human"] = out["judge"].str.startswith(HUMAN_JUDGE_PREFIX)
    return out.reindex(columns=["judge", "annotator", "n_pairs", "agreement", "cohen_kappa",
                                "is_human", "reason"])


def _verdict_labels(comps: pd.DataFrame) -> np.ndarray:
    """A / B / tie per comparison row: the verdict, else read from p_first; None if neither."""
    p = comps["p_first"].to_numpy(dtype=np.float64)
    from_p = np.where(p > 0.5, "A", np.where(p < 0.5, "B", "tie")).astype(object)
    from_p[~np.isfinite(p)] = None
    if "verdict" in comps.columns:
        v = comps["verdict"].astype(object).to_numpy()
        given = np.array([isinstance(x, str) and x in ("A", "B", "tie") for x in v])
        from_p[given] = v[given]
    return from_p


def pairwise_accuracy_frame(ds: Dataset, annotators) -> pd.DataFrame:
    """Pairwise accuracy of comparative judges against the human mean scores."""
    return _dag.pairwise_accuracy_table(ds, annotators=annotators)


# ---------------------------------------------------------------------------------------
# Prompt sensitivity page
# ---------------------------------------------------------------------------------------


def rating_variants(ds: Dataset) -> pd.DataFrame:
    """Ratings with ``model``, ``temperature`` and ``variant`` (template, and temperature
    when a model was run at several) columns; see :func:`judge_model`."""
    r = ds.ratings
    if not len(r):
        return r.assign(model=[], temperature=[], variant=[])
    pairs = r[["judge", "prompt_id"]].astype(str).drop_duplicates()
    info = {(j, p): judge_model(j, p) for j, p in zip(pairs["judge"], pairs["prompt_id"],
                                                      strict=True)}
    keys = list(zip(r["judge"].astype(str), r["prompt_id"].astype(str), strict=True))
    out = r.assign(model=[info[k][0] for k in keys],
                   temperature=[info[k][1] for k in keys])
    out["temperature"] = out["temperature"].astype("float64")
    n_temps = out.groupby("model")["temperature"].nunique(dropna=False)
    several = out["model"].map(n_temps).to_numpy() > 1
    temp_txt = out["temperature"].map(lambda t: "t?" if pd.isna(t) else f"t{t:g}")
    out["variant"] = np.where(several, out["prompt_id"].astype(str) + " @ " + temp_txt,
                              out["prompt_id"].astype(str))
    return out


def model_options(variants: pd.DataFrame) -> list[str]:
    """Models, the one with the most templates (then most rows) first."""
    if not len(variants):
        return []
    stats = variants.groupby("model").agg(n_var=("variant", "nunique"), n=("score", "size"))
    stats = stats.sort_values(["n_var", "n"], ascending=False)
    return stats.index.astype(str).tolist()


def item_means(variants: pd.DataFrame, model: str, attribute: str) -> pd.DataFrame:
    """Mean parsed score per item (context, candidate) and variant for one model/attribute."""
    sel = variants[(variants["model"] == model) & (variants["attribute"].astype(str) == attribute)]
    return (sel.groupby(["context_id", "candidate_id", "variant"], observed=True)["score"]
            .mean().reset_index())


def mean_shift_frame(variants: pd.DataFrame, model: str, baseline: str,
                     level_ci: float = 0.95) -> pd.DataFrame:
    """Mean score of each variant minus the baseline's, paired over items, with a t interval.

    Per attribute and variant: ``shift`` = mean over items rated (parsed) under both of
    (score - baseline score), ``lower``/``upper`` the ``level_ci`` t interval, ``pvalue``
    of the paired t-test, ``n_items``. Items are (context, candidate) with the score
    averaged over samples.
    """
    from scipy import stats as _stats

    rows = []
    sel = variants[variants["model"] == model]
    for attribute in sorted(sel["attribute"].astype(str).unique()):
        wide = item_means(variants, model, attribute).pivot_table(
            index=["context_id", "candidate_id"], columns="variant", values="score")
        if baseline not in wide.columns:
            continue
        for v in wide.columns:
            if v == baseline:
                continue
            d = (wide[v] - wide[baseline]).to_numpy(dtype=np.float64)
            d = d[np.isfinite(d)]
            row = dict(attribute=attribute, variant=v, baseline=baseline, n_items=len(d))
            if len(d) < 2:
                rows.append({**row, "shift": np.nan, "lower": np.nan, "upper": np.nan,
                             "pvalue": np.nan, "reason": "fewer than 2 items rated under both"})
                continue
            mean, sd = float(d.mean()), float(d.std(ddof=1))
            half = float(_stats.t.ppf(0.5 + level_ci / 2, len(d) - 1)) * sd / math.sqrt(len(d))
            pval = (float(_stats.ttest_1samp(d, 0.0).pvalue) if sd > 0
                    else (1.0 if mean == 0 else 0.0))
            rows.append({**row, "shift": mean, "lower": mean - half, "upper": mean + half,
                         "pvalue": pval, "reason": ""})
    return pd.DataFrame(rows).reindex(columns=["attribute", "variant", "baseline", "shift",
                                               "lower", "upper", "pvalue", "n_items", "reason"])


def rank_stability(ds: Dataset, variants: pd.DataFrame, model: str, attribute: str,
                   level: str = "system") -> pd.DataFrame:
    """Kendall tau-b between the rankings two variants induce, variant x variant.

    ``level`` "system": systems ranked by their mean score (needs system labels). "item":
    candidates ranked within each context; the mean of the per-context taus (contexts
    where a tau is undefined, e.g. constant scores, are left out).
    """
    means = item_means(variants, model, attribute)
    names = sorted(means["variant"].unique())
    if level == "system":
        cands = ds.candidates
        if "system" not in cands.columns or not cands["system"].notna().any():
            raise DataError(f"{ds.name}: candidates carry no system labels; use the item level")
        lut = cands[["context_id", "candidate_id", "system"]].astype(str).drop_duplicates(
            ["context_id", "candidate_id"])
        means = means.astype({"context_id": str, "candidate_id": str}).merge(
            lut, on=["context_id", "candidate_id"], how="left")
        wide = means.pivot_table(index="system", columns="variant", values="score")
        vectors = {v: wide[v].to_numpy(dtype=np.float64) for v in names}
    elif level == "item":
        wide = means.pivot_table(index=["context_id", "candidate_id"], columns="variant",
                                 values="score")
        vectors = {}
        for v in names:
            block = wide[v].unstack("candidate_id")
            vectors[v] = block.to_numpy(dtype=np.float64)
    else:
        raise ValueError(f"level must be 'system' or 'item'; got {level!r}")
    out = pd.DataFrame(np.nan, index=names, columns=names)
    for a in names:
        for b in names:
            tau = _kendall(vectors[a], vectors[b])
            out.loc[a, b] = mean_finite(tau) if np.ndim(tau) else float(tau)
    return out


def rating_failure_frame(variants: pd.DataFrame, model: str) -> pd.DataFrame:
    """Share of unparsed ratings per variant and attribute for one model."""
    sel = variants[variants["model"] == model]
    out = (sel.assign(failed=sel["score"].isna())
           .groupby(["variant", "attribute"], observed=True)["failed"]
           .agg(failure_rate="mean", n_failed="sum", n_outputs="size").reset_index())
    out["n_failed"] = out["n_failed"].astype("int64")
    return out


def pairwise_by_template(ds: Dataset) -> pd.DataFrame:
    """Per comparative judge (its name carries the template) and attribute: the position-bias
    columns of :func:`compute_bias_table`, pairwise accuracy against the human reference
    (:func:`build_reference`; NaN without one) and the share of unparsed answers. Human
    annotators are left out (they have no template)."""
    bias = compute_bias_table(ds)
    if not len(bias):
        return bias
    names = bias["judge"].astype(str)
    bias = bias[(names != HUMAN_POOL) & ~names.str.startswith(HUMAN_JUDGE_PREFIX)]
    comps = ds.comparisons
    failed = comps.assign(failed=comps["p_first"].isna()).groupby(
        ["judge", "attribute"], observed=True)["failed"].mean()
    accuracy, reference, failure = [], [], []
    for judge, attribute in zip(bias["judge"], bias["attribute"], strict=True):
        pm = build_pmatrix(ds, attribute, judge)
        ref = build_reference(ds, attribute, pm)
        acc = math.nan
        if ref is not None:
            try:
                acc = pairwise_accuracy(pm.P, ref.scores)
            except ValueError:  # no pair with two different reference scores: undefined
                acc = math.nan
        accuracy.append(acc)
        reference.append(ref.source if ref is not None else "none")
        failure.append(float(failed.get((judge, attribute), math.nan)))
    return bias.assign(pairwise_accuracy=accuracy, failure_rate=failure,
                       reference=reference).reset_index(drop=True)


# ---------------------------------------------------------------------------------------
# Cached wrappers (keyed by dataset_key())
# ---------------------------------------------------------------------------------------


@st.cache_data(show_spinner="Correlating judges with humans (bootstrap intervals)…",
               max_entries=16)
def agreement_correlations(key: str, method: str, variant: str, annotators: tuple | None,
                           n_boot: int, random_state: int = 0) -> pd.DataFrame:
    """:func:`correlation_frame` of the dataset behind ``key``."""
    return correlation_frame(dataset(key), method, variant,
                             list(annotators) if annotators else None, n_boot, random_state)


@st.cache_data(show_spinner="Human baseline…", max_entries=16)
def agreement_baseline(key: str, group: str, method: str, variant: str) -> pd.DataFrame:
    """:func:`baseline_frame` for one annotator group (all groups if ``group`` is unknown)."""
    ds = dataset(key)
    groups = reference_groups(ds)
    return baseline_frame(ds, {group: groups[group]} if group in groups else groups, method,
                          variant)


@st.cache_data(show_spinner="Inter-annotator agreement…", max_entries=16)
def agreement_iaa(key: str) -> pd.DataFrame:
    """``data.agreement.iaa_table``: ICC2k, Krippendorff's alpha, share all agree per group."""
    return _dag.iaa_table(dataset(key))


@st.cache_data(show_spinner="Judge self-consistency…", max_entries=16)
def agreement_self_consistency(key: str) -> pd.DataFrame:
    """``data.agreement.self_consistency_table`` with a ``label`` per (judge, prompt)."""
    table = _dag.self_consistency_table(dataset(key))
    if len(table):
        table.insert(0, "label", [variant_label(j, p) for j, p in
                                  zip(table["judge"], table["prompt_id"], strict=True)])
    return table


@st.cache_data(show_spinner="Williams tests between judges…", max_entries=16)
def agreement_williams(key: str, method: str, variant: str, annotators: tuple | None,
                       level: str, across_prompts: bool) -> pd.DataFrame:
    """:func:`williams_frame` of the dataset behind ``key``."""
    return williams_frame(dataset(key), method, variant,
                          list(annotators) if annotators else None, level, across_prompts)


@st.cache_data(show_spinner=False, max_entries=16)
def agreement_scatter(key: str, judge: str, prompt_id: str,
                      annotators: tuple | None) -> pd.DataFrame:
    """:func:`scatter_frame` of the dataset behind ``key``."""
    return scatter_frame(dataset(key), judge, prompt_id, list(annotators) if annotators else None)


@st.cache_data(show_spinner="Pairwise accuracy…", max_entries=16)
def agreement_pairwise_accuracy(key: str, annotators: tuple | None) -> pd.DataFrame:
    """:func:`pairwise_accuracy_frame` of the dataset behind ``key``."""
    return pairwise_accuracy_frame(dataset(key), list(annotators) if annotators else None)


@st.cache_data(show_spinner="Agreement with the human verdicts…", max_entries=16)
def agreement_verdicts(key: str) -> pd.DataFrame:
    """:func:`human_verdict_agreement` of the dataset behind ``key``."""
    return human_verdict_agreement(dataset(key))


@st.cache_data(show_spinner=False, max_entries=16)
def prompt_variants(key: str) -> pd.DataFrame:
    """:func:`rating_variants` of the dataset behind ``key``."""
    return rating_variants(dataset(key))


@st.cache_data(show_spinner=False, max_entries=32)
def prompt_mean_shift(key: str, model: str, baseline: str) -> pd.DataFrame:
    """:func:`mean_shift_frame` of one model against ``baseline``."""
    return mean_shift_frame(prompt_variants(key), model, baseline)


@st.cache_data(show_spinner="Comparing the rankings the templates induce…", max_entries=32)
def prompt_rank_stability(key: str, model: str, attribute: str, level: str) -> pd.DataFrame:
    """:func:`rank_stability` of one model and attribute."""
    return rank_stability(dataset(key), prompt_variants(key), model, attribute, level)


@st.cache_data(show_spinner="Position bias and accuracy per template…", max_entries=16)
def prompt_pairwise(key: str) -> pd.DataFrame:
    """:func:`pairwise_by_template` of the dataset behind ``key``."""
    return pairwise_by_template(dataset(key))


# =======================================================================================
# END section: Judge, Human agreement and Prompt sensitivity pages (helper D2)
# =======================================================================================

"""Arena-style designs and win rates against a baseline (issue 22 items 4 and 5).

An **arena-style design** (:func:`design`): the contexts are questions, the systems recur
across them and each question compares only a few of them (Arena-Hard: every model against
one baseline, two candidates a question). Ranking each question apart then means hundreds
of two-candidate rankings; the Rankings page ranks the systems across all questions instead
(the leaderboard model) and says so in one line.

**Win rates against a baseline** (:func:`baseline_table`): every system's predicted win rate
against a baseline system, sigmoid(theta_system - theta_baseline) from the systems' Bradley–
Terry fit (``pages.services.leaderboard.system_ranking``), with the interval of that fit:
bootstrap percentiles with each replicate anchored at the baseline (Arena-Hard), or the Fisher
(Wald) interval of the difference (``ranking.baseline_win_rates``). :func:`default_baseline`
picks the baseline a page opens with: the one an Arena-Hard file names (the dataset's
description says "baseline '<name>'"), else the system that meets the most others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.flat import flat_comparisons
from data.natural import natural_key
from data.schema import Dataset
from pages.services.calibration import debiased_outcomes
from pages.services.common import cache_data
from pages.services.comparisons import pmatrix, select_comparisons
from pages.services.leaderboard import SOFT, system_items, system_ranking
from ranking import baseline_win_rates

#: An arena-style design spans at least this many contexts.
MIN_ARENA_CONTEXTS = 10


@dataclass(frozen=True)
class Design:
    """How the comparisons are laid out over contexts and systems.

    Attributes
    ----------
    arena : bool
        An arena-style design: the systems recur across at least :data:`MIN_ARENA_CONTEXTS`
        contexts, and in most contexts every comparison involves one same candidate (a
        star around a baseline, or a single pair), so a context ranks nothing but that
        candidate against each other one, and most of its scores come from the ridge prior.
        (SummEval's documents, compared along a path of adjacent pairs, are not: their
        per-document rankings are what its human agreement is measured on.)
    line : str
        One sentence saying what the design is and what is ranked ("" when not arena-style).
    n_contexts, n_systems : int
        Contexts with a comparison; systems (or recurring candidate ids) ranked across them.
    candidates, pairs : float
        Median candidates compared in a context, and median distinct pairs compared.
    stars : float
        Share of the contexts whose comparisons all involve one same candidate.
    """

    arena: bool
    line: str
    n_contexts: int
    n_systems: int
    candidates: float
    pairs: float
    stars: float = 0.0


@cache_data(show_spinner=False, max_entries=64)
def design(ds: Dataset, attribute: str, judge: str) -> Design:
    """Whether the judge's comparisons of ``attribute`` form an arena-style design."""
    item, _why = system_items(ds, attribute, judge)
    pm = pmatrix(ds, attribute, judge)
    counts = np.asarray(pm.counts)
    met = (counts + np.swapaxes(counts, 1, 2)) > 0
    pairs = met.sum(axis=(1, 2)) // 2
    sizes = met.any(axis=2).sum(axis=1)
    used = pairs > 0
    n_ctx = int(used.sum())
    med_n = float(np.median(sizes[used])) if n_ctx else 0.0
    med_p = float(np.median(pairs[used])) if n_ctx else 0.0
    # a star: one candidate takes part in every pair of the context
    star = float((met.sum(axis=2).max(axis=1) == pairs)[used].mean()) if n_ctx else 0.0
    if item is None or not n_ctx:
        return Design(False, "", n_ctx, 0, med_n, med_p, star)
    n_sys = _n_items(ds, pm, item)
    arena = n_ctx >= MIN_ARENA_CONTEXTS and star > 0.5 and n_sys > 2
    line = ""
    if arena:
        shape = (
            "one pair of candidates"
            if med_p <= 1
            else f"{med_n - 1:g} candidates against one other (a baseline)"
        )
        line = (
            f"Arena-style design: each of the {n_ctx:,} contexts (questions) compares "
            f"{shape}, the {n_sys} systems recurring across them, so the systems "
            "are ranked across all contexts (Bradley–Terry over every comparison pooled, the "
            "leaderboard's model) rather than each context apart."
        )
    return Design(arena, line, n_ctx, n_sys, med_n, med_p, star)


def _n_items(ds: Dataset, pm, item: str) -> int:
    ids = pd.DataFrame(
        {
            "context_id": np.repeat(pm.context_ids, [len(c) for c in pm.candidate_ids]),
            "candidate_id": [x for cs in pm.candidate_ids for x in cs],
        }
    )
    if item == "candidate":
        return int(ids["candidate_id"].nunique())
    lut = ds.candidates[["context_id", "candidate_id", "system"]].astype(
        {"context_id": str, "candidate_id": str}
    )
    merged = ids.merge(lut.drop_duplicates(["context_id", "candidate_id"]), how="left")
    return int(merged["system"].dropna().astype(str).nunique())


def _flat(ds: Dataset, attribute: str, judge: str, rule: tuple = SOFT):
    item, _ = system_items(ds, attribute, judge)
    if item is None:
        return None
    rows = debiased_outcomes(ds, attribute, judge, select_comparisons(ds, attribute, judge), rule)
    fc = flat_comparisons(
        rows, attribute=attribute, judge=judge, item=item, candidates=ds.candidates
    )
    return fc if len(fc.items) >= 2 and len(fc.p) else None


_NAMED = re.compile(r"baseline '(.+)'$")


@cache_data(show_spinner=False, max_entries=64)
def baseline_options(ds: Dataset, attribute: str, judge: str) -> tuple[list[str], str | None]:
    """(the systems ranked, best first by how many others each meets; the default baseline).

    The default: the baseline named by an Arena-Hard file (``data.importers`` writes it in
    the dataset's description) when it is one of the systems; else the system that meets the
    most different opponents (then the most battles, then natural order). No systems: ([],
    None).
    """
    fc = _flat(ds, attribute, judge)
    if fc is None:
        return [], None
    n = len(fc.items)
    pairs = np.unique(np.minimum(fc.first, fc.second) * n + np.maximum(fc.first, fc.second))
    opponents = np.bincount(pairs // n, minlength=n) + np.bincount(pairs % n, minlength=n)
    battles = np.bincount(fc.first, minlength=n) + np.bincount(fc.second, minlength=n)
    order = sorted(range(n), key=lambda k: (-opponents[k], -battles[k], natural_key(fc.items[k])))
    systems = [fc.items[k] for k in order]
    named = _NAMED.search(ds.description or "")
    if named and named.group(1) in systems:
        return systems, named.group(1)
    return systems, systems[0]


@cache_data(show_spinner="Win rates against the baseline…", max_entries=64)
def baseline_table(
    ds: Dataset,
    attribute: str,
    judge: str,
    baseline: str,
    intervals: str = "fisher",
    rule: tuple = SOFT,
    resample: str = "comparisons",
    elo_band: bool = True,
) -> pd.DataFrame | None:
    """Win rate of every system against ``baseline``, best first; None when nothing ranks.

    Columns: ``system``, ``win_rate`` (%, sigmoid(theta_system - theta_baseline) of the
    systems' Bradley–Terry fit under ``intervals`` / ``resample`` / the debias ``rule``, as
    :func:`~pages.services.leaderboard.system_ranking` fits it), ``lower``, ``upper`` (its
    95 % interval in %, bootstrap percentiles anchored at the baseline or Fisher),
    ``bt_score``, ``vs_baseline`` (the battles with the baseline) and ``observed`` (%: the
    share of those battles the system won, each with its weight, a tie or a soft outcome
    counting its part; empty without battles). The baseline's row: 50, 50, 50. ``elo_band``
    as the page's own ``system_ranking`` call has it, so that the fit is the cached one (no
    Elo shown here). ``attrs``:
    ``method`` ("bootstrap" / "fisher" / "none") and ``baseline``.

    Raises
    ------
    KeyError
        ``baseline`` is not one of the systems ranked.
    """
    result = system_ranking(
        ds, attribute, judge, intervals, rule=rule, resample=resample, elo_band=elo_band
    )
    if result is None or result.bt is None:
        return None
    items = list(result.items)
    if baseline not in items:
        raise KeyError(
            f"baseline {baseline!r} is not one of the {len(items)} systems ranked; choose one "
            "of them"
        )
    b = items.index(baseline)
    wr = baseline_win_rates(result.bt, b)
    fc = _flat(ds, attribute, judge, rule)
    n = len(items)
    vs = np.zeros(n, dtype=np.int64)
    observed = np.full(n, np.nan)
    if fc is not None and list(fc.items) == items:
        direct = (fc.first == b) ^ (fc.second == b)
        other = np.where(fc.first == b, fc.second, fc.first)[direct]
        won = np.where(fc.first == b, 1.0 - fc.p, fc.p)[direct]  # from the other's side
        w = fc.weight[direct]
        vs = np.bincount(other, minlength=n)
        total = np.bincount(other, w, minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = np.where(
                vs > 0, 100.0 * np.bincount(other, w * won, minlength=n) / total, np.nan
            )
    table = pd.DataFrame(
        {
            "system": items,
            "win_rate": 100.0 * wr.rate,
            "lower": 100.0 * wr.lower,
            "upper": 100.0 * wr.upper,
            "bt_score": result.bt.scores,
            "vs_baseline": vs,
            "observed": observed,
        }
    )
    table["_k"] = table["system"].map(natural_key)
    table = table.sort_values("_k").sort_values(
        "win_rate", ascending=False, kind="stable", na_position="last"
    )
    table = table.drop(columns="_k").reset_index(drop=True)
    table.attrs["method"] = wr.method
    table.attrs["baseline"] = baseline
    return table

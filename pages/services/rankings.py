"""Services of the Rankings page: every ranking method per context, with agreement.

Win-ratio, maximum likelihood and Bradley–Terry scores per context (``ranking``), their
agreement with the human reference, one context's table and slope chart, the padded-free P
block of a context, and the systems ranked over every context pooled: Bradley–Terry with
intervals beside Elo with a band over game orderings.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

import numpy as np
import pandas as pd

from data.arrays import PMatrix
from data.natural import natural_key, natural_sorted
from data.schema import Dataset
from pages.services.calibration import debiased_P
from pages.services.common import cache_data, mean_finite, with_systems
from pages.services.comparisons import Reference, human_reference, pmatrix
from pages.services.leaderboard import (  # noqa: F401  (the Rankings page's systems)
    SystemRanking,
    compare_systems,
    system_items,
    system_ranking,
)
from ranking import bradley_terry, ml_ranking, order_matrix, pairwise_accuracy, spearman, win_ratio

#: The rule of :class:`pages.services.bias.Debias` that ranks the probabilities as they are.
SOFT = ("soft", None)

#: Ranking methods, in display order.
METHODS = ("win-ratio", "maximum likelihood", "Bradley–Terry")
#: The agreement row of the judge's single comparisons (decided at the threshold in use).
JUDGE_ROW = "judge comparisons"


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


def _bt_notes(bt, context_ids: list[str], P: np.ndarray) -> list[str]:
    """Bradley–Terry's flags per context, naming the contexts by id (not by index)."""

    def where(mask) -> str:
        ids = [context_ids[k] for k in np.flatnonzero(mask)]
        # an id may be a whole instruction (a pairwise file keyed by its prompt): 60 characters
        shown = ", ".join(textwrap.shorten(i, 60, placeholder="…") for i in natural_sorted(ids)[:5])
        return f"{len(ids)} context(s) ({shown}{' …' if len(ids) > 5 else ''})"

    notes = []
    empty = ~np.isfinite(P).any(axis=(1, 2))
    if empty.any():
        notes.append(
            f"{where(empty)} have no comparison at all, so every method leaves their "
            "candidates unranked."
        )
        # BT flags an empty context as not finite as well
    multi = (np.atleast_1d(bt.n_components) > 1) & ~empty
    if multi.any():
        notes.append(
            f"Bradley–Terry: in {where(multi)} the comparisons fall into separate groups of "
            "candidates; scores are comparable only within a group."
        )
    no_mle = ~np.atleast_1d(bt.finite_mle) & ~empty
    if no_mle.any():
        notes.append(
            f"Bradley–Terry: in {where(no_mle)} some candidates never lose or never win; "
            "they were fitted with a small ridge prior so that their scores stay finite."
        )
    stuck = ~np.atleast_1d(bt.converged) & ~empty
    if stuck.any():
        notes.append(f"Bradley–Terry: the fit did not converge in {where(stuck)}.")
    return notes


def compute_rankings(
    pm: PMatrix, ref: Reference | None, P: np.ndarray | None = None, tau=None
) -> Rankings:
    """Win-ratio, maximum-likelihood and Bradley–Terry scores per context, with agreement.

    A context of ``pm`` without any comparison gets NaN scores from every method (and no
    Spearman); equally likely maximum-likelihood orders come back as tied scores
    (``ranking.ml``), so an uninformative judge has no correlation with the humans, as with
    win-ratio and Bradley–Terry.

    ``P`` (default ``pm.P``, laid out like it) is what is ranked: the judge's P or a
    debiased one (``pages.services.calibration.debiased_P``). With ``tau=None`` win-ratio counts
    hard wins at 0.5 and maximum likelihood and Bradley–Terry use the probabilities
    themselves (soft outcomes); with a threshold (one per context allowed) every method
    ranks the decisions at it. Win-ratio and Bradley–Terry count each comparison with its
    weight (``pm.weights``). The page's cached :func:`rankings` runs it on the judge's P;
    tests run it on hand-made ones.
    """
    P = pm.P if P is None else P
    ml = ml_ranking(P, tau=tau)
    bt = bradley_terry(P, tau=tau, weights=pm.weights)
    scores = {
        "win-ratio": win_ratio(P, tau=0.5 if tau is None else tau, weights=pm.weights),
        "maximum likelihood": ml.scores,
        "Bradley–Terry": bt.scores,
    }
    notes = _bt_notes(bt, pm.context_ids, P)
    if pm.weights is not None:
        notes.append(
            "The comparisons carry weights: win-ratio and Bradley–Terry count each with its "
            "weight; maximum likelihood and pairwise accuracy count each comparison once."
        )
    n_heur = sum(m == "heuristic" for m in ml.method)
    if n_heur:
        notes.append(
            f"Maximum likelihood: {n_heur} context(s) have too many candidates for the exact "
            "search and use local search from the Bradley–Terry order."
        )
    n_tied = int((ml.n_orders > 1).sum())
    if n_tied:
        notes.append(
            f"Maximum likelihood: in {n_tied} context(s) several orders are equally likely; "
            "candidates get their mean rank over those orders, so the ones the comparisons "
            "do not separate share a rank."
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
                    "pairwise_accuracy": float(pairwise_accuracy(order_matrix(s), ref.scores)),
                    "n_contexts": int(np.isfinite(rho).sum()),
                }
            )
        rows.append(
            {
                "method": JUDGE_ROW,
                "spearman": math.nan,
                "pairwise_accuracy": float(
                    pairwise_accuracy(P, ref.scores, tau=0.5 if tau is None else tau)
                ),
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
    df = df.assign(_k=df["candidate"].map(natural_key)).sort_values("_k")
    df = df.sort_values(f"rank: {method}", kind="stable", na_position="last")
    return df.drop(columns="_k").reset_index(drop=True)


def bump_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Long table (candidate, method, rank) for the slope chart, from :func:`context_frame`."""
    cols = [c for c in frame.columns if c.startswith("rank: ")]
    long = frame.melt(id_vars="candidate", value_vars=cols, var_name="method", value_name="rank")
    long["method"] = long["method"].str.removeprefix("rank: ")
    return long.dropna(subset=["rank"])


def matrix_view(pm: PMatrix, c: int):
    """Context ``c`` without padding, candidates in natural order (M2 before M10):
    (candidate ids, P block, counts block, long table).

    The long table (first, second, p_first, samples) holds the compared cells, for download.
    """
    n = len(pm.candidate_ids[c])
    order = sorted(range(n), key=lambda k: natural_key(pm.candidate_ids[c][k]))
    ids = [pm.candidate_ids[c][k] for k in order]
    block = np.array(pm.P[c, :n, :n])[np.ix_(order, order)]
    counts = np.array(pm.counts[c, :n, :n])[np.ix_(order, order)]
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


@cache_data(show_spinner="Ranking every context…", max_entries=32)
def rankings(ds: Dataset, attribute: str, judge: str, rule: tuple = SOFT) -> Rankings:
    """Every ranking method in every context of the judge's P under the debias ``rule``
    (``pages.services.bias.Debias.rule``; default the probabilities as they are), with
    agreement with the human reference (see :func:`compute_rankings`)."""
    P, tau = debiased_P(ds, attribute, judge, rule)
    pm = pmatrix(ds, attribute, judge)
    return compute_rankings(pm, human_reference(ds, attribute, judge), P, tau)


#: Score columns of :func:`candidate_scores`.
WIN_RATIO, HUMAN = "judge win-ratio", "human score"


def candidate_scores(ds: Dataset, pm: PMatrix, rk: Rankings, ref: Reference | None):
    """One row per ranked candidate: context_id, candidate_id, system, the judge's win-ratio
    in its context (under the ranking's debias rule) and the human reference score (when
    there is one); for comparing groups of systems (``pages.shell.system_groups``).

    Empty (with those columns) when the candidates carry no system labels.
    """
    cols = ["context_id", "candidate_id", "system", WIN_RATIO] + ([HUMAN] if ref else [])
    cands = ds.candidates
    if "system" not in cands.columns or not cands["system"].notna().any():
        return pd.DataFrame(columns=cols)
    n = [len(ids) for ids in pm.candidate_ids]
    rows = {
        "context_id": np.repeat(pm.context_ids, n),
        "candidate_id": [c for ids in pm.candidate_ids for c in ids],
        WIN_RATIO: np.concatenate([rk.scores["win-ratio"][c, :k] for c, k in enumerate(n)]),
    }
    if ref is not None:
        rows[HUMAN] = np.concatenate([ref.scores[c, :k] for c, k in enumerate(n)])
    out = pd.DataFrame(rows).astype({"context_id": str, "candidate_id": str})
    out = with_systems(out, cands)
    return out[cols]

"""Transitivity tables of a judge: circular triads per context and the worst cycles.

The judge's majority preference between two candidates of a context averages both orders
(``ranking.transitivity``); a triad is circular when a > b > c > a. :func:`cycles_summary`
gives per context the circular triads, the Kendall–Babington Smith coefficient of
consistence and the share of the judge's comparisons that disagree with its own
Bradley–Terry fit; :func:`worst_cycles` lists the strongest cycles by candidate id (each
openable in the per-example view).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import ranking
from data.arrays import comparisons_to_P
from data.bias.pairs import _judge_rows
from data.bias.pmatrix import prebuilt

__all__ = [
    "CYCLE_COLUMNS",
    "SUMMARY_COLUMNS",
    "cycles_pmatrix",
    "cycles_summary",
    "transitivity_of",
    "worst_cycles",
]

#: Columns of :func:`cycles_summary`.
SUMMARY_COLUMNS = (
    "context_id",
    "n_candidates",
    "n_circular",
    "n_triads",
    "zeta",
    "bt_disagreement",
)
#: Columns of :func:`worst_cycles`.
CYCLE_COLUMNS = ("context_id", "i", "j", "k", "strength")


def cycles_pmatrix(ds, attribute: str, judge: str):
    """The judge's P laid out as the transitivity tables read it (candidate-table order).

    Parameters
    ----------
    ds : Dataset
        A validated dataset.
    attribute, judge : str
        A pairwise judge and the attribute.

    Returns
    -------
    PMatrix or None
        ``data.arrays.comparisons_to_P`` over the judge's comparisons of the attribute,
        rows in the order of ``ds.all_candidates()``; None when it has none. Build it once per
        judge and pass it as ``pm=`` to :func:`cycles_summary` and :func:`worst_cycles`.

    Raises
    ------
    DataError
        ``judge`` has no comparisons in ``ds``.
    """
    rows = _judge_rows(ds, str(attribute), str(judge))
    if not len(rows):
        return None
    return comparisons_to_P(
        rows, attribute=str(attribute), judge=str(judge), candidates=ds.all_candidates()
    )


def transitivity_of(
    ds,
    attribute: str,
    judge: str,
    *,
    tau: float = 0.5,
    max_cycles: int = 50,
    pm=None,
):
    """``ranking.transitivity`` of the judge's P, with the PMatrix that names its rows.

    Parameters
    ----------
    ds, attribute, judge
        As for :func:`cycles_pmatrix`.
    tau : float, default 0.5
        Decision threshold of the majority preferences.
    max_cycles : int, default 50
        Most cycles listed.
    pm : PMatrix, optional
        :func:`cycles_pmatrix` of this selection built once per judge, used as is; built
        here when None.

    Returns
    -------
    (TransitivityResult, PMatrix) or (None, None)
        None when the judge has no comparison for the attribute.

    Raises
    ------
    DataError
        ``judge`` has no comparisons in ``ds``.
    ValueError
        ``pm`` built for another attribute or judge.
    """
    pm = prebuilt(pm, ds, attribute, judge, cycles_pmatrix)
    if pm is None:
        return None, None
    return ranking.transitivity(pm.P, tau=tau, max_cycles=max_cycles), pm


def cycles_summary(ds, attribute: str, judge: str, *, tau: float = 0.5, pm=None) -> pd.DataFrame:
    """Circular triads, coefficient of consistence and Bradley–Terry disagreement per context.

    Parameters
    ----------
    ds, attribute, judge, tau, pm
        As for :func:`transitivity_of`.

    Returns
    -------
    pandas.DataFrame
        One row per context the judge compared, in candidate-table order, columns
        :data:`SUMMARY_COLUMNS`: ``n_candidates`` (compared candidates), ``n_circular``,
        ``n_triads`` (triads with all three pairs compared and no tie), ``zeta`` (NaN unless
        the context is a complete tournament without ties), ``bt_disagreement``.
        ``attrs``: ``total_circular``, ``total_triads``, ``circular_share``,
        ``bt_disagreement`` (pooled), ``reasons``; no rows when nothing was compared.

    Raises
    ------
    DataError
        ``judge`` has no comparisons in ``ds``.
    """
    tr, pm = transitivity_of(ds, attribute, judge, tau=tau, max_cycles=0, pm=pm)
    if tr is None:
        df = pd.DataFrame({c: pd.Series(dtype="float64") for c in SUMMARY_COLUMNS})
        df["context_id"] = df["context_id"].astype(object)
        df.attrs["reasons"] = {"pairs": f"judge {judge!r} has no comparisons for {attribute!r}"}
        return df
    df = pd.DataFrame(
        {
            "context_id": pm.context_ids,
            "n_candidates": np.asarray(tr.n_candidates, dtype=np.int64),
            "n_circular": np.asarray(tr.n_circular, dtype=np.int64),
            "n_triads": np.asarray(tr.n_triads, dtype=np.int64),
            "zeta": np.asarray(tr.zeta, dtype=np.float64),
            "bt_disagreement": np.asarray(tr.bt_disagreement, dtype=np.float64),
        },
        columns=list(SUMMARY_COLUMNS),
    )
    df.attrs.update(
        total_circular=int(tr.total_circular),
        total_triads=int(tr.total_triads),
        circular_share=float(tr.circular_share),
        bt_disagreement=float(tr.bt_disagreement_pooled),
        reasons={k: str(v) for k, v in tr.reasons.items()},
    )
    return df


def worst_cycles(
    ds, attribute: str, judge: str, n: int = 20, *, tau: float = 0.5, pm=None
) -> pd.DataFrame:
    """The strongest cycles a > b > c > a of the judge's majority preferences.

    Parameters
    ----------
    ds, attribute, judge, tau, pm
        As for :func:`transitivity_of`.
    n : int, default 20
        Most cycles listed.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CYCLE_COLUMNS`: the context and the candidate ids ``i``, ``j``, ``k``
        (i preferred to j, j to k, k to i) and ``strength`` (the weakest of the three
        majority margins |m - 0.5|), strongest first; no rows when there is no cycle.

    Raises
    ------
    DataError
        ``judge`` has no comparisons in ``ds``.
    """
    tr, pm = transitivity_of(ds, attribute, judge, tau=tau, max_cycles=int(n), pm=pm)
    if tr is None or not len(tr.cycles["context"]):
        df = pd.DataFrame({c: pd.Series(dtype="object") for c in CYCLE_COLUMNS})
        df["strength"] = df["strength"].astype("float64")
        return df
    cyc = tr.cycles
    ctx = np.asarray(cyc["context"], dtype=np.int64)
    names = [pm.candidate_ids[c] for c in ctx]
    return pd.DataFrame(
        {
            "context_id": [pm.context_ids[c] for c in ctx],
            "i": [ids[x] for ids, x in zip(names, cyc["i"], strict=True)],
            "j": [ids[x] for ids, x in zip(names, cyc["j"], strict=True)],
            "k": [ids[x] for ids, x in zip(names, cyc["k"], strict=True)],
            "strength": np.asarray(cyc["strength"], dtype=np.float64),
        },
        columns=list(CYCLE_COLUMNS),
    )

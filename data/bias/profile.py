"""Position-bias profile tables of a judge (Shi et al. 2024, "Judging the Judges").

:func:`profile_summary` is one row: repetition stability over a judge's samples of the same
ordered pair, position consistency, preference fairness, first-position win rate and tie rate
(with intervals) and tie symmetry; :func:`profile_by_gap` the same statistics per quantile bin
of the quality gap of the pairs (human gap where humans judged, else the judge's own
Bradley–Terry gap: ``data.bias.pairs``). The statistics are ``ranking.position_profile`` and
``ranking.repetition_stability``; this module only feeds them the pair frame.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import ranking
from data.bias.pairs import JudgedPairs, frame_of, judged_pairs

__all__ = ["BY_GAP_COLUMNS", "SUMMARY_COLUMNS", "profile_by_gap", "profile_summary"]

_STATS = ("consistency", "fairness", "first_win_rate", "tie_rate")
_WITH_CI = [f"{s}{x}" for s in _STATS for x in ("", "_low", "_high")]
#: Columns of :func:`profile_summary`.
SUMMARY_COLUMNS = (
    "n_pairs",
    "n_both",
    "repetition_stability",
    "repetition_stability_low",
    "repetition_stability_high",
    *_WITH_CI,
    "tie_symmetry",
    "gap_source",
    "reasons",
)
#: Columns of :func:`profile_by_gap`.
BY_GAP_COLUMNS = ("gap_low", "gap_high", "gap", "n", "n_both", *_WITH_CI)


def _judged(ds, attribute, judge, tie_band, pairs, need_samples):
    """The prebuilt ``pairs`` (checked) or :func:`judged_pairs` built here."""
    if pairs is None:
        return judged_pairs(ds, attribute, judge, tie_band=tie_band)
    frame = frame_of(pairs)
    built = frame.attrs.get("tie_band", tie_band)
    if built != tie_band:
        raise ValueError(
            f"pairs were built with tie_band={built}, the table asks for tie_band={tie_band}: "
            "build them with judged_pairs(..., tie_band=...) of the same value"
        )
    if isinstance(pairs, JudgedPairs):
        return pairs
    if need_samples:
        raise TypeError(
            "profile_summary needs the samples behind the pair frame (repetition stability): "
            "pass pairs=judged_pairs(ds, attribute, judge), not the bare frame"
        )
    return JudgedPairs(frame, np.empty(0), np.empty(0, dtype=np.int64))


def _profile(
    ds, attribute, judge, *, n_bins, tie_band, confidence, n_boot, random_state, pairs, samples
):
    jp = _judged(ds, attribute, judge, tie_band, pairs, samples)
    df = jp.frame
    prof = ranking.position_profile(
        df["p_ab"].to_numpy(dtype=np.float64),
        df["p_ba"].to_numpy(dtype=np.float64),
        df["gap"].to_numpy(dtype=np.float64),
        n_bins=n_bins,
        tie_band=tie_band,
        confidence=confidence,
        n_boot=n_boot,
        random_state=random_state,
    )
    return jp, prof


def profile_summary(
    ds,
    attribute: str,
    judge: str,
    *,
    tie_band: float = 0.0,
    confidence: float = 0.95,
    n_boot: int = 1000,
    random_state=0,
    pairs=None,
) -> pd.DataFrame:
    """The judge's position-bias profile over all its pairs, as one row.

    Parameters
    ----------
    ds : Dataset
        A validated dataset.
    attribute, judge : str
        A pairwise judge (comparisons) and the attribute it judged.
    tie_band : float, default 0.0
        A choice is a tie when ``|p - 0.5| <= tie_band`` (or the verdict is "tie").
    confidence : float, default 0.95
        Coverage of every interval.
    n_boot : int, default 1000
        Bootstrap replicates (fairness; repetition stability over ordered pairs).
    random_state : None, int or numpy.random.Generator, default 0
        Seed of the bootstraps (0: the same table on every call).
    pairs : JudgedPairs, optional
        ``data.bias.judged_pairs(ds, attribute, judge, tie_band=tie_band)`` built once per
        judge; used as is (built here when None).

    Returns
    -------
    pandas.DataFrame
        One row, columns :data:`SUMMARY_COLUMNS`: ``n_pairs`` (pairs judged in at least one
        order with a parsed answer), ``n_both`` (in both), repetition stability (share of
        the modal decision over the samples of one ordered pair, mean over the pairs with
        >= 2 samples), position consistency, preference fairness (< 0: primacy, > 0:
        recency), first-position win rate and tie rate each with ``_low`` / ``_high``,
        ``tie_symmetry``, ``gap_source`` (see ``data.bias.pairs``) and ``reasons`` (dict:
        statistic -> why it is NaN; ``"pairs"`` when the judge has no comparison for the
        attribute).

    Raises
    ------
    DataError
        ``judge`` has no comparisons in ``ds``.
    TypeError, ValueError
        ``pairs`` is not a pair frame of the judge, or was built with another ``tie_band``.
    """
    opts = dict(tie_band=tie_band, confidence=confidence, n_boot=n_boot, random_state=random_state)
    jp, prof = _profile(ds, attribute, judge, n_bins=1, pairs=pairs, samples=True, **opts)
    rng = np.random.default_rng(random_state)
    rep = ranking.repetition_stability(
        jp.decisions, jp.groups, confidence=confidence, n_boot=n_boot, random_state=rng
    )
    reasons = {k: str(v) for k, v in prof.reasons.items() if not k.startswith("bin_")}
    if rep.reason:
        reasons["repetition_stability"] = rep.reason
    if jp.frame.attrs.get("reason"):
        reasons["pairs"] = jp.frame.attrs["reason"]
    row = {
        "n_pairs": prof.n_pairs,
        "n_both": prof.n_both,
        "repetition_stability": rep.value,
        "repetition_stability_low": rep.low,
        "repetition_stability_high": rep.high,
        **{c: float(getattr(prof, c)) for c in _WITH_CI},
        "tie_symmetry": float(prof.tie_symmetry),
        "gap_source": jp.frame.attrs.get("gap_source", ""),
        "reasons": reasons,
    }
    return pd.DataFrame([row], columns=list(SUMMARY_COLUMNS))


def profile_by_gap(
    ds,
    attribute: str,
    judge: str,
    n_bins: int = 5,
    *,
    tie_band: float = 0.0,
    confidence: float = 0.95,
    n_boot: int = 1000,
    random_state=0,
    pairs=None,
) -> pd.DataFrame:
    """The position-bias profile per quantile bin of the pairs' quality gap.

    Parameters
    ----------
    ds, attribute, judge, tie_band, confidence, n_boot, random_state
        As for :func:`profile_summary`.
    pairs : JudgedPairs or pandas.DataFrame, optional
        The prebuilt pair frame (``judged_pairs`` or ``pair_frame`` with the same
        ``tie_band``), used as is.
    n_bins : int, default 5
        Quantile bins of the finite gaps (merged where quantiles repeat, so there may be
        fewer rows).

    Returns
    -------
    pandas.DataFrame
        One row per bin, smallest gap first, columns :data:`BY_GAP_COLUMNS`: ``gap_low`` /
        ``gap_high`` (bin edges), ``gap`` (median gap in the bin), ``n`` (pairs), ``n_both``
        (judged in both orders), consistency, fairness, first-position win rate and tie rate
        with their intervals (NaN where the bin has no usable pair). ``attrs["gap_source"]``
        names the gap, ``attrs["reasons"]`` says why values are NaN. No rows when no pair
        has a finite gap.

    Raises
    ------
    DataError
        ``judge`` has no comparisons in ``ds``.
    TypeError, ValueError
        ``pairs`` is not a pair frame of the judge, or was built with another ``tie_band``.
    """
    opts = dict(tie_band=tie_band, confidence=confidence, n_boot=n_boot, random_state=random_state)
    jp, prof = _profile(ds, attribute, judge, n_bins=n_bins, pairs=pairs, samples=False, **opts)
    edges = np.asarray(prof.bin_edges, dtype=np.float64)
    k = len(prof.bin_n)
    out = {
        "gap_low": edges[:-1][:k] if k else np.empty(0),
        "gap_high": edges[1:][:k] if k else np.empty(0),
        "gap": np.asarray(prof.bin_gap, dtype=np.float64),
        "n": np.asarray(prof.bin_n, dtype=np.int64),
        "n_both": np.asarray(prof.bin_n_both, dtype=np.int64),
    }
    for c in _WITH_CI:
        out[c] = np.asarray(getattr(prof, f"bin_{c}"), dtype=np.float64)
    df = pd.DataFrame(out, columns=list(BY_GAP_COLUMNS))
    df.attrs.update(
        gap_source=jp.frame.attrs.get("gap_source", ""),
        reasons={k: str(v) for k, v in prof.reasons.items() if k.startswith("bin_")},
    )
    return df

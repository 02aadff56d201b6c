"""Services of the Judge bias page: the judges on offer and cached views of ``data.bias``.

Every table comes from the data layer (``data.bias``: pairs, profile, cycles, style,
calibration); this module only caches it per (dataset, attribute, judge, setting), keyed
like the other services (:func:`~pages.services.common.cache_data`: a dataset argument is
hashed by its token), and says in words what the tables leave undefined.

The inputs every table starts from are built once per (dataset, attribute, judge) and
cached apart — the pair frame with its samples (:func:`judged`), the transitivity layout
(:func:`cycles_pm`), the judge's P with its human reference (:func:`calibration_inputs`) —
and handed to the tables prebuilt (``pairs=`` / ``pm=`` / ``reference=``): a judge change
builds each once, a control move (gap bins, baseline, method, cycles listed) none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from data import bias as data_bias
from data.natural import natural_sorted
from data.schema import HUMAN_JUDGE_PREFIX, Dataset, is_automatic
from pages.services.common import cache_data, variant_label
from pages.services.comparisons import comparison_attributes, judge_options


@dataclass(frozen=True)
class JudgeChoice:
    """One judge on offer: ``label`` as shown, ``judge`` as in the data and, for a ratings
    judge, its ``prompt_id`` (None: a pairwise judge)."""

    label: str
    judge: str
    prompt_id: str | None = None


@cache_data(show_spinner=False, max_entries=32)
def judge_choices(ds: Dataset) -> dict[str, list[JudgeChoice]]:
    """Attribute -> the judges to offer: pairwise judges (model judges, then human
    annotators one by one), then ratings judges (automatic measures left out), marked.

    The pooled human judge of the other pages is not offered: the bias tables read one
    judge's own verdicts.
    """
    out: dict[str, list[JudgeChoice]] = {}
    for attribute in comparison_attributes(ds):
        names = [j for j in judge_options(ds, attribute) if j in _raw_judges(ds, attribute)]
        if names:
            out[attribute] = [JudgeChoice(j, j) for j in names]
    r = ds.ratings
    if len(r):
        keys = r[["attribute", "judge", "prompt_id"]].astype(str).drop_duplicates()
        keys = keys[~keys["prompt_id"].map(is_automatic)]
        for attribute in natural_sorted(keys["attribute"].unique()):
            rows = keys[keys["attribute"] == attribute]
            pairs = sorted(zip(rows["judge"], rows["prompt_id"], strict=True))
            out.setdefault(attribute, []).extend(
                JudgeChoice(f"{variant_label(j, p)} (ratings)", j, p) for j, p in pairs
            )
    return {a: out[a] for a in natural_sorted(out)}


def _raw_judges(ds: Dataset, attribute: str) -> set[str]:
    comps = ds.comparisons
    return set(comps.loc[comps["attribute"].astype(str) == attribute, "judge"].astype(str))


def is_human(judge: str) -> bool:
    return str(judge).startswith(HUMAN_JUDGE_PREFIX)


# ------------------------------------------------------------------- inputs, once per judge


@cache_data(show_spinner="Pairing the candidates…", max_entries=32)
def judged(ds: Dataset, attribute: str, judge: str) -> data_bias.JudgedPairs:
    """The pair frame of a pairwise judge with its samples (``data.bias.judged_pairs``)."""
    return data_bias.judged_pairs(ds, attribute, judge)


@cache_data(show_spinner="Pairing the candidates…", max_entries=32)
def _rating_pairs(ds: Dataset, attribute: str, judge: str, prompt_id: str) -> pd.DataFrame:
    return data_bias.rating_pairs(ds, attribute, judge, prompt_id)


def pairs(ds: Dataset, attribute: str, judge: str, prompt_id: str | None = None) -> pd.DataFrame:
    """The pair frame: verdicts (``pair_frame``) or, with a prompt, ratings (``rating_pairs``)."""
    if prompt_id is None:
        return judged(ds, attribute, judge).frame
    return _rating_pairs(ds, attribute, judge, prompt_id)


@cache_data(show_spinner=False, max_entries=32)
def cycles_pm(ds: Dataset, attribute: str, judge: str):
    """The judge's P as the transitivity tables read it (``data.bias.cycles_pmatrix``)."""
    return data_bias.cycles_pmatrix(ds, attribute, judge)


@cache_data(show_spinner=False, max_entries=32)
def calibration_inputs(ds: Dataset, attribute: str, judge: str) -> tuple:
    """The judge's P and its human reference (``data.bias.judge_inputs``), the P re-laid
    out from :func:`cycles_pm` (one average of the comparisons per judge)."""
    return data_bias.judge_inputs(ds, attribute, judge, cycles_pm=cycles_pm(ds, attribute, judge))


# ------------------------------------------------------------------------------- profile


@cache_data(show_spinner="Measuring the position-bias profile…", max_entries=32)
def profile_summary(ds: Dataset, attribute: str, judge: str) -> dict:
    """The judge's profile as one dict (``data.bias.profile_summary``'s row)."""
    jp = judged(ds, attribute, judge)
    return data_bias.profile_summary(ds, attribute, judge, pairs=jp).iloc[0].to_dict()


@cache_data(show_spinner=False, max_entries=64)
def profile_by_gap(ds: Dataset, attribute: str, judge: str, n_bins: int) -> pd.DataFrame:
    """The profile per quality-gap bin (``data.bias.profile_by_gap``)."""
    jp = judged(ds, attribute, judge)
    return data_bias.profile_by_gap(ds, attribute, judge, n_bins=n_bins, pairs=jp)


def reason(reasons, field: str, default: str) -> str:
    """Why ``field`` is undefined, from a table's ``reasons`` (a dict, or its text)."""
    if isinstance(reasons, dict):
        return str(reasons.get(field) or default)
    if isinstance(reasons, str) and reasons:
        return reasons
    return default


def finite(value) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def interval(low, high, digits: int = 3) -> str:
    """ "95% interval [low, high]" or the empty string when undefined."""
    if finite(low) and finite(high):
        return f"95% interval [{float(low):.{digits}f}, {float(high):.{digits}f}]"
    return "no interval"


def gap_trend(by_gap: pd.DataFrame, column: str = "consistency") -> str:
    """One sentence: does ``column`` rise with the gap (bias shrinking as the gap grows)?

    Compares the smallest-gap bin with the largest-gap bin; "clearly" when their intervals
    do not overlap.
    """
    rows = by_gap[by_gap[column].map(finite)]
    if len(rows) < 2:
        return "there are too few gap bins with a value to tell"
    lo, hi = rows.iloc[0], rows.iloc[-1]
    rises = hi[column] > lo[column]
    apart = hi[f"{column}_low"] > lo[f"{column}_high"] or hi[f"{column}_high"] < lo[f"{column}_low"]
    word = "clearly" if apart else "only within the noise (the intervals overlap)"
    if rises:
        return (
            f"this judge shows it {word}: {column} {lo[column]:.2f} at the smallest gaps, "
            f"{hi[column]:.2f} at the largest"
        )
    return (
        f"this judge does not show it: {column} {lo[column]:.2f} at the smallest gaps, "
        f"{hi[column]:.2f} at the largest"
    )


# -------------------------------------------------------------------------------- style


@cache_data(show_spinner="Measuring the length preference…", max_entries=32)
def length_preference(
    ds: Dataset, attribute: str, judge: str, prompt_id: str | None = None
) -> pd.DataFrame:
    """P(prefers the longer) of the judge and of the humans (``data.bias.style``); a ratings
    judge (``prompt_id``): P(rates the longer higher), from its ``rating_pairs``."""
    frame = pairs(ds, attribute, judge, prompt_id)
    return data_bias.length_preference(ds, attribute, judge, prompt_id, pairs=frame)


@cache_data(show_spinner="Fitting the style coefficients…", max_entries=32)
def style_coefficients(ds: Dataset, attribute: str, judge: str) -> tuple[pd.DataFrame, list[str]]:
    """The style coefficients (``data.bias.style_coefficients``) and the fit's notes."""
    df = data_bias.style_coefficients(ds, attribute, judge, pairs=judged(ds, attribute, judge))
    notes = [str(n) for n in df.attrs.get("notes", ())]
    df.attrs = {}
    return df, notes


@cache_data(show_spinner="Ranking with and without style…", max_entries=32)
def style_ranking(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    return data_bias.style_ranking(ds, attribute, judge, pairs=judged(ds, attribute, judge))


def systems(ds: Dataset, attribute: str, judge: str) -> list[str]:
    """The ranked systems, in natural order (M2 before M10)."""
    return natural_sorted(style_ranking(ds, attribute, judge)["system"].astype(str))


def median_system(ds: Dataset, attribute: str, judge: str) -> str | None:
    """The system in the middle of the plain ranking (the default baseline)."""
    table = style_ranking(ds, attribute, judge).sort_values("rank_plain", kind="stable")
    return str(table["system"].iloc[(len(table) - 1) // 2]) if len(table) else None


@cache_data(show_spinner="Controlling the win rates for length…", max_entries=64)
def length_controlled_win_rate(ds: Dataset, attribute: str, judge: str, baseline: str):
    jp = judged(ds, attribute, judge)
    return data_bias.length_controlled_win_rate(ds, attribute, judge, baseline, pairs=jp)


# ------------------------------------------------------------------------------- cycles


@cache_data(show_spinner="Counting circular triads…", max_entries=32)
def cycles_summary(ds: Dataset, attribute: str, judge: str) -> tuple[pd.DataFrame, dict]:
    """Per context (``data.bias.cycles_summary``) and pooled: ``total_circular``,
    ``total_triads``, ``circular_share``, ``bt_disagreement``, ``reasons``."""
    df = data_bias.cycles_summary(ds, attribute, judge, pm=cycles_pm(ds, attribute, judge))
    pooled = {"total_circular": 0, "total_triads": 0, "bt_disagreement": math.nan}
    pooled.update(df.attrs)
    df.attrs = {}
    return df, pooled


@cache_data(show_spinner=False, max_entries=32)
def worst_cycles(ds: Dataset, attribute: str, judge: str, n: int = 20) -> pd.DataFrame:
    return data_bias.worst_cycles(ds, attribute, judge, n=n, pm=cycles_pm(ds, attribute, judge))


# -------------------------------------------------------------------------- calibration


@cache_data(show_spinner="Calibrating…", max_entries=32)
def calibration_table(ds: Dataset, attribute: str, judge: str) -> pd.DataFrame:
    pm, reference = calibration_inputs(ds, attribute, judge)
    return data_bias.calibration_table(ds, attribute, judge, pm=pm, reference=reference)


@cache_data(show_spinner=False, max_entries=64)
def reliability_frame(ds: Dataset, attribute: str, judge: str, method: str) -> pd.DataFrame:
    pm, reference = calibration_inputs(ds, attribute, judge)
    return data_bias.reliability_frame(ds, attribute, judge, method, pm=pm, reference=reference)


# ------------------------------------------------------------------------ ratings judges


@cache_data(show_spinner=False, max_entries=32)
def rating_summary(ds: Dataset, attribute: str, judge: str, prompt_id: str) -> dict:
    """A ratings judge's repetition stability and tie rate, means over its candidate pairs
    (``data.bias.rating_pairs``: per pair, the share of sample pairs giving the modal order,
    and the share giving both candidates the same score)."""
    frame = pairs(ds, attribute, judge, prompt_id)
    return {
        "repetition_stability": float(frame["stable_ab"].mean()),
        "n_stable": int(frame["stable_ab"].notna().sum()),
        "tie_rate": float(frame["tie_ab"].mean()),
        "n_tie": int(frame["tie_ab"].notna().sum()),
    }

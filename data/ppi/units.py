"""The units PPI works on: one row per judged unit with the human value beside the judge's.

A unit is what one human label buys: an item (a candidate in a context) for a system's mean
score; a context in which the system and the baseline were both rated, or a comparison of the
two, for a win rate; one comparison for Bradley–Terry scores. ``label_id`` names what a human
labels at once: a context for rated items (an annotator scores every candidate of the
context), the comparison itself for verdicts. Subsampling "the human labels" draws label ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from data.agreement.reference import aligned_scores
from data.agreement.verdicts import verdict_labels
from data.natural import natural_sorted
from data.schema import HUMAN_JUDGE_PREFIX, VERDICT_P_FIRST, DataError, Dataset

#: What can be estimated, by the kind of judge output: quantity -> label.
QUANTITIES = {
    "mean": "system mean score",
    "win_rate": "win rate against a baseline system",
    "bradley_terry": "Bradley–Terry score",
}
#: Quantities per kind of judge output.
KIND_QUANTITIES = {"ratings": ("mean", "win_rate"), "verdicts": ("win_rate", "bradley_terry")}
#: Columns of :attr:`PPIUnits.frame`.
UNIT_COLUMNS = ["label_id", "system", "opponent", "human", "judge"]


@dataclass(frozen=True)
class PPIUnits:
    """Units with a human value (NaN: never labelled) and the judge's value.

    Attributes
    ----------
    frame : pandas.DataFrame
        :data:`UNIT_COLUMNS`: label id, system (the first system of a comparison), opponent
        (the baseline, or the second system; None for a mean), human, judge. For win rates
        and comparisons the values are outcomes in [0, 1] from the system's side (1: the
        system wins, 0.5: a tie).
    quantity : str
        One of :data:`QUANTITIES`.
    kind : str
        "ratings" or "verdicts".
    baseline : str or None
        The baseline system of a win rate.
    systems : list of str
        The systems estimated, in natural order.
    notes : list of str
        What was left out and why.
    """

    frame: pd.DataFrame
    quantity: str
    kind: str
    baseline: str | None = None
    systems: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def n_labels(self) -> int:
        """Human labels we have: distinct label ids with a human value."""
        return int(self.frame.loc[self.frame["human"].notna(), "label_id"].nunique())


def ppi_judges(ds: Dataset, attribute: str) -> pd.DataFrame:
    """The judges PPI can use on ``attribute``: columns kind, judge, prompt_id.

    Ratings judges (and automatic measures) need human scores of the attribute; verdict
    judges need human verdicts (judges named ``human:...``) on the same comparisons.
    """
    rows = []
    hs = ds.human_scores
    if len(ds.ratings) and len(hs) and (hs["attribute"].astype(str) == attribute).any():
        r = ds.ratings[ds.ratings["attribute"].astype(str) == attribute]
        pairs = r[["judge", "prompt_id"]].astype(str).drop_duplicates()
        rows += [("ratings", j, p) for j, p in zip(pairs["judge"], pairs["prompt_id"], strict=True)]
    c = ds.comparisons
    if len(c):
        c = c[c["attribute"].astype(str) == attribute]
        names = c["judge"].astype(str)
        human = names.str.startswith(HUMAN_JUDGE_PREFIX)
        if human.any():
            rows += [("verdicts", j, None) for j in natural_sorted(names[~human].unique())]
    return pd.DataFrame(rows, columns=["kind", "judge", "prompt_id"])


def _outcome(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1 where a > b, 0.5 where equal, 0 where below; NaN where either is NaN."""
    out = np.where(a > b, 1.0, np.where(a < b, 0.0, 0.5))
    out[~(np.isfinite(a) & np.isfinite(b))] = np.nan
    return out


def _rating_units(ds, attribute, judge, prompt_id, quantity, baseline, annotators, notes):
    al = aligned_scores(ds, judge, prompt_id, attribute, annotators)
    if al["system"].isna().all():
        raise DataError(
            f"{ds.name}: the candidates carry no system, so there is nothing to estimate per system"
        )
    unparsed = int(al["score"].isna().sum())
    if unparsed:
        notes.append(f"{unparsed} item(s) with no parsed judge score left out")
    al = al[al["score"].notna() & al["system"].notna()]
    al = al.assign(system=al["system"].astype(str), label_id=al["context_id"].astype(str))
    if quantity == "mean":
        f = al[["label_id", "system"]].assign(opponent=None, human=al["human"], judge=al["score"])
        return f.reset_index(drop=True)[UNIT_COLUMNS]
    wide_h = al.pivot_table(index="label_id", columns="system", values="human", aggfunc="mean")
    wide_j = al.pivot_table(index="label_id", columns="system", values="score", aggfunc="mean")
    if baseline not in wide_j.columns:
        raise DataError(
            f"{ds.name}: the baseline system {baseline!r} has no rated item of {attribute!r}"
        )
    parts = []
    for s in wide_j.columns:
        if s == baseline:
            continue
        h = _outcome(wide_h[s].to_numpy(float), wide_h[baseline].to_numpy(float))
        j = _outcome(wide_j[s].to_numpy(float), wide_j[baseline].to_numpy(float))
        ok = np.isfinite(j)
        parts.append(
            pd.DataFrame(
                {
                    "label_id": wide_j.index[ok],
                    "system": s,
                    "opponent": baseline,
                    "human": h[ok],
                    "judge": j[ok],
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=UNIT_COLUMNS)


def _verdict_units(ds, attribute, judge, quantity, baseline, notes):
    c = ds.comparisons
    c = c[c["attribute"].astype(str) == attribute]
    keys = ["context_id", "first_id", "second_id"]
    p = pd.Series(verdict_labels(c), index=c.index).map(VERDICT_P_FIRST).astype(float)
    c = c[keys + ["judge"]].astype(str).assign(p=p)
    human = c[c["judge"].str.startswith(HUMAN_JUDGE_PREFIX)].groupby(keys)["p"].mean()
    mine = c[c["judge"] == judge]
    if not len(mine):
        raise DataError(f"{ds.name}: judge {judge!r} has no comparison of {attribute!r}")
    unparsed = int(mine["p"].isna().sum())
    if unparsed:
        notes.append(f"{unparsed} comparison(s) the judge did not answer (unparsed) left out")
    j = mine.dropna(subset=["p"]).groupby(keys)["p"].mean()
    f = j.rename("judge").to_frame().join(human.rename("human"), how="left").reset_index()
    sysmap = ds.candidates.astype({"context_id": str, "candidate_id": str})
    if "system" not in sysmap.columns or sysmap["system"].isna().all():
        raise DataError(
            f"{ds.name}: the candidates carry no system, so there is nothing to estimate per system"
        )
    sysmap = sysmap.set_index(["context_id", "candidate_id"])["system"].astype(str)
    f["system"] = sysmap.reindex(pd.MultiIndex.from_frame(f[["context_id", "first_id"]])).to_numpy()
    f["opponent"] = sysmap.reindex(
        pd.MultiIndex.from_frame(f[["context_id", "second_id"]])
    ).to_numpy()
    f = f[f["system"].notna() & f["opponent"].notna() & (f["system"] != f["opponent"])]
    f["label_id"] = f["context_id"] + "|" + f["first_id"] + "|" + f["second_id"]
    if quantity == "win_rate":
        if baseline not in set(f["system"]) | set(f["opponent"]):
            raise DataError(
                f"{ds.name}: the baseline system {baseline!r} is in no comparison of {judge!r}"
            )
        a = f[f["opponent"] == baseline]
        b = f[f["system"] == baseline]
        b = b.assign(
            system=b["opponent"], opponent=baseline, human=1 - b["human"], judge=1 - b["judge"]
        )
        f = pd.concat([a, b], ignore_index=True)
    return f.reset_index(drop=True)[UNIT_COLUMNS]


def ppi_units(
    ds: Dataset,
    attribute: str,
    judge: str,
    prompt_id: str | None = None,
    *,
    quantity: str = "mean",
    baseline: str | None = None,
    annotators=None,
) -> PPIUnits:
    """The units of one judge for one quantity, with the human value beside the judge's.

    Parameters
    ----------
    ds : Dataset
        The dataset.
    attribute : str
        The attribute (criterion).
    judge, prompt_id : str
        A ratings judge (with its prompt id; automatic measures too), or a verdict judge of
        the comparisons (``prompt_id`` None).
    quantity : str
        "mean" (ratings), "win_rate" (both; needs ``baseline``) or "bradley_terry"
        (verdicts).
    baseline : str, optional
        The baseline system of a win rate.
    annotators : iterable of str, optional
        The reference annotators of ratings (default: every annotator).

    Returns
    -------
    PPIUnits

    Raises
    ------
    DataError
        No such judge, no human values, a quantity the judge's output does not support, a
        missing baseline.
    """
    if quantity not in QUANTITIES:
        raise DataError(f"quantity must be one of {list(QUANTITIES)}; got {quantity!r}")
    notes: list[str] = []
    kind = "verdicts" if prompt_id is None else "ratings"
    if quantity not in KIND_QUANTITIES[kind]:
        raise DataError(
            f"{QUANTITIES[quantity]} needs a judge of the other kind: {kind} judges give "
            + ", ".join(QUANTITIES[q] for q in KIND_QUANTITIES[kind])
        )
    if quantity == "win_rate" and baseline is None:
        raise DataError("a win rate needs a baseline system")
    if kind == "ratings":
        frame = _rating_units(
            ds, attribute, judge, prompt_id, quantity, baseline, annotators, notes
        )
    else:
        frame = _verdict_units(ds, attribute, judge, quantity, baseline, notes)
    if not frame["human"].notna().any():
        raise DataError(f"{ds.name}: no unit of {judge!r} on {attribute!r} has a human value")
    systems = set(frame["system"])
    if quantity == "bradley_terry":
        systems |= set(frame["opponent"])
    return PPIUnits(frame, quantity, kind, baseline, natural_sorted(systems), notes)
